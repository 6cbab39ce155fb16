"""Test cases written the shipped HoloDeck's way: `execution:` keys, test case files from
URLs (downloaded through the network settings, cached) and Office documents, multi-turn
cases with per-turn `evaluations`, `retrieval_context` and `turn_config`, and code graders
(`grader: module.path:function`).

Downloads come from an HTTP server on 127.0.0.1 that the test starts and counts requests
on; the agent under test answers with a scripted model that repeats what it was sent, so
a test sees exactly what reached the model.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from conftest import Write
from holodeck.config.loader import load_agent
from holodeck.runtime import RunOptions
from holodeck.spec.diagnostics import SpecError
from holodeck.testing.results import CaseRun, TestRun
from holodeck.testing.runner import TestOptions, run_tests
from local_http import LocalHTTPServer
from office_files import make_docx, make_pptx, make_xlsx
from search_files import make_pdf

# --- a file server on loopback, and a model that repeats its prompt ---------------------


@dataclass
class FileServer:
    """Serves `files` on 127.0.0.1; `/slow/...` answers only once `release` is set."""

    files: dict[str, bytes]
    hits: dict[str, int] = field(default_factory=dict)
    release: threading.Event = field(default_factory=threading.Event)
    server: LocalHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def files_server() -> Iterator[FileServer]:
    site = FileServer({})

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            site.hits[self.path] = site.hits.get(self.path, 0) + 1
            if self.path.startswith("/slow/"):
                site.release.wait(10)
            body = site.files.get(self.path)
            if body is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    site.server = LocalHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=site.server.serve_forever, daemon=True).start()
    yield site
    site.release.set()
    site.server.shutdown()
    site.server.server_close()


def echo_model() -> tuple[FunctionModel, list[str]]:
    """A model whose answer is the text of the last user prompt; it keeps every prompt."""
    prompts: list[str] = []

    def said(messages: list[ModelMessage]) -> str:
        last, text = messages[-1], ""
        if isinstance(last, ModelRequest):
            for part in last.parts:
                if isinstance(part, UserPromptPart):
                    content = part.content
                    items = [content] if isinstance(content, str) else list(content)
                    text += "".join(item for item in items if isinstance(item, str))
        prompts.append(text)
        return text

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(said(messages))])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield said(messages)

    return FunctionModel(answer, stream_function=stream, model_name="echo"), prompts


def run(root: Path, model: Any = "test") -> TestRun:
    return asyncio.run(run_tests(load_agent(root), TestOptions(run=RunOptions(model=model))))


def only_run(result: TestRun, name: str | None = None) -> CaseRun:
    cases = [c for c in result.cases if name is None or c.name == name]
    return cases[0].runs[0]


AGENT = """
name: cases
model: {provider: openai, name: gpt-4o}
instructions: {inline: Answer from the attached files.}
"""
LOOPBACK = "network:\n  allow: [127.0.0.1]\n"


def refusal(root: Path) -> str:
    with pytest.raises(SpecError) as caught:
        load_agent(root)
    return str(caught.value)


# --- execution: keys -----------------------------------------------------------------------


def test_quiet_is_a_warning_saying_why_and_an_error_with_strict(write: Write) -> None:
    root = write({"agent.yaml": AGENT + "execution:\n  quiet: true\n  verbose: false\n"})
    (warning,) = load_agent(root).warnings
    assert "agent.yaml:5:3" in warning.render() and "execution.quiet" in warning.render()
    assert "`holodeck test` has no quiet mode" in warning.message
    with pytest.raises(SpecError, match="has no quiet mode"):
        load_agent(root, strict=True)


def test_quiet_in_config_yaml_is_a_warning_too_and_an_error_with_strict(write: Write) -> None:
    root = write({"agent.yaml": AGENT, "config.yaml": "execution:\n  quiet: false\n"})
    (warning,) = load_agent(root).warnings
    assert "config.yaml:2:3" in warning.render() and "has no quiet mode" in warning.message
    with pytest.raises(SpecError, match=r"config\.yaml:2:3: error: execution\.quiet: `quiet`"):
        load_agent(root, strict=True)


def test_cache_directory_is_cache_dir_and_both_at_once_is_an_error(write: Write) -> None:
    root = write({"agent.yaml": AGENT + "execution:\n  cache_directory: kept\n"})
    assert load_agent(root).execution.cache_dir == "kept"
    both = write({"agent.yaml": AGENT + "execution:\n  cache_directory: a\n  cache_dir: b\n"})
    assert "give `cache_dir` or `cache_directory`" in refusal(both)


def test_execution_verbose_shows_conversations_and_reports_show_each_turn(
    write: Write, tmp_path: Path
) -> None:
    root = write(
        {
            "agent.yaml": AGENT.replace("provider: openai, name: gpt-4o", "provider: test")
            + """
