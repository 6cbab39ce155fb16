"""The shipped HoloDeck's `deployment:` block: building and pushing a container image,
deploying it to a cloud, and the protocol its server spoke. Here `registry`, `platform`
and `environment` shape `holodeck deploy --build` and `--emit`, and a cloud `target`
sizes the Kubernetes manifests; the cloud itself is not deployed to, which `validate`
warns about (`deployment_warnings`) and plain `holodeck deploy` refuses."""

from __future__ import annotations

from typing import Any

from holodeck.spec.diagnostics import Collector, Severity
from holodeck.spec.yaml.document import YamlDocument

# The shipped HoloDeck's `protocol` values: each names what is served here anyway
# (REST at /v1/chat, AG-UI at /awp; MCP and A2A beside them), so each is accepted.
SERVED_PROTOCOLS = ("rest", "ag-ui", "both")
_SERVED = (
    "`holodeck deploy` serves every agent over REST (`POST /v1/chat`, OpenAI's "
    "`POST /v1/chat/completions`), AG-UI (`POST /awp`), MCP (`/mcp`) and A2A at once"
)

CLOUD_TARGET = (
    "`target` names a cloud ({provider}) that `holodeck deploy` does not deploy to; the "
    "agent does the same wherever it runs. Its cpu, memory and replica counts size "
    "`holodeck deploy --emit kubernetes -o DIR`; build the image with `holodeck deploy "
    "--build --push REGISTRY` and run it on the cloud's container service"
)
# accepted from the shipped HoloDeck, with no effect here: a warning says why
NO_EFFECT = {
    ("runtime",): "`runtime: container` has no effect: `holodeck deploy --build` always "
    "builds a container image; remove it",
    ("registry", "credentials_env_prefix"): "`credentials_env_prefix` has no effect: "
    "`--push` uses the container tool's own login (`podman login REGISTRY`); remove it",
}


def deployment_warnings(
    data: Any, doc: YamlDocument, collector: Collector, *, strict: bool = False
) -> None:
    """Warn, at their lines, about the keys of a `deployment:` block that deploy nothing
    here: a cloud `target`, and the keys of `NO_EFFECT` (errors with `strict`)."""
    block = data.get("deployment") if isinstance(data, dict) else None
    if not isinstance(block, dict):
        return
    severity = Severity.ERROR if strict else Severity.WARNING
    target = block.get("target")
    if isinstance(target, dict):
        provider = target.get("provider", "?")
        message = CLOUD_TARGET.format(provider=provider)
        collector.add(doc.diagnostic(("deployment", "target"), message, severity=severity))
    for path, why in NO_EFFECT.items():
        node: Any = block
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if node is not None:
            where = ("deployment", *path)
            message = why if strict else f"ignored: {why}"
            collector.add(doc.diagnostic(where, message, severity=severity))


def refuse_container_deployment(data: Any) -> Any:
    """`protocol: rest`, `ag-ui` or `both` says what happens here anyway, and the keys of
    `NO_EFFECT` do nothing: they are dropped. Another protocol, or a health check path
    other than the server's `/health`, is refused."""
    if not isinstance(data, dict):
        return data
    data = dict(data)
    if data.get("protocol") in SERVED_PROTOCOLS:
        del data["protocol"]
    if data.get("runtime") == "container":
        del data["runtime"]
    registry = data.get("registry")
    if isinstance(registry, dict) and "credentials_env_prefix" in registry:
        data["registry"] = {k: v for k, v in registry.items() if k != "credentials_env_prefix"}
    if data.get("health_check_path") == "/health":
        del data["health_check_path"]
    problems = []
    if "protocol" in data:
        shown = data["protocol"] if isinstance(data["protocol"], str) else "that value"
        problems.append(
            f"`protocol: {shown}` is not a protocol the shipped HoloDeck knew (`rest`, "
            f"`ag-ui` or `both`); {_SERVED}: remove it"
        )
    if "health_check_path" in data:
        problems.append(
            "`health_check_path`: the server answers its health check at `/health` (and "
            "readiness at `/ready`), which the image's HEALTHCHECK and the manifests' probes "
            "use; remove it (or write `health_check_path: /health`)"
        )
    if "runtime" in data:
        problems.append("`runtime`: `container` is the only runtime; remove it")
    if problems:
        raise ValueError(". ".join(problems))
    return data
