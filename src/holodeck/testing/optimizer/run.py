"""The search: coordinate descent over the numeric settings on the train cases, then new
instructions from the proposer, kept only when the holdout cases improve; in cycles,
until nothing helps or a budget ends. Every candidate is a saved, tagged test run."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from holodeck.errors import ExecutionError, ModelError
from holodeck.runtime import NoValidAnswer
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.optimizer import OptimizerSettings
from holodeck.testing.optimizer.coordinates import Coordinate
from holodeck.testing.optimizer.meter import Meter
from holodeck.testing.optimizer.objective import check_objective, score
from holodeck.testing.optimizer.proposer import Proposer
from holodeck.testing.optimizer.settings import Values, check_settings, read_values, with_values
from holodeck.testing.optimizer.split import split_cases
from holodeck.testing.results import TestRun
from holodeck.testing.run_details import describe
from holodeck.testing.run_store import save_run
from holodeck.testing.runner import TestOptions, run_tests, select_cases

Emit = Callable[[dict[str, Any]], None]


@dataclass
class Candidate:
    number: int  # 0: the original
    values: Values
    instructions: str
    run: TestRun
    train: float
    holdout: float | None
    saved: Path
    phase: str

    def scores(self) -> dict[str, float | None]:
        return {"train": self.train, "holdout": self.holdout}


@dataclass
class SearchOutcome:
    search_id: str
    train: list[str]
    holdout: list[str]
    baseline: Candidate
    best: Candidate
    candidates: list[Candidate]
    stopped: str  # why: "converged", "max_cycles", "no proposal" or "<budget> budget"
    calls: int
    cost: Decimal | None  # None: some answer could not be priced
    # why the proposer gave not one proposal in the whole search (None: it gave some, or
    # was never asked): the textual axis was not searched at all
    no_proposal: str | None = None

    @property
    def improved(self) -> bool:
        return self.best is not self.baseline


class _Stop(Exception):
    def __init__(self, budget: str, detail: str) -> None:
        super().__init__(detail)
        self.budget, self.detail = budget, detail


@dataclass
class Search:
    """Search `spec`'s `settings` (its `optimizer:` block, CLI overrides applied)."""

    spec: AgentSpec
    settings: OptimizerSettings
    options: TestOptions
    runs: Path  # where each candidate's run is saved
    emit: Emit
    search_id: str = field(
        default_factory=lambda: datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
    )

    def __post_init__(self) -> None:
        check_settings(self.spec, self.settings)
        self.meter = Meter(limit=self.options.run.rate_limit)
        self.options = replace(self.options, run=replace(self.options.run, rate_limit=self.meter))
        names = [name for name, _ in select_cases(self.spec, self.options)]
        self.train, self.holdout = split_cases(names, self.settings.holdout, self.settings.seed)
        self.candidates: list[Candidate] = []
        self._seen: dict[tuple[Any, ...], Candidate] = {}
        self._most_calls = 0  # calls of the costliest candidate so far
        self._most_cost = Decimal(0)
        self._proposer: Proposer | None = None
        self._tried: list[str] = []  # proposals not kept
        self._proposals = 0  # answers the proposer gave
        self._asked = 0  # times it was asked
        self._unanswered: str | None = None  # why its last try gave no proposal
        self._proposer_down = False  # it failed in a way asking again will not mend

    async def run(self) -> SearchOutcome:
        self.emit(
            {
                "event": "start",
                "search_id": self.search_id,
                "agent": self.spec.name,
                "train": self.train,
                "holdout": self.holdout,
                "budget": self.settings.budget.model_dump(),
            }
        )
        original = self.spec.instructions or ""
        self.best = baseline = await self._evaluate(
            read_values(self.spec, self.settings), original, "baseline"
        )
        if all(c.status == "error" for c in baseline.run.cases):
            first = baseline.run.cases[0].runs[-1].error if baseline.run.cases else None
            raise ExecutionError(f"no case of the original agent could run: {first}")
        check_objective(baseline.run, self.settings, str(self.spec.source))
        if baseline.run.offline:
            self.emit(
                {
                    "event": "warning",
                    "message": "the offline `test` model gives canned answers and its metrics "
                    "are not judged: no candidate can score better than another",
                }
            )
        if self.settings.budget.cost is not None and self.meter.unpriced:
            self.emit(
                {
                    "event": "warning",
                    "message": f"the cost budget cannot be kept: {self.meter.unpriced}",
                }
            )
        stopped = "max_cycles"
        try:
            for cycle in range(1, self.settings.max_cycles + 1):
                self.emit({"event": "cycle", "cycle": cycle})
                moved = await self._numeric() if self.settings.axes.numeric else False
                rewrote = await self._textual() if self.settings.axes.textual else False
                if not (moved or rewrote):
                    stopped = "converged"
                    break
        except _Stop as stop:
            stopped = f"{stop.budget} budget"
            self.emit({"event": "budget_reached", "budget": stop.budget, "detail": stop.detail})
        no_proposal = self._unanswered if self._asked and not self._proposals else None
        if no_proposal is not None and stopped in ("converged", "max_cycles"):
            stopped = "no proposal"  # nothing converged: the instructions were never searched
        result = SearchOutcome(
            self.search_id,
            self.train,
            self.holdout,
            baseline,
            self.best,
            self.candidates,
            stopped,
            self.meter.calls,
            None if self.meter.unpriced else self.meter.cost,
            None
            if no_proposal is None
            else f"the proposer ({self._proposer_label()}) gave no proposal in "
            f"{self._asked} {'try' if self._asked == 1 else 'tries'}: {no_proposal}",
        )
        self.emit(
            {
                "event": "done",
                "stopped": stopped,
                "candidates": len(self.candidates),
                "calls": self.meter.calls,
                "cost": None if result.cost is None else float(result.cost),
                "before": baseline.scores(),
                "after": self.best.scores(),
                "best": self.best.number,
                "settings": self.best.values,
                "instructions_changed": self.best.instructions != original,
                "no_proposal": result.no_proposal,
            }
        )
        return result

    def _proposer_label(self) -> str:
        return self._proposer.label if self._proposer is not None else "proposer"

    # --- the numeric phase: coordinate descent on the train score ---

    async def _numeric(self) -> bool:
        phase = self.settings.numeric_phase
        coordinates = [Coordinate(axis) for axis in self.settings.axes.numeric]
        trials = misses = 0
        moved_any = False
        while True:
            moved = False
            for coordinate in coordinates:
                path = coordinate.axis.path
                for value in coordinate.moves(self.best.values[path]):
                    values = {**self.best.values, path: value}
                    if self._key(values, self.best.instructions) in self._seen:
                        continue
                    candidate = await self._evaluate(values, self.best.instructions, "numeric")
                    trials += 1
                    if candidate.train > self.best.train + self.settings.min_delta:
                        self._keep(
                            candidate, f"train {self.best.train:.3f} -> {candidate.train:.3f}"
                        )
                        moved = moved_any = True
                        misses = 0
                        break
                    misses += 1
                    self._drop(
                        candidate,
                        f"train {candidate.train:.3f} is no better than {self.best.train:.3f}",
                    )
                    if trials >= phase.max_trials or misses >= phase.patience:
                        return moved_any
            if not moved and not any([c.shrink() for c in coordinates]):
                return moved_any

    # --- the textual phase: proposals kept only when the holdout improves ---

    async def _textual(self) -> bool:
        phase = self.settings.textual_phase
        axis = self.settings.axes.textual[0]
        trials = misses = 0
        kept_any = False
        while trials < phase.max_trials and misses < phase.patience and not self._proposer_down:
            failing = [
                c for c in self.best.run.cases if c.name in self.train and c.status != "pass"
            ]
            if not failing:
                self.emit({"event": "proposal_skipped", "reason": "every train case passes"})
                return kept_any
            self._check_budget(extra_calls=1)
            if self._proposer is None:
                self._proposer = Proposer(self.spec, self.settings, self.options.run)
            trials += 1
            self._asked += 1
            try:
                proposal = await self._proposer.propose(
                    self.best.instructions, failing, self._tried
                )
            except NoValidAnswer as exc:  # one bad answer ends nothing: it is a miss
                misses += 1
                self._unanswered = str(exc)
                self.emit({"event": "rejected", "candidate": None, "reason": str(exc)})
                continue
            except ModelError as exc:  # refused or unreachable: asking again will not mend it
                self._unanswered, self._proposer_down = str(exc), True
                self.emit({"event": "proposer_failed", "reason": str(exc)})
                return kept_any
            self._proposals += 1
            text = proposal.instructions.strip()
            self.emit(
                {
                    "event": "proposal",
                    "model": self._proposer.label,
                    "instructions": text,
                    "reason": proposal.reason,
                    "failing": [c.name for c in failing],
                }
            )
            problem = None
            if not text or text == self.best.instructions.strip():
                problem = "the proposal changes nothing"
            elif len(text) > axis.max_chars:
                problem = (
                    f"the proposal has {len(text)} characters, over max_chars {axis.max_chars}"
                )
            elif self._key(self.best.values, text) in self._seen:
                problem = "the proposal was tried before"
            if problem is not None:
                misses += 1
                self._tried.append(text)
                self.emit({"event": "rejected", "candidate": None, "reason": problem})
                continue
            candidate = await self._evaluate(self.best.values, text, "textual")
            accepted, why = self._better_on_holdout(candidate)
            if accepted:
                self._keep(candidate, why)
                kept_any, misses = True, 0
            else:
                self._tried.append(text)
                self._drop(candidate, why)
                misses += 1
        return kept_any

    def _better_on_holdout(self, candidate: Candidate) -> tuple[bool, str]:
        delta = self.settings.min_delta
        best = self.best
        if candidate.holdout is None or best.holdout is None:  # nothing held out
            better = candidate.train > best.train + delta
            return better, f"train {best.train:.3f} -> {candidate.train:.3f} (no holdout cases)"
        if candidate.train < best.train:
            return False, f"train got worse: {best.train:.3f} -> {candidate.train:.3f}"
        holdout = f"holdout {best.holdout:.3f} -> {candidate.holdout:.3f}"
        if candidate.holdout > best.holdout + delta:
            return True, f"{holdout}, train {best.train:.3f} -> {candidate.train:.3f}"
        return False, f"{holdout} did not improve (train {best.train:.3f} -> {candidate.train:.3f})"

    # --- candidates ---

    async def _evaluate(self, values: Values, instructions: str, phase: str) -> Candidate:
        self._check_budget()
        number = len(self.candidates)
        self.emit(
            {
                "event": "candidate_started",
                "candidate": number,
                "phase": phase,
                "settings": values,
                "instructions_changed": instructions != (self.spec.instructions or ""),
            }
        )
        calls, cost = self.meter.calls, self.meter.cost
        spec = with_values(self.spec, values, instructions)
        tags = [f"optimize:{self.search_id}", f"candidate:{number}", f"phase:{phase}"]
        # recorded like any `holodeck test` run: the candidate's settings, models, git state
        details = describe(spec, self.options.run.for_agent(spec), tags)
        run = details.apply(await run_tests(spec, self.options))
        saved = save_run(run, self.runs)
        self._most_calls = max(self._most_calls, self.meter.calls - calls)
        self._most_cost = max(self._most_cost, self.meter.cost - cost)
        train = score(run, self.train, self.settings) or 0.0
        candidate = Candidate(
            number,
            values,
            instructions,
            run,
            train,
            score(run, self.holdout, self.settings),
            saved,
            phase,
        )
        self.candidates.append(candidate)
        self._seen[self._key(values, instructions)] = candidate
        self.emit(
            {
                "event": "candidate_finished",
                "candidate": number,
                "phase": phase,
                "settings": values,
                "scores": candidate.scores(),
                "passed": run.summary.passed,
                "total": run.summary.total,
                "run_id": run.run_id,
                "calls": self.meter.calls,
            }
        )
        return candidate

    def _keep(self, candidate: Candidate, why: str) -> None:
        self.best = candidate
        self.emit({"event": "accepted", "candidate": candidate.number, "reason": why})

    def _drop(self, candidate: Candidate, why: str) -> None:
        self.emit({"event": "rejected", "candidate": candidate.number, "reason": why})

    def _check_budget(self, extra_calls: int = 0) -> None:
        """Stop before work that would go over a budget (a candidate is assumed to cost
        what the costliest one so far did)."""
        budget = self.settings.budget
        if budget.candidates is not None and len(self.candidates) >= budget.candidates:
            raise _Stop(
                "candidates", f"{len(self.candidates)} of {budget.candidates} candidates run"
            )
        need = self.meter.calls + extra_calls + self._most_calls
        if budget.calls is not None and self.candidates and need > budget.calls:
            raise _Stop(
                "calls",
                f"{self.meter.calls} of {budget.calls} model calls used; the next candidate "
                f"needs about {extra_calls + self._most_calls}",
            )
        priced = self.candidates and self.meter.unpriced is None
        if (
            budget.cost is not None
            and priced
            and self.meter.cost + self._most_cost > Decimal(str(budget.cost))
        ):
            raise _Stop(
                "cost",
                f"${self.meter.cost:.6f} of ${budget.cost:g} spent; the next candidate "
                f"costs about ${self._most_cost:.6f}",
            )

    @staticmethod
    def _key(values: Values, instructions: str) -> tuple[Any, ...]:
        return (tuple(sorted(values.items())), instructions.strip())
