"""A2A task operations with the a2a-sdk client against `holodeck deploy` processes:
ListTasks (filters, pages, scoped to the key); a task sent with `returnImmediately` that
another process sharing the session store reads, follows and cancels; a turn paused for
a person's approval is a task `input-required`, and a reply to it with the decision
resumes it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import InvalidParamsError

from server_harness import WAITING_TOOL, agent_dir, deploy_process, function_tool

KEYS = {"alice": "k-alice-secret", "bob": "k-bob-secret"}
T = TypeVar("T")


def run(main: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(main())  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`holodeck deploy` of the agent `desk` behind the keys KEYS; its base URL."""
    root = tmp_path_factory.mktemp("tasks")
    keys = [{"name": name, "key": key} for name, key in KEYS.items()]
    agent = agent_dir(
        root / "desk", "desk", deployment={"auth": {"type": "api_key", "api_keys": keys}}
    )
    env = {"HOLODECK_HOME": str(root / "home")}
    with deploy_process(str(agent), "--model", "test", env=env) as (_, url):
        yield url


@asynccontextmanager
async def client_of(url: str, who: str, streaming: bool = False) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {KEYS[who]}"}
    async with httpx.AsyncClient(timeout=30, headers=headers) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        yield ClientFactory(ClientConfig(streaming=streaming, httpx_client=http)).create(card)


async def send(client: Client, text: str, context_id: str = "", at_once: bool = False) -> Task:
    sent = Message(
        message_id=text, role=Role.ROLE_USER, parts=[Part(text=text)], context_id=context_id
    )
    request = SendMessageRequest(
        message=sent, configuration=SendMessageConfiguration(return_immediately=at_once)
    )
    (answer,) = [r async for r in client.send_message(request)]
    return answer.task


async def until(check: Callable[[], Awaitable[bool]], what: str, within_s: float = 20) -> None:
    deadline = asyncio.get_running_loop().time() + within_s
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


def rpc(url: str, who: str, method: str, params: dict[str, Any]) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    headers = {"Authorization": f"Bearer {KEYS[who]}", "A2A-Version": "1.0"}
    response = httpx.post(url + "/a2a/desk", json=body, headers=headers, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()


def test_list_tasks_filters_pages_and_sees_only_the_keys_own_tasks(desk: str) -> None:
    async def main() -> None:
        async with client_of(desk, "alice") as alice, client_of(desk, "bob") as bob:
            first = await send(alice, "one")
            second = await send(alice, "two", first.context_id)
            other = await send(alice, "three")
            bobs = await send(bob, "bob's")

            listed = await alice.list_tasks(ListTasksRequest())
            ids = [t.id for t in listed.tasks]
            assert ids[:3] == [other.id, second.id, first.id]  # newest first
            assert bobs.id not in ids and listed.total_size == len(ids)
            assert all(not t.artifacts for t in listed.tasks)  # only on request

            in_context = await alice.list_tasks(ListTasksRequest(context_id=first.context_id))
            assert [t.id for t in in_context.tasks] == [second.id, first.id]

            full = await alice.list_tasks(
                ListTasksRequest(
                    context_id=first.context_id, include_artifacts=True, history_length=1
                )
            )
            assert all(t.artifacts[0].parts[0].text for t in full.tasks)
            assert all(len(t.history) == 1 for t in full.tasks)

            done = await alice.list_tasks(ListTasksRequest(status=TaskState.TASK_STATE_COMPLETED))
            assert {first.id, second.id, other.id} <= {t.id for t in done.tasks}
            none = await alice.list_tasks(ListTasksRequest(status=TaskState.TASK_STATE_WORKING))
            assert list(none.tasks) == []

            page = await alice.list_tasks(ListTasksRequest(page_size=2))
            assert [t.id for t in page.tasks] == ids[:2] and page.next_page_token
            rest = await alice.list_tasks(
                ListTasksRequest(page_size=2, page_token=page.next_page_token)
            )
            assert [t.id for t in rest.tasks] == ids[2:4]

            later = ListTasksRequest(context_id=first.context_id)
            later.status_timestamp_after.FromDatetime(first.status.timestamp.ToDatetime())
            assert [t.id for t in (await alice.list_tasks(later)).tasks] == [second.id]

            theirs = await bob.list_tasks(ListTasksRequest())
            assert [t.id for t in theirs.tasks] == [bobs.id]

    run(main)


@pytest.mark.parametrize("params", [{"pageSize": 0}, {"pageSize": 101}, {"pageToken": "nope"}])
def test_list_tasks_with_bad_arguments_is_invalid_params(desk: str, params: Any) -> None:
    answer = rpc(desk, "alice", "ListTasks", params)
    assert answer["error"]["code"] == -32602, answer


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, Path]]:
    """Two `holodeck deploy` processes of the agent `desk` (its tool `wait_here` waits
    for a file) sharing one SQLite session store: their URLs and the agent's folder."""
    root = tmp_path_factory.mktemp("replicas")
    keys = [{"name": name, "key": key} for name, key in KEYS.items()]
    agent = agent_dir(
        root / "desk",
        "desk",
        tools=[function_tool("wait_here")],
        python=WAITING_TOOL,
        memory={"store": "sqlite", "url": str(root / "sessions.db")},
        deployment={"auth": {"type": "api_key", "api_keys": keys}},
    )
    env = {"HOLODECK_HOME": str(root / "home")}
    with (
        deploy_process(str(agent), "--model", "test", env=env) as (_, one),
        deploy_process(str(agent), "--model", "test", env=env) as (_, two),
    ):
        yield one, two, agent


