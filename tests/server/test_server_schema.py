"""The service against its own /openapi.json: schemathesis generates valid and invalid
requests for every operation and checks that none gets a 500 and that every answer
(status, content type, body) is one the schema declares."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from server_harness import WEATHER, served


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    state = tmp_path_factory.mktemp("schema-server")
    with served(
        WEATHER, state_dir=state, log_dir=str(state / "logs"), allow_uploads=True
    ) as server:
        yield schemathesis.openapi.from_url(server.url + "/openapi.json")


def operations() -> list[str]:
    return [
        "GET /health",
        "GET /ready",
        "GET /v1/agents",
        "POST /v1/agents",
        "POST /v1/chat",
        "POST /v1/chat/completions",
        "GET /v1/models",
        "GET /v1/models/{model_id}",
        "POST /v1/responses",
        "GET /v1/responses/{response_id}",
        "GET /v1/sessions/{session_id}",
        "DELETE /v1/sessions/{session_id}",
        "POST /awp",
        "POST /awp/{agent}",
        "POST /v1/sessions/{session_id}/approvals/{call_id}",
        "GET /v1/memories",
        "DELETE /v1/memories",
        "DELETE /v1/memories/{memory_id}",
    ]


# agent images are gzip bytes: generated as schemathesis generates any binary body
schemathesis.serializer.alias("application/gzip", "application/octet-stream")


# schemathesis' pytest plugin does not run on this pytest: its strategies are driven by
# hypothesis directly, one test per operation
@pytest.mark.parametrize("operation", operations())
def test_every_operation_keeps_to_its_schema(api: Any, operation: str) -> None:
    method, path = operation.split(" ")
    strategy = api[path][method].as_strategy()

    @given(case=strategy)
    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    def check(case: Any) -> None:
        excluded = []
        if operation == "POST /v1/chat" and case.body and case.body.get("attachments"):
            # a schema-valid file the agent does not take (it reads only text) is refused
            # with 400: whether a file is welcome depends on the agent, not on the schema
            excluded.append(positive_data_acceptance)
        if operation == "POST /v1/agents":
            # any bytes fit a binary body; only an agent image is accepted
            excluded.append(positive_data_acceptance)
        if operation.startswith("POST /awp"):
            # the documented schema is the input's outline: its messages' own shapes (and
            # that the last is the user's) are checked by the AG-UI types, with a 422
            excluded.append(positive_data_acceptance)
        case.call_and_validate(excluded_checks=excluded)

    check()


def test_the_schema_describes_every_route(tmp_path: Path) -> None:
    from holodeck.server import ServeOptions, create_app

    paths = create_app(ServeOptions(paths=(str(WEATHER),))).openapi()["paths"]
    assert set(paths) == {
        "/.well-known/agent-card.json",
        "/a2a/{agent}",
        "/a2a/{agent}/.well-known/agent-card.json",
        "/health",
        "/ready",
        "/v1/agents",
        "/v1/chat",
        "/v1/chat/completions",
        "/v1/models",
        "/v1/models/{model_id}",
        "/v1/responses",
        "/v1/responses/{response_id}",
        "/v1/sessions/{session_id}",
        "/awp",
        "/awp/{agent}",
        "/v1/sessions/{session_id}/approvals/{call_id}",
        "/v1/memories",
        "/v1/memories/{memory_id}",
    }
    chat = paths["/v1/chat"]["post"]["responses"]
    assert "text/event-stream" in chat["200"]["content"]
