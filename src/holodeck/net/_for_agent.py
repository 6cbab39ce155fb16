"""The policy an agent's steerable requests go through."""

from __future__ import annotations

import os

from holodeck.config.settings import load_settings
from holodeck.net._policy import OutboundPolicy
from holodeck.spec.models.agent_spec import AgentSpec


def policy_for(spec: AgentSpec, *, uploaded: bool, allow_loopback: bool = False) -> OutboundPolicy:
    """The policy of the agent at `spec`: its `network` rules (config.yaml's and
    agent.yaml's). An uploaded definition's own rules (or a config.yaml it carries) are
    not the operator's: it gets only the server's global config.yaml `network` block."""
    settings = spec.network
    if uploaded:
        settings = load_settings(None, os.environ).settings.network
    return OutboundPolicy.from_settings(settings, allow_loopback=allow_loopback)
