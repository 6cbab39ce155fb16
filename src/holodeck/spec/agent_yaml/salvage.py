"""An agent.yaml that failed validation, read as far as it can be, so that `validate`
still checks the rest in the same pass: its files, its test cases' `expected_tools`, its
warnings. A missing required field is filled with a stand-in that no check reads; a
value that is wrong is left out (`validation.errors.salvaged`). The problems themselves
were reported already; what is built here is never run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from holodeck.spec.agent_yaml.agent_file import AgentFile
from holodeck.spec.validation.errors import salvaged

# stand-ins for agent.yaml's required fields; `Salvaged.stand_ins` names those used
_STAND_INS: dict[str, Any] = {
    "name": "agent",
    "model": {"provider": "test", "name": "stand-in"},
    "instructions": {"inline": "stand-in"},
}


@dataclass(frozen=True)
class Salvaged:
    agent: AgentFile
    stand_ins: frozenset[str]  # required fields given a stand-in: nothing checks them
    tool_names: frozenset[str]  # the names the document gives its tools, valid or not


def salvage_agent(data: Any) -> Salvaged | None:
    """What of `data` validates, or None when nothing can be kept."""
    if not isinstance(data, dict):
        return None
    filled = dict(data)
    used: set[str] = set()
    for key, stand_in in _STAND_INS.items():
        if filled.get(key) is None:
            filled[key] = stand_in
            used.add(key)
    agent = _validated(filled, used)
    if agent is None:
        return None
    tools = data.get("tools")
    names = (
        {t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)}
        if isinstance(tools, list)
        else set()
    )
    return Salvaged(agent, frozenset(used), frozenset(names))


def _validated(filled: dict[str, Any], used: set[str]) -> AgentFile | None:
    """`filled` validated; a required field whose value is wrong gets its stand-in (and
    is added to `used`), other wrong values are left out."""
    for _ in range(2):
        try:
            return AgentFile.model_validate(filled)
        except ValidationError as exc:
            wrong = {str(e["loc"][0]) for e in exc.errors() if e["loc"]} & _STAND_INS.keys()
            if not wrong - used:
                return salvaged(AgentFile, filled, exc)
            for key in wrong:
                filled[key] = _STAND_INS[key]
                used.add(key)
    return None
