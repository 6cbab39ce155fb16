"""`sandbox:`: where the file, shell, code and terminal tools run.

    sandbox:
      type: auto            # auto | bwrap | none (Omnigent's `linux_bwrap` means bwrap)
      write_paths: [build]  # writable besides the workspace (relative to the agent's folder)
      allow_network: true   # HTTP(S) through HoloDeck's proxy, under the outbound policy
      env_passthrough: [PIP_INDEX_URL]  # variables the commands see besides the allow-list

`auto` and `bwrap` run each command in bubblewrap; `none` runs commands as the agent's own
process would, with no walls: say it only for a machine you would let the model use.
`holodeck deploy` serves such an agent only with `i_understand_this_is_unsafe: true`, and
a server refuses it as an upload.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, StringConstraints

from holodeck.spec.models.base import NonEmpty, Strict

_ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
EnvName = Annotated[str, StringConstraints(pattern=_ENV_NAME)]


def _type_alias(value: object) -> object:
    # Omnigent spells the bubblewrap sandbox `linux_bwrap`; it is the same thing here.
    return "bwrap" if value == "linux_bwrap" else value


class SandboxSettings(Strict):
    """How commands the agent's tools run are walled in."""

    type: Annotated[Literal["auto", "bwrap", "none"], BeforeValidator(_type_alias)] = Field(
        default="auto",
        description="`auto` and `bwrap` (or `linux_bwrap`): bubblewrap, refused where it "
        "cannot start; `none`: no sandbox at all.",
    )
    write_paths: list[NonEmpty] = Field(
        default_factory=list,
        description="Paths writable besides the workspace; relative ones are read from the "
        "agent's folder.",
    )
    allow_network: bool = Field(
        default=False,
        description="Network for commands, only over HTTP(S) through HoloDeck's proxy, "
        "which applies the outbound policy (`network:`) as `web_fetch` does.",
    )
    env_passthrough: list[EnvName] = Field(
        default_factory=list,
        description="Variables of HoloDeck's environment passed to commands besides the "
        "allow-list (PATH, HOME, locale, proxies, certificates).",
    )
    i_understand_this_is_unsafe: bool = Field(
        default=False,
        description="With `type: none`, lets `holodeck deploy` serve the agent: the model's "
        "commands then run unwalled on the server.",
    )
