"""Runs over time: what a saved run says was tested (settings without secrets, models,
git state, prompt version, tags), `holodeck test --shard I/N`, and `holodeck test merge`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conftest import Write
from holodeck.cli.main import cli
from holodeck.config.loader import load_agent
from holodeck.runtime import RunOptions
from holodeck.testing.results import TestRun
from holodeck.testing.run_details import models_used
from holodeck.testing.run_store import save_run
from holodeck.testing.runner import TestOptions, select_cases
from holodeck.testing.shards import Shard
from run_builders import case, make_run

TOOLS = """
def order_status(order_id: str) -> dict:
    return {"order": order_id, "status": "shipped"}
"""
HEAD = """
name: shop
model: {provider: openai, name: gpt-4o}
instructions: {inline: Help customers.}
tools:
  - {type: function, name: order_status, file: tools.py, function: order_status}
"""


def cases_yaml(count: int, failing: tuple[int, ...] = ()) -> str:
    """`count` cases named c1..cN; those in `failing` expect a tool call they never get."""
    lines = ["test_cases:"]
    for number in range(1, count + 1):
        lines.append(f"  - name: c{number}")
        lines.append(f"    input: Where is order {number}?")
        expected = "[{name: order_status, count: 2}]" if number in failing else "[order_status]"
        lines.append(f"    expected_tools: {expected}")
    return "\n".join(lines) + "\n"


def shop(write: Write, count: int = 7, failing: tuple[int, ...] = (), extra: str = "") -> Path:
    return write({"agent.yaml": HEAD + extra + cases_yaml(count, failing), "tools.py": TOOLS})


def holodeck(*args: str, cwd: Path) -> Result:
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, list(args))
    finally:
        os.chdir(previous)


def saved(cwd: Path) -> list[TestRun]:
    """The runs saved under `cwd`, oldest first."""
    files = (cwd / ".holodeck" / "runs").glob("*.json")
    runs = [TestRun.model_validate_json(f.read_bytes()) for f in files]
    return sorted(runs, key=lambda r: r.started_at)


def latest(cwd: Path) -> TestRun:
    return saved(cwd)[-1]


def merged_run(result: Result, cwd: Path) -> TestRun:
    """The run `holodeck test merge` saved (it starts when its first shard started)."""
    (path,) = re.findall(r"saved (\S+\.json)", result.output)
    return TestRun.model_validate_json((cwd / path).read_bytes())


# --- shards ------------------------------------------------------------------------------


def test_shards_partition_the_selected_cases_for_every_count(write: Write) -> None:
    spec = load_agent(shop(write, 11))
    for keyword in (None, "order 1"):  # after -k: c1, c10, c11
        whole = [n for n, _ in select_cases(spec, TestOptions(keyword=keyword))]
        for count in (1, 2, 3, 4, 7, 11, 13):
            slices = [
                [
                    n
                    for n, _ in select_cases(
                        spec, TestOptions(keyword=keyword, shard=Shard(i, count))
                    )
                ]
                for i in range(1, count + 1)
            ]
            names = [n for s in slices for n in s]
            assert sorted(names) == sorted(whole)  # the union is every case...
            assert len(names) == len(set(names))  # ...each in one shard only
            sizes = [len(s) for s in slices]
            assert max(sizes) - min(sizes) <= 1  # balanced


def test_shards_are_the_same_in_processes_with_different_hash_seeds(
    write: Write, tmp_path: Path
) -> None:
    root = shop(write, 9)
    script = (
        "import sys, json\n"
        "from holodeck.config.loader import load_agent\n"
        "from holodeck.testing.runner import TestOptions, select_cases\n"
        "from holodeck.testing.shards import Shard\n"
        "spec = load_agent(sys.argv[1])\n"
        "print(json.dumps([[n for n, _ in select_cases(spec, TestOptions(shard=Shard(i, 4)))]"
        " for i in range(1, 5)]))\n"
    )
    answers = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", script, str(root)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=120,
        )
        answers.append(json.loads(done.stdout))
    assert answers[0] == answers[1]
    assert sorted(n for s in answers[0] for n in s) == sorted(f"c{i}" for i in range(1, 10))


@pytest.mark.parametrize("value", ["0/3", "4/3", "2/0", "a/b", "3", "1/3/4", "-1/3"])
def test_a_bad_shard_is_a_usage_error_naming_the_form(
    write: Write, tmp_path: Path, value: str
) -> None:
    result = holodeck(
        "test", str(shop(write, 3)), "--model", "test", "--shard", value, cwd=tmp_path
    )
    assert result.exit_code == 2
    assert "I/N" in result.output and repr(value) in result.output
    assert not (tmp_path / ".holodeck").exists()  # nothing ran


def test_a_shard_runs_its_slice_and_records_it(write: Write, tmp_path: Path) -> None:
    root = shop(write, 7)
    result = holodeck("test", str(root), "--model", "test", "--shard", "2/3", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    run = latest(tmp_path)
    assert run.shard == "2/3"
    assert [c.name for c in run.cases] == ["c2", "c5"]
    assert "shard 2/3" in result.output  # the report's header says which slice it is


def test_an_empty_shard_passes_with_no_cases_and_says_so(write: Write, tmp_path: Path) -> None:
    root = shop(write, 2)
    result = holodeck("test", str(root), "--model", "test", "--shard", "3/4", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert "shard 3/4 has no cases" in result.output
    run = latest(tmp_path)
    assert run.shard == "3/4" and run.cases == [] and run.summary.total == 0


def test_no_case_matching_the_filter_is_still_an_error_with_a_shard(
    write: Write, tmp_path: Path
) -> None:
    root = shop(write, 2)
    result = holodeck(
        "test", str(root), "--model", "test", "-k", "nothing", "--shard", "1/2", cwd=tmp_path
    )
    assert result.exit_code == 2
    assert "no test case matches" in result.output


# --- merge -------------------------------------------------------------------------------


def test_merged_shards_equal_the_unsharded_run(write: Write, tmp_path: Path) -> None:
    root = shop(write, 8, failing=(3, 6))
    whole = holodeck("test", str(root), "--model", "test", cwd=tmp_path)
    assert whole.exit_code == 1, whole.output
    unsharded = latest(tmp_path)
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    shard_ids = []
    for index in (1, 2, 3):
        result = holodeck(
            "test", str(root), "--model", "test", "--shard", f"{index}/3", "--tag", f"s{index}",
            cwd=tmp_path,
        )  # fmt: skip
        assert result.exit_code in (0, 1), result.output
        run = latest(tmp_path)
        shard_ids.append(run.run_id)
        save_run(run, artifacts)  # as CI downloads each shard's artifact into one folder

    merged_result = holodeck("test", "merge", str(artifacts), "-o", "merged.json", cwd=tmp_path)
    assert merged_result.exit_code == 1, merged_result.output  # like `holodeck test`
    merged = merged_run(merged_result, tmp_path)
    assert merged.merged_from == shard_ids and merged.shard is None
    assert [c.name for c in merged.cases] == [c.name for c in unsharded.cases]
    assert [c.status for c in merged.cases] == [c.status for c in unsharded.cases]
    mine, theirs = merged.summary, unsharded.summary
    for field in ("total", "passed", "failed", "errors", "flaky", "input_tokens", "output_tokens"):
        assert getattr(mine, field) == getattr(theirs, field), field
    assert merged.tags == ["s1", "s2", "s3"]
    report = json.loads((tmp_path / "merged.json").read_text())
    assert [c["name"] for c in report["cases"]] == [c.name for c in unsharded.cases]
    assert "FAIL" in merged_result.output and "c3" in merged_result.output
    assert "merged from 3 runs" in merged_result.output


def test_merge_takes_ids_latest_and_globs(write: Write, tmp_path: Path) -> None:
    root = shop(write, 4)
    for index in (1, 2):
        assert (
            holodeck(
                "test", str(root), "--model", "test", "--shard", f"{index}/2", cwd=tmp_path
            ).exit_code
            == 0
        )
    first, second = saved(tmp_path)
    by_id = holodeck("test", "merge", first.run_id[:-2], "latest", cwd=tmp_path)
    assert by_id.exit_code == 0, by_id.output
    merged = merged_run(by_id, tmp_path)
    assert merged.merged_from == [first.run_id, second.run_id]
    # the merged run is no shard: out of the folder the glob reads
    (tmp_path / ".holodeck" / "runs" / f"{merged.run_id}.json").rename(tmp_path / "merged.json")
    pattern = str(tmp_path / ".holodeck" / "runs" / "*.json")
    by_glob = holodeck("test", "merge", pattern, cwd=tmp_path)
    assert by_glob.exit_code == 0, by_glob.output
    assert merged_run(by_glob, tmp_path).summary.total == 4


def _runs_dir(tmp_path: Path, *runs: TestRun) -> Path:
    folder = tmp_path / "runs-in"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    for run in runs:
        save_run(run, folder)
    return folder


def _shard_run(run_id: str, shard: str, *names: str, minutes: int = 0, **update: object) -> TestRun:
    run = make_run(run_id, [case(n) for n in names], minutes=minutes)
    return run.model_copy(update={"shard": shard, "prompt_version": "v1", **update})


@pytest.mark.parametrize(
    ("runs", "says"),
    [
        (
            [_shard_run("a1", "1/2", "x"), _shard_run("b1", "2/2", "y", agent="billing")],
            ["different agents", "support (a1)", "billing (b1)"],
        ),
        (
            [_shard_run("a1", "1/2", "x"), _shard_run("b1", "2/2", "y", prompt_version="v2")],
            ["different prompt versions", "v1 (a1)", "v2 (b1)"],
        ),
        (
            [_shard_run("a1", "1/2", "x"), _shard_run("b1", "1/2", "y", minutes=1)],
            ["shard 1/2 is given twice", "a1", "b1"],
        ),
        (
            [_shard_run("a1", "1/2", "x"), _shard_run("b1", "2/3", "y")],
            ["shards of different splits", "1/2 (a1)", "2/3 (b1)"],
        ),
        (
            [_shard_run("a1", "1/2", "x", "y"), _shard_run("b1", "2/2", "y", minutes=1)],
            ["cases in more than one run", "'y' (a1, b1)"],
        ),
    ],
    ids=["agents", "prompt-versions", "same-shard", "splits", "overlapping-cases"],
)
def test_merge_refuses_runs_that_do_not_belong_together_unless_forced(
    tmp_path: Path, runs: list[TestRun], says: list[str]
) -> None:
    folder = _runs_dir(tmp_path, *runs)
    refused = holodeck("test", "merge", str(folder), cwd=tmp_path)
    assert refused.exit_code == 2, refused.output
    assert "cannot merge these runs" in refused.output and "--force" in refused.output
    for text in says:
        assert text in refused.output
    assert "Traceback" not in refused.output
    assert not (tmp_path / ".holodeck").exists()  # nothing was saved

    forced = holodeck("test", "merge", str(folder), "--force", cwd=tmp_path)
    assert forced.exit_code == 0, forced.output
    merged = merged_run(forced, tmp_path)
    assert sorted(merged.merged_from) == ["a1", "b1"]
    assert len({c.name for c in merged.cases}) == len(merged.cases)  # each case once


def test_merge_warns_about_missing_shards(tmp_path: Path) -> None:
    folder = _runs_dir(
        tmp_path, _shard_run("a1", "1/4", "x"), _shard_run("c1", "3/4", "z", minutes=1)
    )
    result = holodeck("test", "merge", str(folder), cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert "shards 2/4, 4/4 are missing" in result.output
    assert [c.name for c in merged_run(result, tmp_path).cases] == ["x", "z"]


def test_merge_of_unknown_runs_says_which(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for ref, says in (
        ("empty", "holds no run files"),
        ("nowhere/*.json", "no run file matches"),
        ("no-such-id", "no saved run matches"),
    ):
        result = holodeck("test", "merge", ref, cwd=tmp_path)
        assert result.exit_code == 2 and says in result.output, result.output


# --- what a run records --------------------------------------------------------------------


def test_tags_round_trip_through_the_saved_run(write: Write, tmp_path: Path) -> None:
    root = shop(write, 1)
    result = holodeck(
        "test", str(root), "--model", "test", "--tag", "nightly", "--tag", "pr 12", cwd=tmp_path
    )
    assert result.exit_code == 0, result.output
    (path,) = (tmp_path / ".holodeck" / "runs").glob("*.json")
    assert json.loads(path.read_text())["tags"] == ["nightly", "pr 12"]
    assert latest(tmp_path).tags == ["nightly", "pr 12"]


SECRET_REF = "sk-from-the-environment-0123456789"
SECRET_LITERAL = "sk-written-in-the-file-9876543210"


def test_secrets_never_reach_the_saved_settings(
    write: Write, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("API_KEY", SECRET_REF)
    monkeypatch.setenv("SEARCH_HOST", "search.internal.example:9200")
    root = write(
        {
            "agent.yaml": """
                name: shop
                model: {provider: openai, name: gpt-4o, api_key: "${API_KEY}"}
                instructions: {inline: "Search at http://${SEARCH_HOST}/orders."}
                tools:
                  - {type: function, name: order_status, file: tools.py, function: order_status}
                evaluations:
                  model: {provider: openai, name: gpt-4o-mini, api_key: SECRET_LITERAL}
                  metrics: [{metric: relevance}]
                test_cases:
                  - {name: c1, input: Where is order 1?, expected_tools: [order_status]}
                """.replace("SECRET_LITERAL", SECRET_LITERAL),
            "tools.py": TOOLS,
        }
    )
    result = holodeck("test", str(root), "--model", "test", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    (path,) = (tmp_path / ".holodeck" / "runs").glob("*.json")
    text = path.read_text()
    assert SECRET_REF not in text and SECRET_LITERAL not in text
    assert "search.internal.example" not in text  # a ${VAR} value, in no secret field
    settings = latest(tmp_path).settings
    assert settings["model"]["api_key"] == "***"
    assert settings["evaluations"]["model"]["api_key"] == "***"
    assert settings["instructions"] == "Search at http://***/orders."
    assert settings["model"]["name"] == "gpt-4o"  # the rest is there as written
    assert "test_cases" not in settings  # the run holds the cases


def test_a_run_records_its_models_and_prompt_version_for_both_formats(
    write: Write, tmp_path: Path
) -> None:
    image = write(
        {
            "config.yaml": "spec_version: 1\nname: helper\ninstructions: AGENTS.md\n"
            "llm:\n  model: openai/gpt-4o-mini\n",
            "AGENTS.md": "Answer briefly.\n",
            "tests/cases.yaml": "evaluations:\n  metrics: [{metric: coherence}]\n"
            "test_cases:\n  - {name: hi, input: Hello}\n",
        }
    )
    yaml_agent = shop(write, 1, extra="evaluations:\n  metrics: [{metric: coherence}]\n")
    for root in (image, yaml_agent):
        result = holodeck("test", str(root), "--model", "test", cwd=tmp_path)
        assert result.exit_code == 0, result.output
        run = latest(tmp_path)
        assert run.prompt_version and run.prompt_version.startswith("auto-")
        assert run.models == {"agent": "test", "judge": "test"}
        assert run.settings["name"] == run.agent
    # an instructions file's text is not copied: the prompt version names it
    assert "Answer briefly" not in json.dumps(saved(tmp_path)[0].settings)


def test_judges_are_named_by_metric_when_their_models_differ(write: Write) -> None:
    root = shop(
        write,
        1,
        extra="evaluations:\n  model: {provider: anthropic, name: claude-sonnet-4-5}\n"
        "  metrics:\n    - {metric: coherence}\n    - {metric: bleu}\n"
        "    - {type: geval, name: Polite, criteria: Is polite., "
        "model: {provider: openai, name: gpt-4o-mini}}\n",
    )
    spec = load_agent(root, environ={"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"})
    assert models_used(spec, RunOptions(), "openai/gpt-4o", offline=False) == {
        "agent": "openai/gpt-4o",
        "judge": "anthropic/claude-sonnet-4-5",
        "judge:Polite": "openai/gpt-4o-mini",
    }
    assert models_used(spec, RunOptions(model="openai/o3"), "openai/o3", offline=False) == {
        "agent": "openai/o3",
        "judge": "openai/o3",
    }


def test_a_simulated_user_and_conversation_judges_are_named(write: Write) -> None:
    simulated = (
        "  - name: refund\n    simulate: {persona: Curt., goal: A refund.}\n"
        "    evaluations: [goal_completion]\n"
    )
    root = shop(
        write,
        1,
        extra="evaluations:\n  model: {provider: anthropic, name: claude-sonnet-4-5}\n"
        "  user_model: {provider: openai, name: gpt-4o-mini}\n  metrics: [{metric: bleu}]\n",
    )
    text = (root / "agent.yaml").read_text() + simulated
    (root / "agent.yaml").write_text(text)
    spec = load_agent(root, environ={"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"})
    assert models_used(spec, RunOptions(), "openai/gpt-4o", offline=False) == {
        "agent": "openai/gpt-4o",
        "user": "openai/gpt-4o-mini",
        "judge": "anthropic/claude-sonnet-4-5",
    }
    assert models_used(spec, RunOptions(model="test"), "test", offline=True) == {
        "agent": "test",
        "user": "test",
        "judge": "test",
    }


def _git(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        ["git", "-c", "user.email=t@localhost", "-c", "user.name=t", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.strip()


def test_a_run_in_a_git_repository_records_its_commit_and_changes(
    write: Write, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    root = shop(write, 1)
    outside = holodeck("test", str(root), "--model", "test", cwd=tmp_path)
    assert outside.exit_code == 0, outside.output
    assert latest(tmp_path).git is None  # not in a repository

    _git("init", "-q", cwd=root)
    _git("add", ".", cwd=root)
    _git("commit", "-q", "-m", "agent", cwd=root)
    commit = _git("rev-parse", "HEAD", cwd=root)
    clean = holodeck("test", str(root), "--model", "test", cwd=root)  # saves runs inside it
    assert clean.exit_code == 0, clean.output
    run = latest(root)
    assert run.git is not None and (run.git.commit, run.git.dirty) == (commit, False)
    again = holodeck("test", str(root), "--model", "test", cwd=root)  # its own runs: clean
    assert again.exit_code == 0 and latest(root).git == run.git

    (root / "tools.py").write_text(TOOLS + "\n# changed\n")
    changed = holodeck("test", str(root), "--model", "test", cwd=root)
    assert changed.exit_code == 0, changed.output
    run = latest(root)
    assert run.git is not None and (run.git.commit, run.git.dirty) == (commit, True)


def test_test_help_names_its_merge_subcommand(tmp_path: Path) -> None:
    shown = holodeck("test", "--help", cwd=tmp_path)
    assert shown.exit_code == 0
    assert "holodeck test merge RUN..." in shown.output and "--shard I/N" in shown.output
    assert "holodeck test view [PATH]" in shown.output
    assert "holodeck test optimize PATH" in shown.output
    merge_help = holodeck("test", "merge", "--help", cwd=tmp_path)
    assert merge_help.exit_code == 0
    assert "Combine the runs of a sharded suite" in merge_help.output
