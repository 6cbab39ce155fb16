"""The NLP metrics' libraries are the `nlp` extra: `holodeck test` on an agent that scores
with BLEU or ROUGE, where the extra is not installed, stops before any case and says which
extra to install."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

AGENT = """\
name: summariser
model:
  provider: openai
  name: gpt-4o-mini
instructions:
  inline: Summarise what you are given in one sentence.
evaluations:
  metrics:
    - metric: f1_score
test_cases:
  - name: kettle
    input: The kettle boils in two minutes and switches itself off.
    ground_truth: The kettle boils fast and turns itself off.
  - name: toaster
    input: The toaster browns both sides evenly.
    ground_truth: The toaster browns evenly.
    evaluations:
      - metric: {metric}
        threshold: 0.1
"""

INSTALL = "pip install 'holodeck-agents[nlp]'"


def run_test(tmp_path: Path, metric: str, *, hidden: bool) -> subprocess.CompletedProcess[str]:
    (tmp_path / "agent.yaml").write_text(AGENT.format(metric=metric), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    if hidden:
        # packages that shadow the installed ones and fail to import, as when the extra is
        # not installed
        shadow = tmp_path / "without-nlp"
        for package in ("sacrebleu", "rouge_score"):
            (shadow / package).mkdir(parents=True)
            (shadow / package / "__init__.py").write_text(
                f'raise ImportError("No module named {package}")\n', encoding="utf-8"
            )
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(shadow), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "holodeck", "test", "agent.yaml", "--model", "test"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("metric", ["bleu", "rouge", "rougeL"])
def test_an_nlp_metric_without_the_extra_names_the_extra(tmp_path: Path, metric: str) -> None:
    result = run_test(tmp_path, metric, hidden=True)
    assert result.returncode == 2, result.stdout + result.stderr
    said = result.stdout + result.stderr
    assert f"the {metric} metric (test case toaster) needs the nlp extra" in said
    assert INSTALL in said
    assert "Traceback" not in said
    assert "kettle" not in said  # stopped before any case ran


def test_metrics_without_a_library_run_without_the_extra(tmp_path: Path) -> None:
    result = run_test(tmp_path, "f1_score", hidden=True)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    assert "nlp extra" not in result.stdout + result.stderr


def test_an_nlp_metric_with_the_extra_scores(tmp_path: Path) -> None:
    result = run_test(tmp_path, "bleu", hidden=False)
    assert "nlp extra" not in result.stdout + result.stderr
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BLEU: 0.18" in result.stdout
