"""Kubernetes and Compose manifests that run an agent's image. Variables the agent reads
come from a Secret (Kubernetes) or the shell that starts Compose: referenced by name,
never filled in. Several replicas need a session store they all share, and search data
in a shared store; search data on the pod's disk gets a volume claim (`data_on_disk.py`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from holodeck.deploy_targets.build_context import AGENT_DIR, USER_ID
from holodeck.deploy_targets.data_on_disk import SearchData, search_data
from holodeck.errors import ConfigurationError
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.container_settings import CloudSizes

SHARED_STORES = ("redis", "postgres")
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}")
_REDIS_IMAGE = "redis:7"  # a Compose user's machine pulls it; nothing here does
DATA_SIZE = "1Gi"  # the search data's volume claim: a start; its comment says to resize


@dataclass(frozen=True)
class Resources:
    """A container's requests and limits, in Kubernetes quantities."""

    cpu_request: str = "250m"
    memory_request: str = "512Mi"
    cpu_limit: str = "1"
    memory_limit: str = "1Gi"


@dataclass(frozen=True)
class Shape:
    """How many run, what each gets, and the variables the container's environment
    provides (name -> required; `environment` holds plain values to set)."""

    image: str
    port: int
    replicas: int = 1
    max_replicas: int | None = None
    resources: Resources = field(default_factory=Resources)
    variables: dict[str, bool] = field(default_factory=dict)
    environment: dict[str, str] = field(default_factory=dict)
    args: list[str] = field(default_factory=list)


class _Plain(yaml.SafeDumper):
    """No `&id001` anchors: each manifest reads whole, as a person would write it."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def to_yaml(documents: list[dict[str, Any]], comment: str | None = None) -> str:
    """The documents, after `comment` (one `#` line per line of it) when given."""
    head = "".join(f"# {line}\n" for line in comment.splitlines()) if comment else ""
    return head + yaml.dump_all(documents, Dumper=_Plain, sort_keys=False)


def sized(spec: AgentSpec, shape: Shape, replicas: int | None) -> Shape:
    """`shape` with the `deployment:` block's environment, and the sizes of its cloud
    `target` (cpu, memory, replicas) where it gives them; --replicas wins."""
    block = spec.deployment
    if block is None:
        return replace(shape, replicas=replicas or 1)
    resources, fewest, most = shape.resources, None, None
    if block.target is not None:
        target = block.target
        sizes = {"azure": target.azure, "aws": target.aws, "gcp": target.gcp}[target.provider]
        if sizes is not None:
            fewest, most, resources = _cloud_sizes(sizes, resources)
    count = replicas or max(fewest or 1, 1)
    return replace(
        shape,
        replicas=count,
        max_replicas=max(most, count) if most is not None else None,
        resources=resources,
        environment=dict(block.environment),
    )


def _cloud_sizes(
    sizes: CloudSizes, resources: Resources
) -> tuple[int | None, int | None, Resources]:
    """(fewest, most) replicas and the resources a cloud's block gives: each cloud has
    its own names for them (AWS wrote memory in megabytes, as a number)."""
    fewest = _first(sizes.min_replicas, sizes.auto_scaling_min, sizes.min_instances)
    most = _first(sizes.max_replicas, sizes.auto_scaling_max, sizes.max_instances)
    if sizes.cpu is not None:
        resources = replace(resources, cpu_limit=f"{sizes.cpu:g}", cpu_request=f"{sizes.cpu:g}")
    if sizes.memory is not None:
        memory = f"{sizes.memory}Mi" if isinstance(sizes.memory, int) else sizes.memory
        resources = replace(resources, memory_limit=memory, memory_request=memory)
    return fewest, most, resources


def _first(*values: int | None) -> int | None:
    return next((v for v in values if v is not None), None)


def resource_name(name: str) -> str:
    """A Kubernetes object name (RFC 1123 label) for an agent's name."""
    cleaned = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")[:63].strip("-")
    return cleaned or "agent"


def check_replicas(spec: AgentSpec, replicas: int, where: str) -> None:
    """Several replicas with sessions in one process or on one machine's disk: refused,
    as `--workers` refuses them (a conversation would continue on a pod without it)."""
    if replicas > 1 and spec.memory.store not in SHARED_STORES:
        raise ConfigurationError(
            f"{where} {replicas}: {spec.name} keeps sessions in {spec.memory.store}, so each "
            "replica would have its own and a conversation could not continue on another",
            hint="set `memory: {store: redis, url: ${REDIS_URL}}` (or postgres) so the "
            "replicas share sessions, or run one replica",
        )


