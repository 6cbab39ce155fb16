"""YAML and JSON documents over their limits (size, values, nesting, alias expansion) are
refused with the limit named and how to raise it: by `holodeck validate` (a real
process) and by a server taking an upload. Test case files have limits of their own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from server_harness import Serve, agent_dir
from test_server_operation import WEATHER, image_archive

MB = 1024 * 1024
HEADER = "name: big\nmodel:\n  provider: test\ninstructions:\n  inline: You help.\n"


def validate(path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("HOLODECK_MAX_")}
    return subprocess.run(
        [sys.executable, "-m", "holodeck", "validate", str(path)],
        capture_output=True,
        text=True,
        env={**clean, **env},
        timeout=120,
    )


def refused(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in done.stderr, done.stderr


def test_an_agent_yaml_over_the_size_limit_is_refused_and_the_limit_can_be_raised(
    tmp_path: Path,
) -> None:
    path = tmp_path / "agent.yaml"
    # one long instruction: quick to parse, so only the size can refuse it
    path.write_text(HEADER.replace("You help.", "x" * (9 * MB)))
    refused(
        validate(path),
        "over the 8.0 MB limit of a definition file",
        "test_cases_file",
        "HOLODECK_MAX_DEFINITION_MB=10",
    )
    done = validate(path, HOLODECK_MAX_DEFINITION_MB="10")
    assert done.returncode == 0, done.stderr


def _many_keys(count: int) -> str:
    return "".join(f"  k{i}: v{i}\n" for i in range(count))


BOMB = "".join(
    [
        "bomb:\n  l0: &a0 [x, x, x, x, x, x, x, x, x, x]\n",
        *(f"  l{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9)),
    ]
)


@pytest.mark.parametrize(
    "body",
    [
        "response_format:\n" + _many_keys(3000),  # read by the fast reader
        "response_format:\n" + _many_keys(3000) + "\t\n",  # a tab: the round-trip parser's
        "response_format:\n  a: 1\n  a: 2\n" + _many_keys(3000),  # a duplicate key: the same
        BOMB,  # a billion laughs: 10^9 values once expanded
    ],
    ids=["plain", "tab", "duplicate-key", "alias-bomb"],
)
def test_a_document_of_too_many_values_is_refused_naming_the_limit(
    tmp_path: Path, body: str
) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(HEADER + body)
    refused(
        validate(path, HOLODECK_MAX_DEFINITION_VALUES="2000"),
        "document expands to more than 2000 values (the limit of a definition file)",
        "HOLODECK_MAX_DEFINITION_VALUES=8000",
    )


def test_a_raised_value_limit_accepts_a_larger_document(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(HEADER + "response_format:\n" + _many_keys(200_001))
    refused(validate(path), "more than 200000 values")
    done = validate(path, HOLODECK_MAX_DEFINITION_VALUES="250000")
    assert done.returncode == 0, done.stderr


def test_deep_nesting_is_refused_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(HEADER + "response_format:\n  deep: " + "[" * 150 + "]" * 150 + "\n")
    refused(validate(path), "agent.yaml:7:", "values nest more than 100 levels deep")


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_a_deeply_nested_json_test_cases_file_is_a_clear_error(tmp_path: Path, suffix: str) -> None:
    root = agent_dir(tmp_path, "deep", test_cases_file=f"cases{suffix}")
    deep = "[" * 100_000 + "]" * 100_000
    case = '{"input": "hi", "ground_truth": ' + deep + "}"
    text = case if suffix == ".jsonl" else "[" + case + "]"
    (root / f"cases{suffix}").write_text(text)
    refused(validate(root), f"cases{suffix}", "values nest more than 100 levels deep")


def test_test_cases_files_have_their_own_limits(tmp_path: Path) -> None:
    cases = [{"name": f"c{i}", "input": f"question {i}"} for i in range(200)]
    inline = agent_dir(tmp_path / "inline", "inline", test_cases=cases)
    in_file = agent_dir(tmp_path / "file", "file", test_cases_file="cases.json")
    (in_file / "cases.json").write_text(json.dumps(cases))
    small = {"HOLODECK_MAX_DEFINITION_VALUES": "300"}
    refused(validate(inline, **small), "more than 300 values")
    assert validate(in_file, **small).returncode == 0
    refused(
        validate(in_file, HOLODECK_MAX_TEST_CASES_VALUES="300"),
        "cases.json",
        "(the limit of a test cases file)",
        "HOLODECK_MAX_TEST_CASES_VALUES=1200",
    )
    refused(validate(in_file, HOLODECK_MAX_TEST_CASES_MB="0"), "HOLODECK_MAX_TEST_CASES_MB='0'")


def test_an_oversized_test_cases_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    root = agent_dir(tmp_path, "sparse", test_cases_file="cases.yaml")
    with (root / "cases.yaml").open("wb") as file:
        file.truncate(65 * MB)  # sparse: no disk used, and nothing worth reading
    refused(
        validate(root),
        "cases.yaml",
        "over the 64.0 MB limit of a test cases file",
        "HOLODECK_MAX_TEST_CASES_MB=65",
    )


def test_an_upload_over_a_limit_is_refused_naming_it(serve: Serve) -> None:
    # a 9 MB config.yaml (a comment) that compresses to a few kilobytes
    config = "spec_version: 1\nname: huge\ninstructions: AGENTS.md\n#" + "x" * (9 * MB) + "\n"
    archive = image_archive({"config.yaml": config, "AGENTS.md": "Help.\n"})
    with serve(WEATHER, allow_uploads=True) as server:
        answer = server.client.post(
            "/v1/agents", content=archive, headers={"Content-Type": "application/gzip"}
        )
        assert answer.status_code == 422, answer.text
        error = answer.json()["error"]
        assert "over the 8.0 MB limit of a definition file" in error["message"]
        assert "HOLODECK_MAX_DEFINITION_MB" in error["message"]
        assert server.client.get("/v1/agents/huge").status_code == 404
