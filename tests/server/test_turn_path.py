"""A served turn's events pass one generator of the server's and one of the runtime's on
their way from the model run to the route; a session's turns are the session's own."""

from __future__ import annotations

import json
from pathlib import Path

from holodeck import Agent
from server_harness import Serve, agent_dir, function_tool

# Run inside a turn: the async generators of HoloDeck's modules that are waiting now
# (suspended at an await, not at a yield) are those the turn's events climb through.
WAITING_GENERATORS = """
import gc
import inspect
import json

async def waiting(note: str) -> str:
    '''Lists the generators waiting for the turn's next event.'''
    names = [
        g.ag_code.co_qualname
        for g in gc.get_objects()
        if inspect.isasyncgen(g)
        and g.ag_await is not None
        and g.ag_frame is not None
        and g.ag_frame.f_globals.get("__name__", "").startswith("holodeck.")
    ]
    return json.dumps(sorted(names))
"""


def test_a_served_turns_events_pass_one_server_generator_and_one_runtime_generator(
    tmp_path: Path, serve: Serve
) -> None:
    root = agent_dir(
        tmp_path / "probe", "probe", python=WAITING_GENERATORS, tools=[function_tool("waiting")]
    )
    with serve(root) as server:
        body = server.chat("/call waiting").json()
        streamed = server.events("/call waiting")
    [call] = body["tool_calls"]
    assert json.loads(call["result"]) == ["TurnRunner.turn", "_served"]
    finished = [data for name, data in streamed if name == "tool_call_finished"]
    # the Server-Sent Events add the protocol's own adapter, and nothing else
    assert json.loads(finished[0]["result"]) == ["TurnRunner.turn", "_served", "sse_answer"]


def test_an_agent_has_no_turn_protocol_of_its_own_a_session_runs_its_turns() -> None:
    assert not hasattr(Agent, "stream_turn")