def test_a_task_sent_to_return_at_once_is_read_followed_and_cancelled_from_another_replica(
    replicas: tuple[str, str, Path],
) -> None:
    one, two, agent = replicas

    async def main() -> None:
        async with (
            client_of(one, "alice") as here,
            client_of(two, "alice", streaming=True) as there,
        ):
            first = await send(here, "hello")
            # cancelled from the other process: the turn stops, the conversation stays
            task = await send(here, "/call wait_here", first.context_id, at_once=True)
            assert task.status.state == TaskState.TASK_STATE_WORKING
            await until(lambda: asyncio.to_thread((agent / "started").exists), "the tool")
            seen = await there.get_task(GetTaskRequest(id=task.id))
            assert seen.status.state == TaskState.TASK_STATE_WORKING
            working = await there.list_tasks(ListTasksRequest(status=TaskState.TASK_STATE_WORKING))
            assert [t.id for t in working.tasks] == [task.id]
            cancelled = await there.cancel_task(CancelTaskRequest(id=task.id))
            assert cancelled.status.state == TaskState.TASK_STATE_CANCELED

            async def stopped() -> bool:
                found = await here.get_task(GetTaskRequest(id=task.id))
                return found.status.state == TaskState.TASK_STATE_CANCELED

            await until(stopped, "the turn to stop")
            (agent / "started").unlink()
            # followed from the other process to its end
            later = await send(here, "/call wait_here", first.context_id, at_once=True)
            await until(lambda: asyncio.to_thread((agent / "started").exists), "the tool")
            events = there.subscribe(SubscribeToTaskRequest(id=later.id))
            opened = await anext(events)
            assert opened.task.status.state == TaskState.TASK_STATE_WORKING
            (agent / "release").write_text("go")
            rest = [e async for e in events]
            assert rest[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
            done = await here.get_task(GetTaskRequest(id=later.id))
            assert done.artifacts[0].parts[0].text

        headers = {"Authorization": f"Bearer {KEYS['alice']}"}
        session = httpx.get(f"{one}/v1/sessions/{first.context_id}", headers=headers).json()
        users = [m["content"] for m in session["messages"] if m["role"] == "user"]
        assert users == ["hello", "/call wait_here"]  # the cancelled turn left nothing

    run(main)


CLOSING_TOOL = '''
from pathlib import Path

def close_shop() -> str:
    """Closes the shop for the day."""
    Path(__file__).with_name("closed").write_text("yes")
    return "the shop is closed"
'''


def test_a_turn_waiting_for_approval_is_input_required_and_a_reply_to_it_resumes_it(
    tmp_path: Path,
) -> None:
    tool = {**function_tool("close_shop"), "approval": "required"}
    agent = agent_dir(tmp_path / "shop", "desk", tools=[tool], python=CLOSING_TOOL)
    env = {"HOLODECK_HOME": str(tmp_path / "home")}
    with deploy_process(str(agent), "--model", "test", env=env) as (_, url):

        async def main() -> None:
            async with httpx.AsyncClient(timeout=30) as http:
                card = await A2ACardResolver(http, url).get_agent_card()
                config = ClientConfig(streaming=False, httpx_client=http)
                client = ClientFactory(config).create(card)
                paused = await send(client, "/call close_shop")
                assert paused.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
                assert "close_shop" in paused.status.message.parts[0].text
                assert not (agent / "closed").exists()

                vague = Message(message_id="vague", role=Role.ROLE_USER, parts=[Part(text="sure")])
                vague.task_id = paused.id
                with pytest.raises(InvalidParamsError, match="decides nothing"):
                    await anext(client.send_message(SendMessageRequest(message=vague)))

                decision = Part()
                decision.data.struct_value.update({"approve": True})
                reply = Message(message_id="yes", role=Role.ROLE_USER, parts=[decision])
                reply.task_id, reply.context_id = paused.id, paused.context_id
                request = SendMessageRequest(message=reply)
                (answer,) = [r async for r in client.send_message(request)]
                assert answer.task.id == paused.id
                assert answer.task.status.state == TaskState.TASK_STATE_COMPLETED
                assert (agent / "closed").read_text() == "yes"
                got = await client.get_task(GetTaskRequest(id=paused.id))
                assert got.status.state == TaskState.TASK_STATE_COMPLETED
                assert [m.message_id for m in got.history][:1] == [paused.history[0].message_id]

        run(main)


def test_a_streamed_turn_waiting_for_approval_ends_input_required_and_a_denial_resumes_it(
    tmp_path: Path,
) -> None:
    tool = {**function_tool("close_shop"), "approval": "required"}
    agent = agent_dir(tmp_path / "shop", "desk", tools=[tool], python=CLOSING_TOOL)
    env = {"HOLODECK_HOME": str(tmp_path / "home")}
    with deploy_process(str(agent), "--model", "test", env=env) as (_, url):

        async def main() -> None:
            async with httpx.AsyncClient(timeout=30) as http:
                card = await A2ACardResolver(http, url).get_agent_card()
                config = ClientConfig(streaming=True, httpx_client=http)
                client = ClientFactory(config).create(card)
                ask = Message(
                    message_id="ask", role=Role.ROLE_USER, parts=[Part(text="/call close_shop")]
                )
                events = [e async for e in client.send_message(SendMessageRequest(message=ask))]
                last = events[-1].status_update
                assert last.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, events
                assert "close_shop" in last.status.message.parts[0].text
                (waiting,) = last.metadata["holodeck"]["pending"]
                assert waiting["name"] == "close_shop"

                decision = Part()
                decision.data.struct_value.update(
                    {"approve": False, "reason": "the shop stays open today"}
                )
                reply = Message(message_id="no", role=Role.ROLE_USER, parts=[decision])
                reply.task_id = last.task_id
                request = SendMessageRequest(message=reply)
                resumed = [e async for e in client.send_message(request)]
                end = resumed[-1].status_update
                assert end.task_id == last.task_id
                assert end.status.state == TaskState.TASK_STATE_COMPLETED, resumed
                assert not (agent / "closed").exists()  # denied: the tool never ran
                # the model was told why: the test model answers with what the call returned
                answer = "".join(
                    e.artifact_update.artifact.parts[0].text
                    for e in resumed
                    if e.HasField("artifact_update")
                )
                assert "the shop stays open today" in answer, answer

        run(main)


FINISHING_TOOL = '''
import json
import urllib.request
from pathlib import Path


def _rpc(url: str, key: str, method: str, params: dict) -> dict:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    request = urllib.request.Request(
        url + "/a2a/desk",
        data=body.encode(),
        headers={"Authorization": "Bearer " + key, "Content-Type": "application/json",
                 "A2A-Version": "1.0"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def finish_now() -> str:
    """Finishes the work."""
    # cancels, through the other process, the task running this call: the turn then
    # ends at once, well before this process next reads the task's record
    url, key = Path(__file__).with_name("cancel_via").read_text().split()
    listed = _rpc(url, key, "ListTasks", {"status": "TASK_STATE_WORKING"})
    (task,) = listed["result"]["tasks"]
    _rpc(url, key, "CancelTask", {"id": task["id"]})
    return "finished"
'''


def test_a_cancel_answered_elsewhere_as_the_turn_finishes_is_not_overwritten(
    tmp_path: Path,
) -> None:
    keys = [{"name": name, "key": key} for name, key in KEYS.items()]
    agent = agent_dir(
        tmp_path / "desk",
        "desk",
        tools=[function_tool("finish_now")],
        python=FINISHING_TOOL,
        memory={"store": "sqlite", "url": str(tmp_path / "sessions.db")},
        deployment={"auth": {"type": "api_key", "api_keys": keys}},
    )
    env = {"HOLODECK_HOME": str(tmp_path / "home")}
    with (
        deploy_process(str(agent), "--model", "test", env=env) as (_, one),
        deploy_process(str(agent), "--model", "test", env=env) as (_, two),
    ):
        (agent / "cancel_via").write_text(f"{two} {KEYS['alice']}")

        async def main() -> None:
            async with client_of(one, "alice") as here:
                task = await send(here, "/call finish_now", at_once=True)
                assert task.status.state == TaskState.TASK_STATE_WORKING

                async def recorded_by_its_turn() -> bool:
                    # the process running the turn writes its record once more as it
                    # ends, with the call it made (the cancel's copy has none)
                    found = await here.get_task(GetTaskRequest(id=task.id))
                    return bool(found.metadata["holodeck"]["tool_calls"])

                await until(recorded_by_its_turn, "the turn to end")
                found = await here.get_task(GetTaskRequest(id=task.id))
                assert found.status.state == TaskState.TASK_STATE_CANCELED, found.status

        run(main)


def test_cancelling_a_task_waiting_for_approval_denies_its_call_and_the_context_goes_on(
    tmp_path: Path,
) -> None:
    tool = {**function_tool("close_shop"), "approval": "required"}
    agent = agent_dir(tmp_path / "shop", "desk", tools=[tool], python=CLOSING_TOOL)
    env = {"HOLODECK_HOME": str(tmp_path / "home")}
    with deploy_process(str(agent), "--model", "test", env=env) as (_, url):

        async def main() -> None:
            async with httpx.AsyncClient(timeout=30) as http:
                card = await A2ACardResolver(http, url).get_agent_card()
                client = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(
                    card
                )
                paused = await send(client, "/call close_shop")
                assert paused.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
                cancelled = await client.cancel_task(CancelTaskRequest(id=paused.id))
                assert cancelled.status.state == TaskState.TASK_STATE_CANCELED

                after = await send(client, "what now?", paused.context_id)
                assert after.status.state == TaskState.TASK_STATE_COMPLETED, after.status
                assert after.context_id == paused.context_id
                assert not (agent / "closed").exists()  # the call was denied, never run
                got = await client.get_task(GetTaskRequest(id=paused.id))
                assert got.status.state == TaskState.TASK_STATE_CANCELED

            session = httpx.get(f"{url}/v1/sessions/{paused.context_id}").json()
            said = json.dumps(session["messages"])
            assert "The task was cancelled" in said  # the session keeps the denial

        run(main)
