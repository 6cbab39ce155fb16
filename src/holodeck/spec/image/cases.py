"""An image's test cases: `tests/*.yaml`, each `{evaluations?, test_cases: [...]}`."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from holodeck.spec.diagnostics import SpecError
from holodeck.spec.load_context import LoadContext
from holodeck.spec.models.base import Strict
from holodeck.spec.models.cases import TestCase
from holodeck.spec.models.evaluations import EvaluationConfig
from holodeck.spec.references import KnownTools, References
from holodeck.spec.validation.errors import validate
from holodeck.spec.yaml.limits import TEST_CASES
from holodeck.spec.yaml.source import read_yaml


class TestFile(Strict):
    __test__ = False

    evaluations: EvaluationConfig | None = None
    test_cases: list[TestCase] = Field(default_factory=list)


def load_image_tests(
    root: Path, ctx: LoadContext, tools: KnownTools
) -> tuple[EvaluationConfig | None, tuple[TestCase, ...]]:
    """Cases from every tests/*.yaml, checked against the image's tools and files."""
    directory = root / "tests"
    if not directory.is_dir():
        return None, ()
    evaluations: EvaluationConfig | None = None
    evaluations_from: Path | None = None
    cases: list[TestCase] = []
    seen_names: dict[str, str] = {}
    files = sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
    for path in files:
        try:
            doc = read_yaml(path, TEST_CASES)
        except SpecError as exc:
            ctx.collector.extend(exc.diagnostics)
            continue
        if doc.data is None:
            continue
        parsed = validate(TestFile, ctx.expand(doc), doc, ctx.collector)
        if parsed is None:
            continue
        refs = References(doc, root, ctx)
        refs.test_cases(parsed.test_cases, ("test_cases",), tools, seen_names)
        if parsed.evaluations is not None:
            refs.metrics(parsed.evaluations.metrics, ("evaluations", "metrics"))
            if parsed.evaluations.model is not None:
                refs.model(parsed.evaluations.model, ("evaluations", "model"))
            if parsed.evaluations.user_model is not None:
                refs.model(parsed.evaluations.user_model, ("evaluations", "user_model"))
        if parsed.evaluations is not None:
            if evaluations_from is not None:
                ctx.collector.add(
                    doc.diagnostic(
                        ("evaluations",),
                        f"evaluations are already defined in {evaluations_from.name}",
                        hint="define `evaluations` in one tests/ file; per-case overrides go "
                        "under each test case's `evaluations`",
                    )
                )
            else:
                evaluations, evaluations_from = parsed.evaluations, path
        cases.extend(parsed.test_cases)
    return evaluations, tuple(cases)
