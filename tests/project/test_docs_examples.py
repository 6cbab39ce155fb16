"""The Python examples of the README and the runtime guide run as written, each as the
body of a coroutine (in the guide, later blocks use what earlier ones made)."""

from __future__ import annotations

import asyncio
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


def python_blocks(page: str) -> list[str]:
    text = (REPO / page).read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.M | re.S)


def test_the_runtime_guides_python_examples_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "examples").symlink_to(REPO / "examples")
    monkeypatch.chdir(tmp_path)
    blocks = python_blocks("docs/runtime.md")
    assert len(blocks) >= 3
    namespace: dict[str, Any] = {}
    for block in blocks:
        body = textwrap.indent(block, "    ")
        exec(f"async def example():\n{body}\n    return locals()\n", namespace)
        namespace.update(asyncio.run(namespace["example"]()))
    assert "weather" in capsys.readouterr().out  # the stream's events were printed
    assert (tmp_path / "sessions.db").is_file()  # the store example kept its session


def test_the_readmes_python_example_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(REPO)
    (block,) = python_blocks("README.md")
    namespace: dict[str, Any] = {}
    exec(f"async def example():\n{textwrap.indent(block, '    ')}\n", namespace)
    asyncio.run(namespace["example"]())
    assert "city Lisbon, temperature 21 °C, conditions sunny" in capsys.readouterr().out


def test_the_deploy_guides_client_example_runs_against_a_served_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from server_harness import WEATHER, served

    # the chat completions example, then the Responses API example, which reuses its client
    chat, responses = python_blocks("docs/deploy.md")
    with served(WEATHER, state_dir=tmp_path) as server:
        namespace = {"server_url": server.url}
        exec(chat, namespace)
        exec(responses, namespace)
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("get_weather:")  # the test model answers from the tools
    tools = printed.index("['get_weather', 'get_forecast']")
    assert "".join(printed[tools + 1 :]).strip(), printed  # the retrieved response's text


def test_the_security_pages_settings_load_as_written(tmp_path: Path) -> None:
    """Each YAML block of docs/security.md is a config.yaml the settings loader takes,
    with the values the page says."""
    from holodeck.config.settings import load_settings

    text = (REPO / "docs" / "security.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```yaml\n(.*?)^```$", text, flags=re.M | re.S)
    assert len(blocks) >= 2
    loaded = []
    for index, block in enumerate(blocks):
        home = tmp_path / f"home{index}"
        home.mkdir()
        (home / "config.yaml").write_text(block, encoding="utf-8")
        loaded.append(load_settings(None, {"HOLODECK_HOME": str(home)}).settings)
    lent = [s.deployment.uploads.providers for s in loaded if s.deployment is not None]
    assert ["openai"] in [list(p) for p in lent]
    networks = [s.network for s in loaded if s.network is not None]
    assert networks and any(n.deny for n in networks)


def test_the_compatibility_pages_shipped_sample_examples_load_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each `#### Example` of docs/compatibility.md is a project, one block per file
    (```yaml file=config.yaml): it loads, its front matter never reaches the model, and
    a `connection_string` it gives a Chroma store is the store's address."""
    import yaml

    from holodeck.config.loader import load_agent
    from holodeck.config.settings import load_settings
    from holodeck.spec.agent_yaml.front_matter import split_front_matter

    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-sent")
    text = (REPO / "docs" / "compatibility.md").read_text(encoding="utf-8")
    examples = re.split(r"^#### Example: ", text, flags=re.M)[1:]
    assert len(examples) >= 2
    for index, example in enumerate(examples):
        root = tmp_path / f"example{index}"
        blocks = re.findall(r"^```\w+ file=(\S+)\n(.*?)^```$", example, flags=re.M | re.S)
        assert blocks, example[:80]
        for name, body in blocks:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(body, encoding="utf-8")
        spec = load_agent(root)
        files = dict(blocks)
        instructions = files.get("instructions/system-prompt.md", "")
        front, after, _ = split_front_matter(instructions)
        if front is not None:
            assert spec.instructions == after and spec.prompt_version is not None
            assert spec.prompt_version.version == str(yaml.safe_load(front)["version"])
        if "config.yaml" in files:
            written = yaml.safe_load(files["config.yaml"]).get("vectorstores", {})
            stores = load_settings(root).settings.vectorstores
            for name, entry in written.items():
                if entry.get("provider") == "chromadb" and "connection_string" in entry:
                    assert stores[name].url == entry["connection_string"]


def test_the_testing_guides_shard_and_merge_example_runs(tmp_path: Path) -> None:
    """The shell example of docs/testing.md's "Sharded suites" runs as written (offline,
    on examples/weather): the shards' runs merge into one run of every case."""
    import json
    import os
    import subprocess
    import sys

    text = (REPO / "docs" / "testing.md").read_text(encoding="utf-8")
    blocks = [
        b
        for b in re.findall(r"^```bash\n(.*?)^```$", text, flags=re.M | re.S)
        if "holodeck test merge shard-runs/" in b
    ]
    assert len(blocks) == 1
    (tmp_path / "examples").symlink_to(REPO / "examples")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": os.pathsep.join(
            p for p in (str(REPO / "src"), os.environ.get("PYTHONPATH", "")) if p
        ),
    }
    done = subprocess.run(
        ["bash", "-e", "-c", blocks[0]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    shards = [json.loads(p.read_text()) for p in sorted((tmp_path / "shard-runs").glob("*.json"))]
    assert [s["shard"] for s in shards] == ["1/2", "2/2"]
    assert (tmp_path / "report.html").is_file()
    (merged,) = [
        json.loads(p.read_text())
        for p in (tmp_path / ".holodeck" / "runs").glob("*.json")
        if json.loads(p.read_text())["merged_from"]
    ]
    assert merged["merged_from"] == [s["run_id"] for s in shards]
    assert sorted(c["name"] for c in merged["cases"]) == sorted(
        c["name"] for s in shards for c in s["cases"]
    )
    assert merged["summary"]["total"] == 4 and merged["tags"] == ["ci"]


def test_the_testing_guides_ci_examples_split_the_suite_they_say(tmp_path: Path) -> None:
    """The GitHub Actions matrix and the Indexed Job of "Sharded suites" load as YAML, and
    their shard counts match their matrix and completions; the pod's shell line expands
    to shard 1/8 for index 0 under a POSIX shell."""
    import subprocess

    import yaml

    text = (REPO / "docs" / "testing.md").read_text(encoding="utf-8")
    section = text.split("## Sharded suites", 1)[1]
    workflow, job = (
        yaml.safe_load(b)
        for b in re.findall(r"^```yaml file=\S+\n(.*?)^```$", section, flags=re.M | re.S)
    )
    matrix = workflow["jobs"]["test"]["strategy"]["matrix"]["shard"]
    (command,) = [
        s["run"] for s in workflow["jobs"]["test"]["steps"] if "--shard" in s.get("run", "")
    ]
    assert f"--shard ${{{{ matrix.shard }}}}/{len(matrix)}" in command
    assert "holodeck test merge" in workflow["jobs"]["report"]["steps"][-1]["run"]
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    (line,) = spec["template"]["spec"]["containers"][0]["args"]
    assert f"--shard $((JOB_COMPLETION_INDEX+1))/{spec['completions']}" in line
    shard = re.search(r"--shard (\S+)", line)
    assert shard is not None
    done = subprocess.run(
        ["sh", "-c", f"echo {shard[1]}"],
        env={"JOB_COMPLETION_INDEX": "0"},
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    assert done.stdout.strip() == f"1/{spec['completions']}"
