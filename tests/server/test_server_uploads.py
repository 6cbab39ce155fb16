"""Agent uploads (POST /v1/agents) can never break the server: an upload is loaded
completely before it is kept, within limits, under names that make safe files, with
modules of its own, without holding up the event loop."""

from __future__ import annotations

import io
import logging
import os
import shutil
import stat
import sys
import tarfile
import threading
from pathlib import Path

import httpx2 as httpx
import pytest
from click.testing import CliRunner

from holodeck.cli.main import cli
from holodeck.spec.models.settings import UploadSettings
from server_harness import WEATHER, Serve, agent_dir, deploy_process, function_tool, until

GZIP = {"Content-Type": "application/gzip"}


def image(name: str, tools: dict[str, str] | None = None, **files: str | bytes) -> bytes:
    """An agent image .tar.gz: config.yaml naming `name`, AGENTS.md, `tools/python/*`."""
    members: dict[str, str | bytes] = {
        "config.yaml": f"spec_version: 1\nname: {name}\ninstructions: AGENTS.md\n",
        "AGENTS.md": "You help.\n",
        **{f"tools/python/{file}": text for file, text in (tools or {}).items()},
        **files,
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for member, content in members.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(member)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def files_under(root: Path) -> list[str]:
    """Every file (not folder) under `root`, relative to it."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if not p.is_dir())


def tool_result(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    calls = response.json()["tool_calls"]
    assert calls, response.json()
    return str(calls[0]["result"])


# --- 1. an upload that cannot load is refused whole, and never breaks a start ----------


@pytest.mark.parametrize(
    "first_line", ["import does_not_exist", "raise SystemExit(3)", "raise KeyboardInterrupt"]
)
def test_an_upload_whose_tool_fails_at_import_is_a_422_naming_the_member_and_nothing_is_kept(
    serve: Serve, tmp_path: Path, first_line: str
) -> None:
    state = tmp_path / "state"
    source = first_line + "\n\ndef mm() -> str:\n    return 'never'\n"
    with serve(WEATHER, allow_uploads=True) as server:
        refused = server.client.post(
            "/v1/agents", content=image("mm", {"mm.py": source}), headers=GZIP
        )
        assert refused.status_code == 422, refused.text
        error = refused.json()["error"]
        assert error["type"] == "invalid_agent"
        assert "tools/python/mm.py:1" in error["message"]
        assert str(tmp_path) not in refused.text and "holodeck-home" not in refused.text
        assert "Traceback" not in refused.text
        assert files_under(state / "agents") == []
        listed = server.client.get("/v1/agents").json()["agents"]
        assert [a["name"] for a in listed] == ["weather"]
        assert server.chat("Weather in Paris?").status_code == 200


def test_a_stored_upload_that_does_not_load_is_reported_and_the_others_serve(
    serve: Serve, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An archive kept earlier whose tool now fails (a package removed since, say)."""
    stored = tmp_path / "state" / "agents"
    stored.mkdir(parents=True)
    (stored / "broken.tar.gz").write_bytes(image("broken", {"mm.py": EXITS}))
    (stored / "good.tar.gz").write_bytes(image("good", {"hello.py": HELLO}))
    with (
        caplog.at_level(logging.ERROR, "holodeck.server"),
        serve(WEATHER, allow_uploads=True) as server,
    ):
        ready = server.client.get("/ready")
        assert ready.status_code == 200
        by_name = {a["name"]: a for a in server.client.get("/v1/agents").json()["agents"]}
        assert by_name["good"]["status"] == "ready" and by_name["weather"]["status"] == "ready"
        assert by_name["broken"]["status"] == "failed"
        assert "tools/python/mm.py:1" in by_name["broken"]["error"]
        assert "SystemExit" in by_name["broken"]["error"]
        assert {a["name"] for a in ready.json()["agents"]} == {"broken", "good", "weather"}
        assert tool_result(server.chat("hi /call *", agent="good")) == "hello from good"
        assert server.chat("Weather in Paris?", agent="weather").status_code == 200
        answer = server.chat("hi", agent="broken")
        assert answer.status_code == 503 and "mm.py:1" in answer.json()["error"]["message"]
        # a corrected upload replaces the broken one
        fixed = server.client.post(
            "/v1/agents", content=image("broken", {"hello.py": HELLO}), headers=GZIP
        )
        assert fixed.status_code == 201, fixed.text
        until(lambda: server.client.get("/ready").status_code == 200, what="fixed ready")
        assert tool_result(server.chat("hi /call *", agent="broken")) == "hello from broken"
    assert any("broken" in r.getMessage() and "mm.py:1" in r.getMessage() for r in caplog.records)


EXITS = "raise SystemExit(3)\n\ndef mm() -> str:\n    return 'never'\n"
HELLO = """
from pathlib import Path

def hello() -> str:
    '''Says hello.'''
    return "hello from " + Path(__file__).parents[2].joinpath("config.yaml").read_text().split()[3]
"""


def test_deploy_takes_the_upload_limits_and_starts_past_a_stored_upload_that_fails(
    tmp_path: Path,
) -> None:
    root = agent_dir(tmp_path / "cli", "cli")
    (root / "config.yaml").write_text("deployment:\n  uploads:\n    max_unpacked_mib: 1\n")
    stored = tmp_path / ".holodeck" / "server" / "agents"
    stored.mkdir(parents=True)
    (stored / "broken.tar.gz").write_bytes(image("broken", {"mm.py": EXITS}))
    with (
        deploy_process(str(root), "--model", "test", "--allow-uploads", cwd=tmp_path) as (_, url),
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        until(lambda: client.get("/ready").status_code == 200, what="the agents to be ready")
        by_name = {a["name"]: a for a in client.get("/v1/agents").json()["agents"]}
        assert by_name["cli"]["status"] == "ready" and by_name["broken"]["status"] == "failed"
        assert client.post("/v1/chat", json={"message": "hi", "agent": "cli"}).status_code == 200
        big = image("big", **{"data/zeros.bin": b"\0" * (2 * 1024 * 1024)})
        refused = client.post("/v1/agents", content=big, headers=GZIP)
        assert refused.status_code == 413 and "1 MiB" in refused.json()["error"]["hint"]


def test_a_tool_raising_system_exit_at_import_is_a_load_error_on_the_command_line(
    tmp_path: Path,
) -> None:
    root = agent_dir(
        tmp_path / "quits",
        "quits",
        python="\n\nraise SystemExit(3)\ndef f() -> str:\n    return ''\n",
        tools=[function_tool("f")],
    )
    result = CliRunner().invoke(cli, ["deploy", str(root), "--model", "test"])
    assert result.exit_code == 2, result.output
    assert "tools.py: line 3: SystemExit: 3" in result.output
    assert "Traceback" not in result.output


# --- 2. names ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a" * 300, "Support Bot", "../evil", "a_b"])
def test_an_upload_whose_name_breaks_the_image_rule_is_a_422_and_nothing_is_kept(
    serve: Serve, tmp_path: Path, name: str
) -> None:
    with serve(WEATHER, allow_uploads=True) as server:
        refused = server.client.post("/v1/agents", content=image(f'"{name}"'), headers=GZIP)
        assert refused.status_code == 422, refused.text
        assert "64 lowercase letters, digits and hyphens" in refused.json()["error"]["hint"]
        assert files_under(tmp_path / "state" / "agents") == []
    # and the next start is a start
    with serve(WEATHER, allow_uploads=True) as server:
        assert server.client.get("/ready").status_code == 200


def test_a_member_name_too_long_for_the_file_system_is_a_422(serve: Serve, tmp_path: Path) -> None:
    with serve(WEATHER, allow_uploads=True) as server:
        refused = server.client.post(
            "/v1/agents", content=image("long", **{"data/" + "a" * 300: "x"}), headers=GZIP
        )
        assert refused.status_code == 422, refused.text
        assert "longer than 255 bytes" in refused.json()["error"]["message"]
        assert files_under(tmp_path / "state" / "agents") == []


def test_each_agent_name_has_a_log_file_of_its_own(serve: Serve, tmp_path: Path) -> None:
    names = ["a b", "a_b", "a__20b", "a-20b"]
    long_names = ["x" * 300, "x" * 299 + "y"]  # past any file system's limit for a name
    roots = [agent_dir(tmp_path / f"a{i}", name) for i, name in enumerate(names + long_names)]
    logs = tmp_path / "logs"
    with serve(*roots, log_dir=str(logs)) as server:
        listed = server.client.get("/v1/agents").json()["agents"]
        assert sorted(a["name"] for a in listed) == sorted(names + long_names)
        for name in names:
            assert server.chat(f"hello {name}", agent=name).status_code == 200
    files = sorted(logs.iterdir())
    assert len(files) == len(names + long_names)
    written = [f.read_text() for f in files if f.stat().st_size]
    assert len(written) == len(names)  # one chat each, each in a file of its own
    for name in names:
        (text,) = [t for t in written if f"hello {name}" in t]
        assert len(text.splitlines()) == 1


# --- 3. modules ---------------------------------------------------------------------------

USES_HELPER = """
import helper

def ask() -> str:
    '''Asks the helper beside this file.'''
    import helper as again
    return helper.WHO + "/" + again.WHO
"""


def test_each_uploaded_agent_imports_its_own_neighbours_and_drops_them_when_replaced(
    serve: Serve,
) -> None:
    def agent(name: str, who: str) -> bytes:
        helper = f"WHO = {who!r}\n"
        return image(name, {"ask.py": USES_HELPER, "helper.py": helper})

    with serve(WEATHER, allow_uploads=True) as server:
        for name in ("one", "two"):
            posted = server.client.post("/v1/agents", content=agent(name, name), headers=GZIP)
            assert posted.status_code == 201, posted.text
        until(lambda: server.client.get("/ready").status_code == 200, what="both ready")
        assert tool_result(server.chat("go /call *", agent="one")) == "one/one"
        assert tool_result(server.chat("go /call *", agent="two")) == "two/two"
        old = [
            n
            for n, m in list(sys.modules.items())
            if n.startswith("holodeck_user") and getattr(m, "WHO", None) == "one"
        ]
        assert old, "the first version's helper is loaded"
        posted = server.client.post("/v1/agents", content=agent("one", "one v2"), headers=GZIP)
        assert posted.status_code == 201, posted.text
        until(lambda: server.client.get("/ready").status_code == 200, what="v2 ready")
        assert tool_result(server.chat("go /call *", agent="one")) == "one v2/one v2"
        assert not any(n in sys.modules for n in old)
        assert tool_result(server.chat("go /call *", agent="two")) == "two/two"


def test_agents_from_the_command_line_each_import_their_own_neighbours(
    serve: Serve, tmp_path: Path
) -> None:
    roots = []
    for name in ("left", "right"):
        root = agent_dir(tmp_path / name, name, python=USES_HELPER, tools=[function_tool("ask")])
        (root / "helper.py").write_text(f"WHO = {name!r}\n")
        roots.append(root)
    with serve(*roots) as server:
        assert tool_result(server.chat("go /call *", agent="left")) == "left/left"
        assert tool_result(server.chat("go /call *", agent="right")) == "right/right"


# --- 4. resources ------------------------------------------------------------------------


def test_an_image_that_unpacks_past_the_limit_is_refused_while_unpacking(
    serve: Serve, tmp_path: Path
) -> None:
    zeros = b"\0" * (3 * 1024 * 1024)  # a few KiB compressed
    bomb = image("bomb", **{"data/zeros.bin": zeros})
    assert len(bomb) < 64 * 1024
    with serve(WEATHER, allow_uploads=True, uploads=UploadSettings(max_unpacked_mib=2)) as server:
        refused = server.client.post("/v1/agents", content=bomb, headers=GZIP)
        assert refused.status_code == 413, refused.text
        error = refused.json()["error"]
        assert error["type"] == "upload_too_large" and "data/zeros.bin" in error["message"]
        assert "2 MiB" in error["hint"] and "deployment.uploads.max_unpacked_mib" in error["hint"]
        assert files_under(tmp_path / "state" / "agents") == []


def test_the_upload_store_has_a_cap_and_a_new_version_replaces_the_old_one(
    serve: Serve, tmp_path: Path
) -> None:
    stored = tmp_path / "state" / "agents"

    def agent(name: str, seed: int) -> bytes:
        return image(name, **{"data/noise.bin": os.urandom(300 * 1024) + bytes([seed])})

    with serve(WEATHER, allow_uploads=True, uploads=UploadSettings(max_store_mib=1)) as server:
        first = server.client.post("/v1/agents", content=agent("first", 1), headers=GZIP)
        assert first.status_code == 201, first.text
        full = server.client.post("/v1/agents", content=agent("second", 2), headers=GZIP)
        assert full.status_code == 413, full.text
        assert full.json()["error"]["type"] == "upload_store_full"
        assert "deployment.uploads.max_store_mib" in full.json()["error"]["hint"]
        before = sorted(p.name for p in (stored / "images").iterdir())
        for version in (3, 4):  # each new version of `first` takes the old one's place
            again = server.client.post("/v1/agents", content=agent("first", version), headers=GZIP)
            assert again.status_code == 201, again.text
        after = sorted(p.name for p in (stored / "images").iterdir())
        assert len(before) == len(after) == 1 and before != after
        assert [p.name for p in stored.glob("*.tar.gz")] == ["first.tar.gz"]
        listed = server.client.get("/v1/agents").json()["agents"]
        assert sorted(a["name"] for a in listed) == ["first", "weather"]


SLOW_IMPORT = """
import time
from pathlib import Path

Path({started!r}).write_text("importing")
while not Path({release!r}).exists():
    time.sleep(0.01)

def slow() -> str:
    '''Took its time to import.'''
    return "loaded"
"""


def test_the_server_answers_while_an_upload_imports_its_tools(serve: Serve, tmp_path: Path) -> None:
    started, release = tmp_path / "started", tmp_path / "release"
    archive = image(
        "slow", {"slow.py": SLOW_IMPORT.format(started=str(started), release=str(release))}
    )
    with serve(WEATHER, allow_uploads=True) as server:
        outcome: list[httpx.Response] = []

        def post() -> None:
            with httpx.Client(base_url=server.url, timeout=60) as client:
                outcome.append(client.post("/v1/agents", content=archive, headers=GZIP))

        uploading = threading.Thread(target=post)
        uploading.start()
        try:
            until(started.exists, what="the upload to import its tool")
            assert server.client.get("/health", timeout=10).status_code == 200
            listed = server.client.get("/v1/agents", timeout=10).json()["agents"]
            assert [a["name"] for a in listed] == ["weather"]  # not served before it loaded
        finally:
            release.write_text("go")
            uploading.join(60)
        assert outcome and outcome[0].status_code == 201, outcome
        until(lambda: server.client.get("/ready").status_code == 200, what="slow ready")
        assert tool_result(server.chat("go /call *", agent="slow")) == "loaded"


# --- 5. permissions ------------------------------------------------------------------------


def test_uploads_are_private_whatever_the_umask(serve: Serve, tmp_path: Path) -> None:
    stored = tmp_path / "state" / "agents"
    stored.mkdir(parents=True, mode=0o777)
    stored.chmod(0o777)  # as an older version, or a loose umask, left it
    old = os.umask(0)
    try:
        with serve(WEATHER, allow_uploads=True) as server:
            posted = server.client.post("/v1/agents", content=image("private"), headers=GZIP)
            assert posted.status_code == 201, posted.text
    finally:
        os.umask(old)
    assert stat.S_IMODE(stored.stat().st_mode) == 0o700
    assert stat.S_IMODE((stored / "images").stat().st_mode) == 0o700
    assert stat.S_IMODE((stored / "private.tar.gz").stat().st_mode) == 0o600


# --- the server owns what its agents run -------------------------------------------------

PID_TS = """
/** The id of the Node.js process answering. */
export function pid(): number {
  return process.pid;
}
"""


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    stat_line = Path(f"/proc/{pid}/stat")
    try:
        return stat_line.read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
def test_a_replaced_upload_stops_its_node_process_and_stopping_the_server_stops_the_rest(
    serve: Serve,
) -> None:
    upload = image("trader", **{"tools/typescript/pid.ts": PID_TS})
    with serve(WEATHER, allow_uploads=True) as server:
        assert server.client.post("/v1/agents", content=upload, headers=GZIP).status_code == 201
        until(lambda: server.client.get("/ready").status_code == 200, what="the upload ready")
        first = int(tool_result(server.chat("Which process? /call *", agent="trader")))
        assert not _gone(first)  # kept between turns
        assert server.client.post("/v1/agents", content=upload, headers=GZIP).status_code == 201
        assert _gone(first)  # the replaced agent's Node.js stopped with it
        until(lambda: server.client.get("/ready").status_code == 200, what="the upload ready")
        second = int(tool_result(server.chat("Which process? /call *", agent="trader")))
        assert second != first
    assert _gone(second)
    names = [t.name for t in threading.enumerate()]
    assert not [n for n in names if n.startswith(f"holodeck-node-{second}-")]
