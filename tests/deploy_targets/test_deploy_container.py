"""`holodeck deploy --build`: an image of the agent, built with the container tool on this
machine, that answers. The base image is made here (no registry of images is reachable):
Debian bookworm's python3 from mmdebstrap, imported into podman, cached per machine.
Starting the image's entrypoint uses `buildah run --isolation chroot` (it shares the host
network), because `podman run` cannot run in every sandbox."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from server_harness import REPO, free_port, until

pytestmark = pytest.mark.slow

BASE = "localhost/holodeck-test-base:bookworm"
IMAGE = "localhost/holodeck-test-agent:latest"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "holodeck-tests"
# the sandboxes this runs in allow only chroot isolation for builds and runs
CHROOT = {"BUILDAH_ISOLATION": "chroot"}


def _why_not() -> str | None:
    missing = [t for t in ("podman", "buildah", "mmdebstrap") if shutil.which(t) is None]
    if missing:
        return f"{', '.join(missing)} not installed (`make containers` installs them as root)"
    if os.geteuid() != 0:
        return "building images with podman's chroot isolation needs root"
    if sys.version_info[:2] != (3, 11):
        return "the host's wheels must fit the base image's Python 3.11 (Debian bookworm)"
    return None


def _run(*command: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **CHROOT},
        check=False,
    )
    assert done.returncode == 0, f"{' '.join(command)}: {done.stdout[-2000:]}{done.stderr[-3000:]}"
    return done


def _cleared(path: Path, *, want_dir: bool) -> Path:
    """`path`, with whatever stands there of the wrong kind removed: a cache another
    version of this test (or a person) left must not break this one."""
    wrong = path.is_file() or path.is_symlink() if want_dir else path.is_dir()
    if wrong:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    return path


@contextmanager
def _locked() -> Iterator[None]:
    """One xdist worker at a time prepares (base image, wheels, build); the others then
    find it done."""
    _cleared(CACHE, want_dir=True).mkdir(parents=True, exist_ok=True)
    with _cleared(CACHE / "containers.lock", want_dir=False).open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture(scope="module")
def base_image() -> str:
    why = _why_not()
    if why:
        pytest.skip(why)
    with _locked():
        return _base_image()


def _base_image() -> str:
    if subprocess.run(["podman", "image", "exists", BASE], check=False).returncode == 0:
        return BASE
    tarball = _cleared(CACHE / "bookworm-python3.tar", want_dir=False)
    if tarball.is_file() and not tarfile.is_tarfile(tarball):
        tarball.unlink()  # cut short by an earlier run
    if not tarball.is_file():
        partial = _cleared(tarball.with_suffix(".part"), want_dir=False)
        partial.unlink(missing_ok=True)
        _run(
            "mmdebstrap",
            "--format=tar",  # by the name alone, `.part` would make a directory
            "--variant=minbase",
            "--include=python3,python3-venv",
            "bookworm",
            str(partial),
        )
        partial.rename(tarball)
    _run("podman", "import", str(tarball), BASE)
    return BASE


@pytest.fixture(scope="module")
def wheels(base_image: str) -> Path:
    """holodeck's dependencies (with the redis extra) as wheels for Python 3.11 at the
    locked versions, built once per version of pyproject.toml and requirements.lock;
    holodeck's own wheel is left to the build, so the image has this source tree."""
    with _locked():
        return _wheels()


def _wheels() -> Path:
    inputs = (REPO / "pyproject.toml").read_bytes() + (REPO / "requirements.lock").read_bytes()
    directory = CACHE / f"wheels-py311-{hashlib.sha256(inputs).hexdigest()[:16]}"
    if not (directory / ".complete").is_file():
        for stale in CACHE.glob("wheels-py311-*"):  # an earlier pyproject.toml's
            _cleared(stale, want_dir=False).unlink(missing_ok=True)
        lock = str(REPO / "requirements.lock")
        _run(sys.executable, "-m", "pip", "wheel", "--quiet", "-c", lock, "-w", str(directory),
             f"{REPO}[redis]")  # fmt: skip
        for own in directory.glob("holodeck_agents-*.whl"):
            own.unlink()
        (directory / ".complete").touch()
    return directory