execution:
  verbose: true
test_cases:
  - name: two-step
    turns:
      - input: first question
        ground_truth: first
        evaluations: [{type: standard, metric: contains}]
      - input: second question
"""
        }
    )
    report = tmp_path / "report.md"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    ran = subprocess.run(
        [sys.executable, "-m", "holodeck", "test", str(root), "-o", str(report)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "user: first question" in ran.stdout and "turn 2" in ran.stdout  # as with -v
    markdown = report.read_text()
    assert "**Turn 1**: first question" in markdown
    assert "| Contains |" in markdown.split("**Turn 1**: first question")[1]


# --- files from URLs -----------------------------------------------------------------------


def url_case(url: str, **file: Any) -> str:
    extra = "".join(f"\n        {k}: {v}" for k, v in file.items())
    return f"""
test_cases:
  - name: notes
    input: What do the notes say?
    files:
      - url: {url}
        type: text{extra}
"""


def test_a_url_file_is_downloaded_once_then_read_from_the_cache(
    write: Write, files_server: FileServer
) -> None:
    files_server.files["/notes.txt"] = b"Refunds take 14 days."
    execution = "execution:\n  cache_dir: kept-files\n"
    root = write(
        {"agent.yaml": AGENT + LOOPBACK + execution + url_case(files_server.url + "/notes.txt")}
    )
    model, prompts = echo_model()

    first, second = run(root, model), run(root, model)

    assert [only_run(r).status for r in (first, second)] == ["pass", "pass"]
    assert all("Refunds take 14 days." in prompt for prompt in prompts) and len(prompts) == 2
    assert files_server.hits == {"/notes.txt": 1}
    assert len(list((root / "kept-files").iterdir())) == 1


@pytest.mark.parametrize(
    ("execution", "file"),
    [("execution:\n  cache_enabled: false\n", {}), ("", {"cache": "false"})],
    ids=["cache_enabled-false", "file-cache-false"],
)
def test_without_the_cache_each_run_fetches_the_file(
    write: Write, files_server: FileServer, execution: str, file: dict[str, str]
) -> None:
    files_server.files["/notes.txt"] = b"Version one."
    case = url_case(files_server.url + "/notes.txt", **file)
    root = write({"agent.yaml": AGENT + LOOPBACK + execution + case})
    model, prompts = echo_model()

    run(root, model)
    files_server.files["/notes.txt"] = b"Version two."
    run(root, model)

    assert files_server.hits == {"/notes.txt": 2}
    assert "Version one." in prompts[0] and "Version two." in prompts[1]
    assert not (root / ".holodeck" / "cache").exists()


def test_a_download_that_times_out_names_the_file_and_the_url(
    write: Write, files_server: FileServer
) -> None:
    url = files_server.url + "/slow/ledger.txt"
    execution = "execution:\n  download_timeout: 0.3\n"
    root = write({"agent.yaml": AGENT + LOOPBACK + execution + url_case(url)})

    result = only_run(run(root))

    assert result.status == "error"
    assert "ledger.txt" in (result.error or "") and url in (result.error or "")
    assert "within 0.3 s" in (result.error or "") and "download_timeout" in (result.error or "")


def test_file_timeout_bounds_preparing_one_file(write: Write, files_server: FileServer) -> None:
    url = files_server.url + "/slow/ledger.txt"
    execution = "execution:\n  file_timeout: 0.3\n  download_timeout: 30\n"
    root = write({"agent.yaml": AGENT + LOOPBACK + execution + url_case(url)})

    result = only_run(run(root))

    assert result.status == "error" and url in (result.error or "")
    assert "not ready within 0.3 s" in (result.error or "") and "file_timeout" in (
        result.error or ""
    )


def test_a_url_the_network_settings_do_not_allow_is_not_fetched(
    write: Write, files_server: FileServer
) -> None:
    files_server.files["/notes.txt"] = b"secret"
    root = write({"agent.yaml": AGENT + url_case(files_server.url + "/notes.txt")})

    result = only_run(run(root))

    assert result.status == "error"
    assert "127.0.0.1 is a loopback address" in (result.error or "")
    assert "network: allow:" in (result.error or "")
    assert files_server.hits == {}


# --- Office documents, PDF pages, spreadsheet cells -----------------------------------------


def write_documents(root: Path) -> None:
    data = root / "data"
    data.mkdir(parents=True, exist_ok=True)
    (data / "contract.docx").write_bytes(
        make_docx(["Clause 4: ninety days notice.", "Clause 7: penalty of 2% per week."])
    )
    (data / "deck.pptx").write_bytes(
        make_pptx([("Intro", "Welcome slide"), ("Risks", "Suppliers were late"), ("End", "Bye")])
    )
    (data / "ledger.xlsx").write_bytes(
        make_xlsx(
            {
                "Summary": [["Total", 99]],
                "Orders": [["Order", "Days late"], ["A-1", 0], ["A-2", 9], ["A-3", 4]],
            }
        )
    )
    (data / "letter.pdf").write_bytes(make_pdf([["Page one words"], ["Page two words"]]))


def test_office_documents_pages_and_cells_reach_the_model_as_text(write: Write) -> None:
    root = write(
        {
            "agent.yaml": AGENT
            + """
