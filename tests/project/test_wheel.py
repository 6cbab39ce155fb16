"""The built wheel works on its own, on every supported Python (3.11, 3.12, 3.13).

The wheel is built once per test run. For each supported interpreter found on this
machine (on PATH, or among pyenv's installed versions), it is installed into a
fresh virtual environment (dependencies come from the package registry); that
install then creates agents, tests one offline and validates the examples. An
interpreter that is not installed is skipped, saying so.
"""

from __future__ import annotations

import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from python_envs import BIN, EXE, REPO, SUPPORTED, clean_env, run

pytestmark = pytest.mark.slow


def test_wheel_holds_templates_and_node_harness(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = next(
            archive.read(n).decode() for n in names if n.endswith(".dist-info/METADATA")
        )
    for packaged in (
        "holodeck/templates/customer-support/agent.yaml",
        "holodeck/templates/customer-support/data/products.csv",
        "holodeck/templates/conversational/agent.yaml",
        "holodeck/templates/research/data/interview-notes.txt",
        "holodeck/templates/image/research/skills/evidence-review/SKILL.md",
        "holodeck/tools/node/harness.cjs",
        "holodeck/tools/node/package.json",
        "holodeck/deploy_targets/requirements.lock",  # the image's pins
    ):
        assert packaged in names
    assert "Name: holodeck-agents" in metadata.splitlines()
    (requires,) = [line for line in metadata.splitlines() if line.startswith("Requires-Python:")]
    assert ">=3.11" in requires and "<3.14" in requires, requires
    for version in SUPPORTED:
        assert f"Classifier: Programming Language :: Python :: {version}" in metadata


@pytest.mark.parametrize("version", SUPPORTED)
def test_wheel_installs_and_works_on_each_supported_python(
    version: str, wheel_venv: Callable[[str], Path | None], tmp_path: Path
) -> None:
    venv = wheel_venv(version)
    if venv is None:
        pytest.skip(f"python{version} is not installed here (looked on PATH and in pyenv)")
    env = clean_env(tmp_path / "holodeck-home")
    python = venv / BIN / f"python{EXE}"
    holodeck = venv / BIN / f"holodeck{EXE}"

    where = run(
        [python, "-c", "import sys, holodeck; print(holodeck.__file__); print(sys.version)"],
        timeout=60,
        env=env,
        cwd=tmp_path,
    )
    assert Path(where.stdout.splitlines()[0]).resolve().is_relative_to(venv.resolve())
    assert where.stdout.splitlines()[1].startswith(version + ".")

    version_line = run([holodeck, "--version"], timeout=60, env=env, cwd=tmp_path)
    assert version_line.stdout.startswith("holodeck, version ")

    # The conversational template's offline smoke run passes: its tools really run and
    # its tool checks hold; its metrics are shown but not judged (canned answers).
    run([holodeck, "init", "x", "--template", "conversational"], timeout=120, env=env, cwd=tmp_path)
    smoke = run([holodeck, "test", "x", "--model", "test"], timeout=300, env=env, cwd=tmp_path)
    assert " 0 failed, 0 errors " in smoke.stdout and "not judged" in smoke.stdout, smoke.stdout
    # The weather example's answers come from its tools, so its offline run passes.
    shutil.copytree(REPO / "examples" / "weather", tmp_path / "weather")
    run([holodeck, "test", "weather", "--model", "test"], timeout=300, env=env, cwd=tmp_path)

    made = run(
        [holodeck, "init", "demo", "--template", "customer-support"],
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert "holodeck validate demo" in made.stdout
    assert (tmp_path / "demo" / "data" / "products.csv").is_file()
    run([holodeck, "init", "img", "--format", "image"], timeout=120, env=env, cwd=tmp_path)
    assert (tmp_path / "img" / "config.yaml").is_file()

    # with the key the templates' model needs: without it validate warns, naming it
    keyed = {**env, "OPENAI_API_KEY": "sk-set"}
    checked = run([holodeck, "validate", "demo", "img", "x"], timeout=120, env=keyed, cwd=tmp_path)
    lines = checked.stdout.splitlines()
    assert any(line.startswith("OK demo (agent.yaml: demo, 3 tools") for line in lines), lines
    assert any(line.startswith("OK img (image: img, 1 tools, 1 skills") for line in lines), lines
    assert any(line.startswith("OK x (agent.yaml: x,") for line in lines), lines
    assert "warning" not in checked.stdout + checked.stderr

    examples = [REPO / "examples" / name for name in ("weather", "research", "support-image")]
    shown = run([holodeck, "validate", *examples], timeout=120, env=env, cwd=tmp_path)
    assert shown.stdout.count("OK ") == len(examples), shown.stdout


def test_the_readme_install_takes_every_documented_flag_of_test_and_chat(
    wheel_venv: Callable[[str], Path | None], tmp_path: Path
) -> None:
    """The base install (no extras) runs each flag `holodeck test --help` and `holodeck
    chat --help` document, offline: `--trace` needs the OpenTelemetry SDK, which is in the
    base install."""
    venv = wheel_venv(SUPPORTED[0])
    if venv is None:
        pytest.skip(f"python{SUPPORTED[0]} is not installed here")
    env = clean_env(tmp_path / "holodeck-home")
    holodeck = venv / BIN / f"holodeck{EXE}"
    shutil.copytree(REPO / "examples" / "weather", tmp_path / "weather")

    def test(*flags: str, codes: tuple[int, ...] = (0,)) -> str:
        done = run([holodeck, "test", "weather", "--model", "test", *flags],
                   timeout=300, env=env, cwd=tmp_path, codes=codes)  # fmt: skip
        return done.stdout + done.stderr

    traced = test("--trace")
    assert "ModuleNotFoundError" not in traced and "├─ invoke_agent weather" in traced, traced
    for report in ("r.html", "r.json", "r.md", "r.junit.xml"):
        test("-o", report)
        assert (tmp_path / report).stat().st_size > 0
    test("--record", "c.yaml", "--tag", "recorded")
    test("--replay", "c.yaml", "--timings", "--concurrency", "2", "--rate-limit", "600")
    test("--repeat", "2", "--shard", "1/2", "-k", "Oslo", "-v", "--strict")
    compared = run([holodeck, "test", "weather", "--compare", "previous", "latest"],
                   timeout=120, env=env, cwd=tmp_path)  # fmt: skip
    assert "compared" in compared.stdout.lower() or compared.stdout.strip(), compared.stdout

    chat = run(
        [holodeck, "chat", "weather", "--model", "test", "--trace", "-v", "--max-messages", "4",
         "--session", "s.json", "--approve-all", "--allow-loopback"],
        timeout=300, env=env, cwd=tmp_path, input="What is the weather in Oslo?\n",
    )  # fmt: skip
    assert "ModuleNotFoundError" not in chat.stderr and (tmp_path / "s.json").is_file()
    assert "invoke_agent weather" in chat.stderr, chat.stderr

    # observability without a collector works on the base install; an OTLP exporter
    # without the otel extra is refused before the run, saying what to install
    spec = (tmp_path / "weather" / "agent.yaml").read_text(encoding="utf-8")
    console = spec + "observability: {enabled: true}\n"
    (tmp_path / "weather" / "agent.yaml").write_text(console, encoding="utf-8")
    assert "invoke_agent" in test()  # the console exporter's spans, on stderr
    otlp = (
        spec
        + "observability:\n  enabled: true\n  exporters: {otlp: {endpoint: http://127.0.0.1:9}}\n"
    )
    (tmp_path / "weather" / "agent.yaml").write_text(otlp, encoding="utf-8")
    refused = test(codes=(2,))
    assert "OTLP (grpc)" in refused and "holodeck-agents[otel]" in refused, refused