def _agent(root: Path) -> Path:
    shutil.copytree(REPO / "examples" / "weather", root)
    (root / ".env").write_text("OPENAI_API_KEY=sk-never-in-the-image\n", encoding="utf-8")
    (root / ".gitignore").write_text("notes/\n", encoding="utf-8")
    (root / "notes").mkdir()
    (root / "notes" / "draft.txt").write_text("private\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def built(base_image: str, wheels: Path) -> str:
    """The weather example's image, built once per test run (by whichever worker of the
    run comes first)."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    with _locked():
        done_by_this_run = CACHE / f"built-{run}"
        exists = subprocess.run(["podman", "image", "exists", IMAGE], check=False)
        if run and done_by_this_run.exists() and exists.returncode == 0:
            return IMAGE
        _build(base_image, wheels)
        for earlier in CACHE.glob("built-*"):
            _cleared(earlier, want_dir=False).unlink(missing_ok=True)
        if run:
            done_by_this_run.touch()
    return IMAGE


def _build(base_image: str, wheels: Path) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        agent = _agent(Path(scratch) / "weather")
        done = subprocess.run(
            [sys.executable, "-m", "holodeck", "deploy", str(agent), "--build", "--tag", IMAGE,
             "--base-image", base_image, "--wheels", str(wheels)],
            capture_output=True, text=True, env={**os.environ, **CHROOT}, timeout=1500,
            check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert f"built {IMAGE}" in done.stdout


@pytest.fixture()
def container(built: str) -> Iterator[str]:
    name = _run("buildah", "from", "--pull-never", built).stdout.strip().splitlines()[-1]
    try:
        yield name
    finally:
        subprocess.run(["buildah", "rm", name], capture_output=True, check=False)


def _config(image: str) -> dict[str, object]:
    inspected = json.loads(_run("podman", "image", "inspect", image).stdout)[0]
    config: dict[str, object] = inspected["Config"]
    # podman names it at the top level, docker inside Config
    config["Healthcheck"] = inspected.get("Healthcheck") or config.get("Healthcheck")
    return config


def test_the_image_runs_as_a_user_with_a_health_check(built: str) -> None:
    config = _config(built)
    assert config["User"] == "10001:10001"
    health = json.dumps(config["Healthcheck"])
    assert "/health" in health
    assert "sk-never-in-the-image" not in json.dumps(config)


def test_the_image_holds_the_agent_files_and_no_secret(container: str) -> None:
    listing = _run(
        "buildah", "run", container, "--", "python", "-c",
        "import os, json; print(json.dumps(sorted(os.listdir('/agent'))))",
    ).stdout  # fmt: skip
    files = json.loads(listing.strip().splitlines()[-1])
    assert "agent.yaml" in files and "tools" in files
    assert ".env" not in files and "notes" not in files


def test_the_images_entrypoint_answers_a_chat_turn(built: str, container: str) -> None:
    entrypoint = _config(built)["Entrypoint"]
    assert isinstance(entrypoint, list)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as output:
        # flags given last win: this machine's loopback address and a free port
        command = [*entrypoint, "--host", "127.0.0.1", "--port", str(port), "--model", "test"]
        process = subprocess.Popen(
            ["buildah", "run", container, "--", *command],
            stdout=output, stderr=subprocess.STDOUT, env={**os.environ, **CHROOT},
            start_new_session=True,
        )  # fmt: skip

        def health() -> bool:
            if process.poll() is not None:
                output.seek(0)
                raise AssertionError(f"the image's server exited: {output.read().decode()}")
            try:
                return httpx.get(f"{url}/health", timeout=2).status_code == 200
            except httpx.TransportError:
                return False

        try:
            until(health, timeout=120, what="the image's server to answer /health")
            answer = httpx.post(f"{url}/v1/chat", json={"message": "Weather in Oslo?"}, timeout=60)
            assert answer.status_code == 200, answer.text
            body = answer.json()
            assert body["agent"] == "weather" and body["response"]
        finally:
            os.killpg(process.pid, signal.SIGTERM)  # buildah and the server it started
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def _compose_tool() -> list[str] | None:
    for candidate in (["docker", "compose"], ["podman", "compose"], ["podman-compose"]):
        if shutil.which(candidate[0]) is None:
            continue
        probe = subprocess.run([*candidate, "version"], capture_output=True, check=False)
        if probe.returncode == 0:
            return candidate
    return None


def test_the_compose_example_runs_the_agent_with_redis(
    base_image: str, wheels: Path, built: str, tmp_path: Path
) -> None:
    """docs/deploy.md's `--emit compose` example, up: two turns of one session through
    the agent's Redis. Needs a runtime that starts containers and a registry for Redis."""
    compose = _compose_tool()
    if compose is None:
        pytest.skip("no compose tool here (docker compose, podman compose or podman-compose)")
    probe = subprocess.run(["podman", "run", "--rm", built, "--help"], capture_output=True,
                           text=True, check=False, timeout=120)  # fmt: skip
    if probe.returncode != 0:
        pytest.skip(f"`podman run` cannot start containers here: {probe.stderr.strip()[-300:]}")
    port = free_port()
    agent = _agent(tmp_path / "weather")
    spec = (agent / "agent.yaml").read_text(encoding="utf-8")
    spec += f"memory: {{store: redis, url: '${{REDIS_URL}}'}}\ndeployment: {{port: {port}}}\n"
    (agent / "agent.yaml").write_text(spec, encoding="utf-8")
    image = "localhost/holodeck-test-compose:latest"
    for step in (
        ["--build", "--tag", image, "--base-image", base_image, "--wheels", str(wheels)],
        ["--emit", "compose", "-o", str(tmp_path / "compose"), "--tag", image, "--model", "test"],
    ):
        _run(sys.executable, "-m", "holodeck", "deploy", str(agent), *step, timeout=1500)
    file = str(tmp_path / "compose" / "compose.yaml")
    env = {**os.environ, "OPENAI_API_KEY": "unused-by-the-test-model"}
    up = subprocess.run([*compose, "-f", file, "up", "-d"], capture_output=True, text=True,
                        env=env, check=False, timeout=600)  # fmt: skip
    try:
        assert up.returncode == 0, up.stderr[-3000:]
        url = f"http://127.0.0.1:{port}"

        def ready() -> bool:
            try:
                return httpx.get(f"{url}/ready", timeout=2).status_code == 200
            except httpx.TransportError:
                return False

        until(ready, timeout=180, what="the composed agent to be ready")
        first = httpx.post(f"{url}/v1/chat", json={"message": "Oslo?"}, timeout=60).json()
        again = {"message": "And Bergen?", "session_id": first["session_id"]}
        assert httpx.post(f"{url}/v1/chat", json=again, timeout=60).status_code == 200
        history = httpx.get(f"{url}/v1/sessions/{first['session_id']}", timeout=10).json()
        assert len(history["messages"]) >= 4  # both turns, kept in Redis
    finally:
        subprocess.run([*compose, "-f", file, "down", "-v"], capture_output=True, env=env,
                       check=False, timeout=300)  # fmt: skip