test_cases:
  - name: documents
    input: Summarise these.
    files:
      - {path: data/contract.docx, type: word, description: the contract}
      - {path: data/deck.pptx, type: powerpoint, pages: [2]}
      - {path: data/ledger.xlsx, type: excel, sheet: Orders, range: "A1:B3"}
      - {path: data/letter.pdf, pages: [2]}
"""
        }
    )
    write_documents(root)
    model, prompts = echo_model()

    assert only_run(run(root, model)).status == "pass"

    (prompt,) = prompts
    assert "contract.docx: the contract" in prompt and "Clause 4: ninety days notice." in prompt
    assert "Suppliers were late" in prompt and "Welcome slide" not in prompt
    assert "| A-2 | 9 |" in prompt and "A-3" not in prompt and "Total" not in prompt
    assert "Page two words" in prompt and "Page one words" not in prompt


@pytest.mark.parametrize(
    ("file", "said"),
    [
        (
            "{path: data/ledger.xlsx, sheet: Missing}",
            "no sheet `Missing`; the workbook has: Summary, Orders",
        ),
        ("{path: data/letter.pdf, pages: [5]}", "page 5 asked for, but the file has 2 pages"),
        ("{path: data/deck.pptx, pages: [4]}", "slide 4 asked for, but the file has 3 slides"),
    ],
)
def test_a_sheet_or_page_the_file_lacks_is_a_case_error(write: Write, file: str, said: str) -> None:
    root = write({"agent.yaml": AGENT + f"test_cases:\n  - input: Read it.\n    files: [{file}]\n"})
    write_documents(root)

    result = only_run(run(root))

    assert result.status == "error" and said in (result.error or "")


@pytest.mark.parametrize(
    ("files", "said"),
    [
        ("[{path: a.txt, url: 'https://files.example/a.txt'}]", "give either `path` or `url`"),
        ("[{url: 'ftp://files.example/a.txt'}]", "must start with http:// or https://"),
        ("[{path: a.docx, pages: [1]}]", "`pages` applies to PDF and PowerPoint files"),
        ("[{path: a.pdf, sheet: One}]", "`sheet` applies to Excel files"),
        ("[{path: a.xlsx, range: 'nonsense!'}]", "is not a cell range"),
        ("[{path: a.txt, cache: false}]", "`cache` applies to a `url`"),
    ],
)
def test_file_entries_are_checked_when_loading(write: Write, files: str, said: str) -> None:
    root = write({"agent.yaml": AGENT + f"test_cases:\n  - input: Read it.\n    files: {files}\n"})
    assert said in refusal(root)


def test_case_level_files_with_turns_say_to_move_them(write: Write) -> None:
    root = write(
        {
            "agent.yaml": AGENT
            + "test_cases:\n  - files: [{path: a.txt}]\n    turns:\n      - input: hi\n",
            "a.txt": "x",
        }
    )
    assert "move `files:` under the turn" in refusal(root)


# --- multi-turn cases: per-turn evaluations, turn_config, code graders ----------------------

GRADER = """
from holodeck.lib.test_runner.code_grader import GraderContext, GraderResult

