"""The grader's engine: try a subject on many Cases, shrink each failure to a smallest
counterexample, and name the catalogued mistake whose results it reproduces: on the
counterexample, on every Case tried and, when look-alike mistakes agree on all of those,
on a Case searched for where they differ (``Grader.discriminating_case``).

Deterministic: the edge cases come first, then the Cases hypothesis draws with a fixed
seed (integer inputs and smaller Cases first). A failure of one output (out, dx, dw or
db) has a kind: "wrong values", "wrong shape", or the exception or return it came with.
Shrinking walks to a one-step-smaller Case (``convcore.mistakes.case.one_step_smaller``)
that fails the same output the same way, until none does: no neighbour of the reported
counterexample fails that way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import combinations
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed

from ..compare import compare_tensor
from ..mistakes import Case, Failure, Mistake, Subject, get_convention, mistakes_for, one_step_smaller, outcome_equal
from ..mistakes.conventions import call_plainly
from .defaults import DEFAULT_EXAMPLES
from .space import cases, edge_cases

__all__ = ["FatalError", "Grader", "generated_cases"]


# the Cases searched for one where two look-alike mistakes differ: how many, and the
# offset of their hypothesis seed from the grader's (drawn once, only when needed)
SEARCH_EXAMPLES, SEARCH_SEED = 200, 7919

# Failures that are returns, not exceptions: code returning None everywhere is graded, not refused
NOT_RAISED = ("wrong return", "returned None", "not an array", "missing")


class FatalError(Exception):
    """The subject cannot be graded: it raises on every input, or exceeds a limit.
    ``site``: where the checked code raised (convcore.mistakes.crash_site), if known."""

    def __init__(self, message: str, site: dict[str, Any] | None = None):
        super().__init__(message)
        self.site = site


@contextmanager
def _without_local_constants() -> Iterator[None]:
    """Hypothesis (6.13x and later) sometimes draws constants it finds in the source of
    the modules loaded from outside site-packages, and caches them in .hypothesis/. Then
    the same seed would draw other cases once a student's file (or a notebook's module)
    is loaded, and a .hypothesis folder would appear beside the student's file. During
    the grader's draws, that set is empty. (A private hook: without it, as in older
    versions, nothing needs doing.)"""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - another layout of hypothesis
        yield
        return
    original = getattr(providers, "_get_local_constants", None)
    empty = getattr(providers, "Constants", None)
    if original is None or empty is None:  # pragma: no cover
        yield
        return
    providers._get_local_constants = lambda: empty()
    try:
        yield
    finally:
        providers._get_local_constants = original


def generated_cases(convention: str, seed: int, count: int) -> list[Case]:
    """``count`` Cases drawn by hypothesis with ``seed`` (the same ones every run,
    whatever else is loaded), without repeats, integer inputs first, then smaller first."""
    found: list[Case] = []

    @hypothesis_seed(seed)
    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(cases(convention))
    def collect(case: Case) -> None:
        found.append(case)

    with _without_local_constants():
        collect()
    unique = list(dict.fromkeys(found))
    return sorted(unique, key=lambda c: (c.values != "int", c.size))


def failure_kind(name: str, expected: Any, outcome: Any) -> str | None:
    """How ``outcome`` fails to be ``expected``: None when it matches."""
    if isinstance(outcome, Failure):
        return outcome.kind
    comparison = compare_tensor(name, expected, outcome)
    return None if comparison.match else comparison.kind


class Grader:
    """Grades one subject in one convention; every result is memoised by Case.

    ``call(function, *args, **kwargs)`` runs the subject's code (a time limit lives
    there); the catalogue's mistakes always run plainly. ``run(case)``, when given,
    runs the subject on a Case instead (the convention's results by output name): the
    sandbox's child process does, so that this process never runs the subject's code.
    """

    def __init__(
        self,
        convention: str,
        subject: Subject,
        *,
        seed: int = 0,
        examples: int = DEFAULT_EXAMPLES,
        call: Callable[..., Any] = call_plainly,
        run: Callable[[Case], dict[str, Any]] | None = None,
    ):
        self.convention = get_convention(convention)
        self.subject = subject
        self.seed = seed
        self.examples = examples
        self.call = call
        self.run = run if run is not None else (lambda case: self.convention.run(self.subject, case, self.call))
        self.graded = self.convention.graded(subject)
        self.runs: dict[Case, dict[str, Any]] = {}
        self._mistake_runs: dict[tuple[str, Case], dict[str, Any]] = {}
        self._matched: dict[tuple[str, Case], list[dict[str, Any]]] = {}
        self._search_pool: list[Case] | None = None

    # -- running ------------------------------------------------------------------------

    def outcomes(self, case: Case) -> dict[str, Any]:
        if case not in self.runs:
            self.runs[case] = self.run(case)
        return self.runs[case]

    def kind(self, case: Case, output: str) -> str | None:
        return failure_kind(output, self.convention.expected(case)[output], self.outcomes(case)[output])

    def mistake_outcomes(self, mistake: Mistake, case: Case) -> dict[str, Any]:
        key = (mistake.id, case)
        if key not in self._mistake_runs:
            self._mistake_runs[key] = mistake.results(case)
        return self._mistake_runs[key]

    def search_cases(self) -> list[Case]:
        """The edge cases, then the drawn ones (no repeats)."""
        drawn = generated_cases(self.convention.name, self.seed, self.examples)
        return list(dict.fromkeys(edge_cases(self.convention.name) + drawn))

    # -- shrinking and naming -----------------------------------------------------------

    def shrink(self, case: Case, output: str) -> Case:
        """A Case no one-step-smaller neighbour of which fails ``output`` the way ``case`` does."""
        kind = self.kind(case, output)
        current = case
        while True:
            for smaller in one_step_smaller(current, self.convention.knobs):
                if self.kind(smaller, output) == kind:
                    current = smaller
                    break
            else:
                return current

    def likely_mistakes(self, output: str, counterexample: Case) -> list[dict[str, Any]]:
        """The catalogued mistakes whose ``output`` equals the subject's on the
        counterexample, on every other Case tried, and on the Cases searched for where
        look-alike mistakes differ (``everywhere`` is then true: kept for readers of the
        report's first form)."""
        return [
            {k: v for k, v in m.items() if k not in ("differs_on", "differs_case")}
            for m in self._matching(output, counterexample)
            if m["differs_on"] is None
        ]

    def look_alikes(self, output: str, counterexample: Case) -> list[dict[str, Any]]:
        """The mistakes that equal the subject's ``output`` on the counterexample only:
        {id, title, differs_on, differs_case} with a Case where they differ (the first
        tried, or the one searched for) in words and as data."""
        return [
            {k: m[k] for k in ("id", "title", "differs_on", "differs_case")}
            for m in self._matching(output, counterexample)
            if m["differs_on"] is not None
        ]

    def _matching(self, output: str, counterexample: Case) -> list[dict[str, Any]]:
        """The mistakes equal to the subject's ``output`` on the counterexample, each with
        the Case where it differs from the subject, or None. When two or more agree with
        the subject on every Case tried, a Case where they differ from each other is
        searched for (``discriminating_case``) and the subject is run there: only the
        ones it equals there too stay named."""
        key = (output, counterexample)
        if key in self._matched:
            return self._matched[key]
        got = self.outcomes(counterexample)[output]
        candidates = [
            m
            for m in mistakes_for(self.convention.name)
            if output in m.conditions and outcome_equal(got, self.mistake_outcomes(m, counterexample)[output])
        ]
        differs = {m.id: self._differs(m, output, list(self.runs)) for m in candidates}
        for a, b in combinations(candidates, 2):
            if differs[a.id] is not None or differs[b.id] is not None:
                continue  # (already told apart: the subject differs from one of them somewhere)
            case = self.discriminating_case(output, a, b)
            if case is not None:
                differs[a.id], differs[b.id] = self._differs(a, output, [case]), self._differs(b, output, [case])
        self._matched[key] = [
            {
                "id": m.id,
                "title": m.title,
                "wrong": m.wrong,
                "should": m.should,
                "source": m.source,
                "everywhere": differs[m.id] is None,
                "differs_on": None if differs[m.id] is None else differs[m.id].describe(),
                "differs_case": None if differs[m.id] is None else differs[m.id].to_dict(),
            }
            for m in candidates
        ]
        return self._matched[key]

    def _differs(self, mistake: Mistake, output: str, cases: list[Case]) -> Case | None:
        """The first of ``cases`` where the subject's ``output`` is not the mistake's."""
        return next(
            (
                case
                for case in cases
                if output in self.outcomes(case)
                and not outcome_equal(self.outcomes(case)[output], self.mistake_outcomes(mistake, case)[output])
            ),
            None,
        )

    def discriminating_case(self, output: str, a: Mistake, b: Mistake) -> Case | None:
        """A Case, not yet tried, where mistakes ``a`` and ``b`` give different ``output``:
        the first among small random Cases within the grader's bounds (hypothesis, drawn
        with a seed of its own derived from the grader's, so the same every run), or None
        when none of them tells the two apart."""
        if self._search_pool is None:
            self._search_pool = generated_cases(self.convention.name, self.seed + SEARCH_SEED, SEARCH_EXAMPLES)
        return next(
            (
                case
                for case in self._search_pool
                if case not in self.runs
                and not outcome_equal(self.mistake_outcomes(a, case)[output], self.mistake_outcomes(b, case)[output])
            ),
            None,
        )

    # -- the whole grading --------------------------------------------------------------

    def grade(self) -> dict[str, Any]:
        """Per graded output: the Cases tried, and the first failing Case (None if none).

        Raises FatalError when every output raises on every Case.
        """
        tried = self.search_cases()
        first_failure: dict[str, Case | None] = {name: None for name in self.graded}
        for case in tried:
            for name in self.graded:
                failed = self.kind(case, name) is not None  # every Case runs: naming compares on all
                if failed and first_failure[name] is None:
                    first_failure[name] = case
        raised = [self.runs[case][name] for case in tried for name in self.graded]
        if raised and all(isinstance(r, Failure) and r.kind not in NOT_RAISED for r in raised):
            first = raised[0]
            raise FatalError(f"raises on every input ({len(tried)} cases), e.g. {first}", first.site)
        return {"tried": tried, "first_failure": first_failure}
