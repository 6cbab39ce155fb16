"""`holodeck deploy --emit kubernetes` for agents with search tools: data on the pod's disk
is kept on a PersistentVolumeClaim (embedded once, not at every pod start), data in a
shared store needs no volume, and the manifests say which. Every manifest is checked
against Kubernetes' own schemas (kubernetes-validate, offline). The deploy guide's
`--emit` examples run as written."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from server_harness import REPO, agent_dir

SEARCH_TOOL = {
    "type": "vectorstore",
    "name": "docs",
    "description": "Help pages.",
    "source": "data",
}
SHARED_SESSIONS = {"store": "redis", "url": "${REDIS_URL}"}


def deploy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "holodeck", "deploy", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "REDIS_URL": "redis://sessions.invalid:6379/0"},
        cwd=REPO,
        timeout=120,
        check=False,
    )


def searching_agent(root: Path, **fields: Any) -> Path:
    agent = agent_dir(root, "Help Desk", **fields)
    (agent / "data").mkdir()
    (agent / "data" / "faq.md").write_text("# FAQ\n\nReset it from the login page.\n")
    return agent


def emitted(out: Path) -> tuple[str, dict[str, dict[str, Any]]]:
    """The manifest file's text, and its objects by kind, each valid for Kubernetes."""
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    (path,) = out.iterdir()
    text = path.read_text(encoding="utf-8")
    objects = [o for o in yaml.safe_load_all(text) if o]
    for obj in objects:  # raises on the first field the schema does not allow
        kubernetes_validate.validate(obj, kubernetes_validate.latest_version(), strict=True)
    return text, {o["kind"]: o for o in objects}


def test_search_data_on_the_pods_disk_is_kept_on_a_volume_claim(tmp_path: Path) -> None:
    agent = searching_agent(tmp_path / "agent", tools=[SEARCH_TOOL])
    out = tmp_path / "k8s"
    done = deploy(str(agent), "--emit", "kubernetes", "-o", str(out))
    assert done.returncode == 0, done.stderr
    text, kinds = emitted(out)
    assert set(kinds) == {"Deployment", "Service", "PersistentVolumeClaim"}
    claim = kinds["PersistentVolumeClaim"]
    assert claim["metadata"]["name"] == "help-desk-data"
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]
    deployment = kinds["Deployment"]["spec"]
    pod = deployment["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["state"]["persistentVolumeClaim"] == {"claimName": "help-desk-data"}
    [mount] = [m for m in pod["containers"][0]["volumeMounts"] if m["name"] == "state"]
    assert mount["mountPath"] == "/agent/.holodeck"  # vectors, cache: all under it
    assert deployment["strategy"] == {"type": "Recreate"}  # one node mounts it at a time
    assert text.startswith("# Search data of docs")
    assert "PersistentVolumeClaim help-desk-data" in text
    assert "embedded once, not at every pod start" in done.stdout


def test_search_data_in_a_shared_store_needs_no_volume(tmp_path: Path) -> None:
    shared_tool = {
        **SEARCH_TOOL,
        "database": {"provider": "postgres", "connection_string": "${KB_DATABASE_URL}"},
    }
    agent = searching_agent(tmp_path / "agent", tools=[shared_tool], memory=SHARED_SESSIONS)
    out = tmp_path / "k8s"
    done = deploy(str(agent), "--emit", "kubernetes", "-o", str(out), "--replicas", "2")
    assert done.returncode == 0, done.stderr
    text, kinds = emitted(out)
    assert set(kinds) == {"Deployment", "Service", "HorizontalPodAutoscaler"}
    volumes = {v["name"]: v for v in kinds["Deployment"]["spec"]["template"]["spec"]["volumes"]}
    assert volumes["state"] == {"name": "state", "emptyDir": {}}
    assert "# Search data lives in shared stores (docs in PostgreSQL)" in text
    assert "no volume is needed" in text


def test_several_replicas_with_search_data_on_the_pods_disk_are_refused(tmp_path: Path) -> None:
    agent = searching_agent(tmp_path / "agent", tools=[SEARCH_TOOL], memory=SHARED_SESSIONS)
    out = tmp_path / "k8s"
    done = deploy(str(agent), "--emit", "kubernetes", "-o", str(out), "--replicas", "2")
    assert done.returncode == 2
    assert "replicas 2: search tool `docs` keeps its chunks and vectors on the pod's disk" in (
        done.stderr
    )
    assert "database: {provider: postgres" in done.stderr  # what to write instead
    assert "Traceback" not in done.stderr and not out.exists()
    # one replica is fine, with the claim and without an autoscaler that would add pods
    one = deploy(str(agent), "--emit", "kubernetes", "-o", str(out))
    assert one.returncode == 0, one.stderr
    _, kinds = emitted(out)
    assert "HorizontalPodAutoscaler" not in kinds and "PersistentVolumeClaim" in kinds
    assert "no autoscaler: the search data of docs is on the pod's volume" in one.stdout


def guide_commands() -> list[str]:
    """The `holodeck deploy ... --emit` lines of the deploy guide, comments dropped."""
    text = (REPO / "docs" / "deploy.md").read_text(encoding="utf-8")
    lines = [line.split("#")[0].strip() for line in text.splitlines()]
    emitted = ("--emit kubernetes", "--emit compose")  # the dockerfile builds a wheel: slow
    return [
        line
        for line in lines
        if line.startswith("holodeck deploy") and any(e in line for e in emitted)
    ]


def test_the_deploy_guides_emit_examples_run_as_written(tmp_path: Path) -> None:
    commands = guide_commands()
    assert len(commands) >= 2
    for number, command in enumerate(commands):
        words = shlex.split(command)[2:]  # after `holodeck deploy`
        at = words.index("-o")
        words[at + 1] = str(tmp_path / str(number))
        done = deploy(*words)
        assert done.returncode == 0, f"{command}\n{done.stderr}"
        if "compose" in words:
            services = yaml.safe_load((tmp_path / str(number) / "compose.yaml").read_text())
            # the guide's comment on this line promises what the file holds
            line = next(
                raw
                for raw in (REPO / "docs" / "deploy.md").read_text().splitlines()
                if raw.startswith(command)
            )
            says_redis = re.search(r"#.*\+ Redis", line) is not None
            assert says_redis == ("redis" in services["services"]), line