from helpers import describe


def inspect(ctx: GraderContext) -> GraderResult:
    return GraderResult(score=1.0, reason=describe(ctx), details={"seen": ctx.turn_index})


def returns(ctx: GraderContext):
    return ctx.turn_config["value"]


def explodes(ctx: GraderContext):
    raise KeyError("turn_program")
"""
HELPERS = """
def describe(ctx):
    calls = ",".join(call.name for call in ctx.tool_invocations)
    return (
        f"case={ctx.test_case_name} turn={ctx.turn_index} input={ctx.turn_input} "
        f"answer={ctx.agent_response} truth={ctx.ground_truth} calls={calls} "
        f"context={list(ctx.retrieval_context or [])} config={ctx.turn_config}"
    )
"""


def graded(write: Write, cases: str, **files: str) -> Path:
    return write(
        {
            "agent.yaml": AGENT + cases,
            "graders/checks.py": GRADER,
            "graders/helpers.py": HELPERS,
            **files,
        }
    )


def test_a_code_grader_gets_its_turn_and_turn_config(write: Write) -> None:
    root = graded(
        write,
        """
test_cases:
  - name: ledger-talk
    turns:
      - input: hello there
      - input: what changed?
        ground_truth: what changed?
        retrieval_context: [the ledger]
        turn_config: {turn_program: "subtract(43, 45)"}
        evaluations:
          - {type: code, grader: "graders.checks:inspect"}
          - {type: standard, metric: equality}
""",
    )
    model, _ = echo_model()

    result = only_run(run(root, model))

    assert result.status == "pass"
    first, second = result.turns
    assert first.metrics == []  # no evaluations, ground truth or turn_config of its own
    inspect, equality = second.metrics
    assert inspect.reason == (
        "case=ledger-talk turn=1 input=what changed? answer=what changed? truth=what changed? "
        "calls= context=['the ledger'] config={'turn_program': 'subtract(43, 45)'} "
        '{"seen": 1}'
    )
    assert (equality.name, equality.status) == ("equality", "pass")
    assert [m.name for m in result.metrics] == ["inspect", "equality"]  # rolled up


@pytest.mark.parametrize(
    ("value", "threshold", "status"),
    [
        ("true", None, "pass"),
        ("false", None, "fail"),
        ("0.6", None, "pass"),
        ("0.4", None, "fail"),  # 0.5 without a threshold, as the shipped graders
        ("0.6", "0.8", "fail"),
        ("{score: 0.0, passed: true}", None, "pass"),  # `passed` decides
        ("{score: 1.0, passed: false, reason: no}", None, "fail"),
    ],
)
def test_what_a_grader_returns_decides_its_result(
    write: Write, value: str, threshold: str | None, status: str
) -> None:
    limit = f", threshold: {threshold}" if threshold else ""
    root = graded(
        write,
        f"""
test_cases:
  - turns:
      - input: grade me
        turn_config: {{value: {value}}}
        evaluations: [{{type: code, grader: "graders.checks:returns"{limit}}}]
""",
    )
    result = only_run(run(root, echo_model()[0]))

    assert result.turns[0].metrics[0].status == status
    assert result.status == ("pass" if status == "pass" else "fail")


@pytest.mark.parametrize("fail_on_error", [False, True])
def test_a_grader_that_fails_is_a_metric_error_not_a_crash(
    write: Write, fail_on_error: bool
) -> None:
    root = graded(
        write,
        f"""
test_cases:
  - name: broken
    turns:
      - input: one
        evaluations:
          - {{type: code, grader: "graders.checks:explodes", fail_on_error: {str(fail_on_error).lower()}}}
          - {{type: code, grader: "graders.missing_import:grade"}}
