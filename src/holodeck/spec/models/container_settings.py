"""The container part of a `deployment:` block, as the shipped HoloDeck wrote it:
`registry` names the image `holodeck deploy --build` makes, `platform` the architecture it
builds for, `environment` the plain variables the manifests set, and a cloud `target`'s
cpu, memory and replica counts size the Kubernetes manifests. The cloud itself is not
deployed to (the agent does the same wherever it runs): `validate` warns, and serving
with a `target` is refused with what to run instead."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from holodeck.spec.models.base import NonEmpty, Strict


class ImageRegistry(Strict):
    """Where the image goes: `<url>/<repository>:<tag>`."""

    url: NonEmpty = Field(description="The registry's host, e.g. ghcr.io.")
    repository: NonEmpty = Field(description="The image's path in it, e.g. org/agent.")
    tag_strategy: Literal["git_sha", "git_tag", "latest", "custom"] = Field(
        default="git_sha",
        description="The tag: the agent folder's git commit or tag, `latest`, or custom_tag.",
    )
    custom_tag: NonEmpty | None = None

    @model_validator(mode="after")
    def _custom_needs_tag(self) -> ImageRegistry:
        if self.tag_strategy == "custom" and self.custom_tag is None:
            raise ValueError("tag_strategy `custom` needs a `custom_tag`")
        return self


class CloudSizes(BaseModel):
    """A cloud's own settings: only the sizes are read; the rest names cloud resources
    that nothing here creates."""

    model_config = ConfigDict(extra="allow", frozen=True)

    cpu: float | None = Field(default=None, gt=0)
    memory: int | str | None = None
    min_replicas: int | None = Field(default=None, ge=0)
    max_replicas: int | None = Field(default=None, ge=1)
    auto_scaling_min: int | None = Field(default=None, ge=0)
    auto_scaling_max: int | None = Field(default=None, ge=1)
    min_instances: int | None = Field(default=None, ge=0)
    max_instances: int | None = Field(default=None, ge=1)


class CloudTarget(Strict):
    """The cloud the shipped HoloDeck deployed to (Azure Container Apps, AWS App Runner,
    Google Cloud Run)."""

    provider: Literal["azure", "aws", "gcp"]
    azure: CloudSizes | None = None
    aws: CloudSizes | None = None
    gcp: CloudSizes | None = None