def check_search_replicas(data: SearchData, replicas: int, where: str) -> None:
    """Several replicas with search data on the pod's disk: refused. A volume claim is
    mounted by one node at a time, and without one each pod embeds its sources again
    at every start."""
    if replicas > 1 and data.local:
        tools = ", ".join(f"`{t}`" for t in data.local)
        raise ConfigurationError(
            f"{where} {replicas}: search tool {tools} keeps its chunks and vectors on the "
            "pod's disk (the embedded store), which replicas cannot share",
            hint="give the tool a shared store, e.g. `database: {provider: postgres, "
            "connection_string: ${KB_DATABASE_URL}}` (or redis, or a qdrant or chromadb "
            "url), or run one replica",
        )


def kubernetes(spec: AgentSpec, shape: Shape) -> list[dict[str, Any]]:
    """Deployment, Service, a PersistentVolumeClaim for search data on the pod's disk,
    and (with shared stores) a HorizontalPodAutoscaler."""
    most = max(shape.replicas, shape.max_replicas or 1)
    check_replicas(spec, most, "replicas")
    data = search_data(spec)
    check_search_replicas(data, most, "replicas")
    name = resource_name(spec.name)
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "holodeck"}
    claim = f"{name}-data" if data.local else None
    objects = [_deployment(name, labels, shape, claim), _service(name, labels, shape.port)]
    if claim is not None:
        objects.append(_claim(claim, labels))
    if spec.memory.store in SHARED_STORES and not data.local:
        objects.append(_autoscaler(name, labels, shape))
    return objects


def kubernetes_comment(spec: AgentSpec) -> str | None:
    """Where the agent's search data lives, for the manifests' reader; None without any."""
    data = search_data(spec)
    if data.local:
        return (
            f"Search data of {', '.join(data.local)} (chunks, vectors, the embedding cache)\n"
            f"is kept on the PersistentVolumeClaim {resource_name(spec.name)}-data below, "
            "so the sources\nare embedded once, not at every pod start. "
            f"{DATA_SIZE} is a start: size it to the sources."
        )
    if data.shared:
        where = ", ".join(f"{tool} in {store}" for tool, store in data.shared)
        return (
            f"Search data lives in shared stores ({where}):\nthe pods keep none of it, "
            "so no volume is needed; the emptyDir holds caches only."
        )
    return None


def scaling_note(spec: AgentSpec) -> str | None:
    """Why the manifests hold no autoscaler, when they hold none."""
    if spec.memory.store not in SHARED_STORES:
        return (
            f"no autoscaler: sessions are in {spec.memory.store}, so one replica runs; "
            "set `memory.store: redis` (or postgres) to scale"
        )
    local = search_data(spec).local
    if local:
        return (
            f"no autoscaler: the search data of {', '.join(local)} is on the pod's volume, "
            "so one replica runs; give those tools a shared `database` to scale"
        )
    return None


def secret_name(spec: AgentSpec) -> str:
    return f"{resource_name(spec.name)}-env"


def _env(shape: Shape, secret: str) -> list[dict[str, Any]]:
    """Secret references first, then the plain values: Kubernetes expands `$(NAME)` in a
    value from the variables defined before it, which is what `${NAME}` becomes."""
    env: list[dict[str, Any]] = []
    for variable, required in shape.variables.items():
        if variable in shape.environment:
            continue
        reference = {"name": secret, "key": variable, "optional": not required}
        env.append({"name": variable, "valueFrom": {"secretKeyRef": reference}})
    for key, value in sorted(shape.environment.items()):
        env.append({"name": key, "value": _REFERENCE.sub(r"$(\1)", value)})
    return env