""",
        **{
            "graders/missing_import.py": "import no_such_package\n\ndef grade(ctx):\n    return 1.0\n"
        },
    )
    result = only_run(run(root, echo_model()[0]))

    explodes, missing = result.turns[0].metrics
    assert explodes.status == "error" and "KeyError: 'turn_program' (line 15 of checks.py)" in (
        explodes.error or ""
    )
    assert missing.status == "error" and "no_such_package" in (missing.error or "")
    assert "graders.missing_import:grade" in (missing.error or "")
    assert result.status == ("fail" if fail_on_error else "pass")


def test_a_grader_module_that_does_not_exist_is_a_load_error(write: Write) -> None:
    root = write(
        {
            "agent.yaml": AGENT
            + "evaluations:\n  metrics:\n    - {type: code, grader: 'graders.nowhere:grade'}\n"
            + "test_cases:\n  - input: hi\n"
        }
    )
    message = refusal(root)
    assert "grader module `graders.nowhere:grade` not found" in message
    assert "graders/nowhere.py" in message


@pytest.mark.parametrize(
    ("metric", "said"),
    [
        ("{type: code, grader: 'no colon'}", "is not `module.path:function`"),
        ("{type: code, grader: 'a:b', file: a.py, function: b}", "give `grader` or `file`"),
        ("{type: code}", "give `file` and `function`, or `grader"),
    ],
)
def test_code_metric_forms_are_checked(write: Write, metric: str, said: str) -> None:
    root = write({"agent.yaml": AGENT + f"evaluations:\n  metrics: [{metric}]\n"})
    assert said in refusal(root)


def test_each_turn_with_a_ground_truth_is_scored_and_one_failing_turn_fails_the_case(
    write: Write,
) -> None:
    root = write(
        {
            "agent.yaml": AGENT
            + """
evaluations:
  metrics: [{type: standard, metric: equality}]
test_cases:
  - name: three-turns
    turns:
      - {input: alpha, ground_truth: alpha}
      - {input: beta, ground_truth: gamma}
      - {input: delta, ground_truth: delta}
"""
        }
    )
    result = only_run(run(root, echo_model()[0]))

    assert [[m.status for m in t.metrics] for t in result.turns] == [["pass"], ["fail"], ["pass"]]
    (rolled,) = result.metrics
    assert rolled.status == "fail" and rolled.score == pytest.approx(2 / 3)
    assert rolled.reason is not None and rolled.reason.startswith("turn 2: fail")
    assert result.status == "fail"


def test_the_testing_guides_multi_turn_cases_and_grader_run_as_written(write: Write) -> None:
    page = (Path(__file__).parents[2] / "docs" / "testing.md").read_text(encoding="utf-8")
    section = page.split("### Multi-turn cases")[1].split("### Test cases in their own file")[0]
    cases = re.findall(r"^```yml\n(.*?)^```$", section, flags=re.M | re.S)[0]
    grader = re.findall(r"^```python\n(.*?)^```$", section, flags=re.M | re.S)[0]
    root = write({"agent.yaml": AGENT + cases, "graders/checks.py": grader})

    result = only_run(run(root, echo_model()[0]))  # an agent without tools: no calls

    lookup, division = result.turns
    assert [m.name for m in lookup.metrics] == []  # no metrics of the agent's, none of its own
    numeric, program = division.metrics
    assert numeric.name == "numeric" and result.status == "fail"
    assert (program.status, program.reason) == ("fail", "wanted ['divide'], made []")


def test_a_csv_files_cell_takes_urls_and_paths(write: Write, files_server: FileServer) -> None:
    files_server.files["/terms.txt"] = b"Returns within 30 days."
    root = write(
        {
            "agent.yaml": AGENT + LOOPBACK + "test_cases_file: cases.csv\n",
            "cases.csv": f"input,files\nRead both.,{files_server.url}/terms.txt;notes.txt\n",
            "notes.txt": "Shipping is free.",
        }
    )
    model, prompts = echo_model()

    assert only_run(run(root, model)).status == "pass"
    assert "Returns within 30 days." in prompts[0] and "Shipping is free." in prompts[0]
