"""The shipped HoloDeck's `deployment:` block: building and pushing a container image,
deploying it to a cloud, and the protocol its server spoke. Here `registry`, `platform`
and `environment` shape `holodeck deploy --build` and `--emit`, and a cloud `target`
sizes the Kubernetes manifests; the cloud itself is not deployed to, which `validate`
warns about (`deployment_warnings`) and plain `holodeck deploy` refuses. The keys the
model drops or refuses as it reads the block are in `models/older_forms.py`."""

from __future__ import annotations

from typing import Any

from holodeck.spec.diagnostics import Collector, Severity
from holodeck.spec.yaml.document import YamlDocument

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
