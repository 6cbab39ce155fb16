"""Dependencies in plain sight: HoloDeck's own modules are imported at the top of the
module that uses them (where readers and import-linter see them), and deferring stays
for heavy third-party libraries, so that `holodeck validate` loads no model SDK."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src" / "holodeck"

# (module file below src/holodeck, imported module) -> why the import stays in a function
DEFERRED = {
    ("cli/deploy.py", "holodeck.cli"): (
        "the image build and manifest code (deploy_ship, deploy_targets) loads only when "
        "--build or --emit asks for it, not for every `holodeck deploy`"
    ),
    ("llm/providers.py", "holodeck.net"): (
        "`checked_client` loads httpx2; build_model is reached from `holodeck validate`"
    ),
    ("llm/providers.py", "holodeck.llm.offline_model"): (
        "the offline model subclasses pydantic_ai's; loaded only for the `test` provider"
    ),
    ("llm/providers.py", "holodeck.llm.openai_requests"): (
        "it subclasses the openai SDK's client; loaded only for OpenAI-style providers"
    ),
    ("llm/run_model.py", "holodeck.llm.model_cost"): (
        "the priced model subclasses pydantic_ai's; loaded only for a model with a `cost:` "
        "block, and run_model is reached from `holodeck validate`"
    ),
    ("llm/hosted.py", "holodeck.llm.openai_requests"): (
        "it subclasses the openai SDK's client; loaded only when a hosted model is built"
    ),
    ("llm/run_model.py", "holodeck.llm.rate_limit"): (
        "it subclasses pydantic_ai's model; search.tool_index, which builds its models with "
        "run_model, is imported by `holodeck validate`"
    ),
    ("cli/test.py", "holodeck.cli"): (
        "the run (cli/run_tests.py) loads pydantic-ai and the metrics: `holodeck test --help` "
        "needs neither, and --timings counts them as the import phase"
    ),
    ("scaffold.py", "holodeck.spec.json_schema"): (
        "the schema `init` writes is built from the pydantic models: `holodeck init --help` "
        "and `holodeck --help` load no pydantic"
    ),
    ("cli/test_capture.py", "holodeck.cli"): (
        "the capture (cli/run_capture.py) reads saved sessions with pydantic-ai: "
        "`holodeck test capture --help` needs none of it"
    ),
    ("cli/redteam.py", "holodeck.cli"): (
        "the scan (cli/run_redteam.py) loads the runtime and pydantic-ai: "
        "`holodeck redteam --help` needs neither"
    ),
    ("cli/test_optimize.py", "holodeck.cli"): (
        "the search (cli/run_optimize.py) loads pydantic-ai and the metrics: "
        "`holodeck test optimize --help` needs neither"
    ),
    ("cli/chat/command.py", "holodeck.cli.chat"): (
        "the session (cli/chat/run_chat.py) loads the runtime and pydantic-ai: "
        "`holodeck chat --help` needs neither"
    ),
    ("cli/validate.py", "holodeck.search.checks"): (
        "the search pipeline and numpy (about 0.2 s): only a definition with a search tool "
        "needs them"
    ),
    ("server/a2a/_routes.py", "holodeck.server.a2a._handler"): (
        "it is built on the a2a-sdk (about 1 s to import, an extra): only the first A2A "
        "request loads it, and a server without the package answers 501"
    ),
    ("tools/a2a/_remote.py", "holodeck.tools.a2a._transport"): (
        "it loads httpx for the a2a-sdk client: only a call of a `type: a2a` tool needs it"
    ),
    ("runtime/toolsets/_assembly.py", "holodeck.search.agent_tools"): (
        "the search pipeline and numpy (about 0.2 s of every run's start): only an agent "
        "with a search tool needs them"
    ),
    ("runtime/toolsets/_assembly.py", "holodeck.memory"): (
        "long-term memory's bank loads the search stores and numpy: only an agent with "
        "memory.long_term needs them"
    ),
    ("search/embeddings/_build.py", "holodeck.net"): (
        "`checked_client` loads httpx2; search.embeddings is imported by `holodeck validate`"
    ),
}

# what `holodeck validate` must not load: model SDKs, servers, tracing, stores, terminal UI
HEAVY = {
    "pydantic_ai",
    "openai",
    "anthropic",
    "google",
    "mcp",
    "torch",
    "sentence_transformers",
    "chromadb",
    "qdrant_client",
    "redis",
    "psycopg",
    "opentelemetry",
    "fastapi",
    "starlette",
    "uvicorn",
    "httpx",
    "httpx2",
    "rich",
    "prompt_toolkit",
    "jinja2",
    "sacrebleu",
    "rouge_score",
}


def _own_imports_in_functions() -> dict[tuple[str, str], list[int]]:
    """(file, module) -> lines, for every import of a HoloDeck module inside a function."""
    found: dict[tuple[str, str], list[int]] = {}
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC).as_posix()
        package = "holodeck." + ".".join(path.relative_to(SRC).parent.parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Import):
                    modules = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level:  # relative: resolve it
                    base = package.rstrip(".").split(".")
                    base = base[: len(base) - (node.level - 1)]
                    modules = [".".join([*base, *([node.module] if node.module else [])])]
                elif isinstance(node, ast.ImportFrom):
                    modules = [node.module or ""]
                else:
                    continue
                for module in modules:
                    if module == "holodeck" or module.startswith("holodeck."):
                        found.setdefault((relative, module), []).append(node.lineno)
    return found


def test_holodeck_modules_are_imported_at_the_module_top() -> None:
    found = _own_imports_in_functions()
    hidden = [
        f"src/holodeck/{file}:{line}: `{module}` imported inside a function"
        for (file, module), lines in sorted(found.items())
        if (file, module) not in DEFERRED
        for line in lines
    ]
    assert not hidden, (
        "import these at the module top (if the module loads a heavy library, defer that "
        "library inside it instead), or add an entry with its reason to DEFERRED:\n"
        + "\n".join(hidden)
    )


def test_every_deferred_import_still_exists() -> None:
    stale = sorted(set(DEFERRED) - set(_own_imports_in_functions()))
    assert not stale, f"remove these from DEFERRED, they are imported at the top now: {stale}"


def _loaded_by(args: list[str], watched: set[str], cwd: Path) -> list[str]:
    """Which of `watched` (top-level packages, or whole module names) `holodeck ARGS`
    loaded; the command must succeed."""
    code = (
        "import sys\n"
        "from holodeck.cli.main import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "except SystemExit as exc:\n"
        "    status = exc.code\n"
        f"watched = set({sorted(watched)!r})\n"
        "loaded = sorted({m.split('.')[0] for m in sys.modules} & watched | set(sys.modules) & watched)\n"
        "print('STATUS', status, 'LOADED', ','.join(loaded), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
    )
    report = done.stderr.strip().splitlines()[-1]
    assert report.startswith("STATUS 0 LOADED"), done.stdout + done.stderr
    return [name for name in report.removeprefix("STATUS 0 LOADED").strip().split(",") if name]


def test_validate_loads_no_model_sdk_server_or_terminal_library() -> None:
    examples = [str(REPO / "examples" / name) for name in ("weather", "research", "support-image")]
    loaded = _loaded_by(["validate", *examples], HEAVY, REPO)
    assert loaded == [], f"`holodeck validate` loaded: {loaded}"


def test_an_agent_without_a_search_tool_runs_without_the_search_pipeline(tmp_path: Path) -> None:
    weather = str(REPO / "examples" / "weather")
    report = str(tmp_path / "report.json")
    loaded = _loaded_by(
        ["test", weather, "--model", "test", "-o", report], {"numpy", "holodeck.search"}, tmp_path
    )
    assert loaded == [], f"`holodeck test` of an agent without a search tool loaded: {loaded}"


def test_a_run_loads_no_pattern_engine_or_run_comparison_it_does_not_use(tmp_path: Path) -> None:
    # `regex` runs pattern guardrails, `--compare` compares saved runs: a run of an agent
    # without guardrails, not comparing, starts without them
    weather = str(REPO / "examples" / "weather")
    watched = {"regex", "holodeck.cli.run_compare", "holodeck.testing.comparison"}
    loaded = _loaded_by(["test", weather, "--model", "test"], watched, tmp_path)
    assert loaded == [], f"`holodeck test` of an agent without guardrails loaded: {loaded}"