def _deployment(
    name: str, labels: dict[str, str], shape: Shape, claim: str | None
) -> dict[str, Any]:
    """`claim`: the volume claim that keeps `.holodeck/` (search data, caches, sessions
    on disk) across restarts; None: an emptyDir, lost with the pod."""
    probe = {"httpGet": {"path": "/health", "port": "http"}}
    r = shape.resources
    container: dict[str, Any] = {
        "name": "agent",
        "image": shape.image,
        "imagePullPolicy": "IfNotPresent",
        "ports": [{"name": "http", "containerPort": shape.port, "protocol": "TCP"}],
        "env": _env(shape, f"{name}-env"),
        # started while a model server or MCP server is still coming up: not ready yet
        "readinessProbe": {
            "httpGet": {"path": "/ready", "port": "http"},
            "periodSeconds": 5,
            "failureThreshold": 3,
        },
        "livenessProbe": {**probe, "periodSeconds": 20, "failureThreshold": 3},
        "startupProbe": {**probe, "periodSeconds": 2, "failureThreshold": 60},
        "resources": {
            "requests": {"cpu": r.cpu_request, "memory": r.memory_request},
            "limits": {"cpu": r.cpu_limit, "memory": r.memory_limit},
        },
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        # what the agent writes (sessions, caches, temporary files) lives in these
        "volumeMounts": [
            {"name": "state", "mountPath": f"{AGENT_DIR}/.holodeck"},
            {"name": "tmp", "mountPath": "/tmp"},
        ],
    }
    if shape.args:
        container["args"] = list(shape.args)
    if not container["env"]:
        del container["env"]
    state: dict[str, Any] = {"emptyDir": {}}
    spec: dict[str, Any] = {"replicas": shape.replicas, "selector": {"matchLabels": labels}}
    if claim is not None:
        state = {"persistentVolumeClaim": {"claimName": claim}}
        # the claim is mounted by one node at a time: the old pod goes before the new one
        spec["strategy"] = {"type": "Recreate"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            **spec,
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": USER_ID,
                        "runAsGroup": USER_ID,
                        "fsGroup": USER_ID,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "automountServiceAccountToken": False,
                    # SIGTERM lets turns in progress finish (deployment.shutdown_grace_seconds)
                    "terminationGracePeriodSeconds": 45,
                    "containers": [container],
                    "volumes": [
                        {"name": "state", **state},
                        {"name": "tmp", "emptyDir": {}},
                    ],
                },
            },
        },
    }


def _claim(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": DATA_SIZE}},
        },
    }


def _service(name: str, labels: dict[str, str], port: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "type": "ClusterIP",
            "selector": labels,
            "ports": [{"name": "http", "port": port, "targetPort": "http", "protocol": "TCP"}],
        },
    }


def _autoscaler(name: str, labels: dict[str, str], shape: Shape) -> dict[str, Any]:
    most = shape.max_replicas or max(shape.replicas, 5)
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicas": shape.replicas,
            "maxReplicas": max(most, shape.replicas),
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 70},
                    },
                }
            ],
        },
    }


def compose(spec: AgentSpec, shape: Shape) -> dict[str, Any]:
    """The agent, and a Redis for its sessions when its store is redis. Each variable is
    taken from the shell (or .env) that runs `docker compose up`."""
    environment: dict[str, str] = dict(sorted(shape.environment.items()))
    store_variable = _store_variable(spec)
    for variable, required in shape.variables.items():
        if variable in environment:
            continue
        if variable == store_variable and spec.memory.store == "redis":
            environment[variable] = f"${{{variable}:-redis://redis:6379/0}}"
        elif required:
            environment[variable] = f"${{{variable}:?set {variable} for {spec.name}}}"
        else:
            environment[variable] = f"${{{variable}:-}}"
    agent: dict[str, Any] = {
        "image": shape.image,
        # loopback only: put a proxy with TLS in front before publishing it wider
        "ports": [f"127.0.0.1:{shape.port}:{shape.port}"],
        "restart": "unless-stopped",
        "read_only": True,
        "tmpfs": ["/tmp", f"{AGENT_DIR}/.holodeck"],
    }
    if environment:
        agent["environment"] = environment
    if shape.args:
        agent["command"] = list(shape.args)
    services: dict[str, Any] = {"agent": agent}
    if spec.memory.store == "redis":
        agent["depends_on"] = {"redis": {"condition": "service_healthy"}}
        services["redis"] = {
            "image": _REDIS_IMAGE,
            "restart": "unless-stopped",
            "healthcheck": {
                "test": ["CMD", "redis-cli", "ping"],
                "interval": "5s",
                "timeout": "3s",
                "retries": 10,
            },
        }
    return {"name": resource_name(spec.name), "services": services}


def _store_variable(spec: AgentSpec) -> str | None:
    """The variable the store's url is, when it is written as just `${NAME}`."""
    if spec.memory.url is None:
        return None
    match = re.fullmatch(
        r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}", spec.memory.url.get_secret_value()
    )
    return match.group(1) if match else None
