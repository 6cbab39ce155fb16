"""A page using the official AG-UI client (`@ag-ui/client`, bundled for the browser)
talks to /awp in headless Chromium: the answer streams in, the tool calls show, and a
second message continues the thread."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from agui_client import node_client
from browser import chromium_page, playwright_api
from server_harness import WEATHER, Serve

PAGE = """<!doctype html>
<meta charset="utf-8"><title>AG-UI</title>
<script src="client.js"></script>
<form id="ask"><input id="message"><button>Send</button></form>
<ol id="tools"></ol><p id="answer"></p><p id="status">idle</p>
<script>
const agent = new AgUi.HttpAgent({ url: location.origin + "/awp", threadId: "page-thread" });
let count = 0;
document.getElementById("ask").addEventListener("submit", async (event) => {
  event.preventDefault();
  const answer = document.getElementById("answer");
  const status = document.getElementById("status");
  answer.textContent = "";
  status.textContent = "running";
  agent.addMessage({ id: `m-${++count}`, role: "user",
                     content: document.getElementById("message").value });
  await agent.runAgent({ runId: `run-${count}` }, {
    onTextMessageContentEvent: ({ event }) => { answer.textContent += event.delta; },
    onToolCallStartEvent: ({ event }) => {
      const item = document.createElement("li");
      item.textContent = event.toolCallName;
      document.getElementById("tools").append(item);
    },
    onRunFinishedEvent: () => { status.textContent = `done ${count}`; },
    onRunErrorEvent: ({ event }) => { status.textContent = `error ${event.message}`; },
  });
});
</script>
"""


def test_a_page_with_the_official_client_streams_answers_on_one_thread(
    serve: Serve, tmp_path: Path
) -> None:
    sync_api = playwright_api()
    js = node_client()
    bundle = tmp_path / "client.js"
    subprocess.run(
        ["node", str(js / "bundle_client.mjs"), str(bundle)], check=True, timeout=120, cwd=js
    )
    expect = sync_api.expect
    with serve(WEATHER) as server:
        base = server.url
        with chromium_page(sync_api, lambda url: url.startswith(base + "/"), 900, 700) as (
            page,
            problems,
        ):

            def page_files(route: Any) -> None:  # the page and its script, on the server's origin
                if route.request.url.endswith("/client.js"):
                    route.fulfill(body=bundle.read_text(), content_type="text/javascript")
                else:
                    route.fulfill(body=PAGE, content_type="text/html")

            page.route(f"{base}/page/*", page_files)
            page.goto(f"{base}/page/index.html")
            page.fill("#message", "Weather in Oslo? /call *")
            page.click("button")
            expect(page.locator("#status")).to_have_text("done 1", timeout=60_000)
            first = page.locator("#answer").text_content()
            tools = page.locator("#tools li").all_inner_texts()
            page.fill("#message", "Thanks!")
            page.click("button")
            expect(page.locator("#status")).to_have_text("done 2", timeout=60_000)
            second = page.locator("#answer").text_content()
        stored = server.client.get("/v1/sessions/page-thread").json()
    assert problems == []
    answers = [m["content"] for m in stored["messages"] if m["role"] == "assistant"]
    assert [first, second] == answers
    assert tools == [m["name"] for m in stored["messages"] if m["role"] == "tool_call"]
    users = [m["content"] for m in stored["messages"] if m["role"] == "user"]
    assert users == ["Weather in Oslo? /call *", "Thanks!"]
