"""The catalogue's entry type and registry.

A Mistake names one bug students really write, says in a sentence what the code does
wrong and where it comes from, states per output (out, dx, dw, db) the condition under
which that output differs from the truth (a predicate over a Case, plus words), and
carries the code that makes exactly that mistake and nothing else: the plain loops with
one step changed (``loops``, written once in ``in_cs231n``, ``in_layer``,
``in_torch``), and those loops in its convention's calling form
(``implementation``, ``convcore.mistakes.code``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..compare import values_equal
from .case import Case
from .code import code_subject
from .conventions import OUTPUTS, Failure, Subject, call_plainly, get_convention

__all__ = [
    "Condition",
    "MISTAKES",
    "Mistake",
    "get_mistake",
    "lab_mistakes",
    "mistaken_and_true",
    "mistakes_for",
    "outcome_equal",
    "catalogue_in",
    "register",
    "where_windows_read_x",
]

# the source of a mistake found in public course code rather than in a seed
ELSEWHERE = "common in public course code (issue 12's list of mistakes found elsewhere)"


@dataclass(frozen=True)
class Condition:
    """When one output of a mistaken implementation differs from the truth.

    ``shows(case)``: the output differs whenever this holds (for inputs in general
    position: the distinct integers or the floats of a Case). ``hides(case)``: the
    output equals the truth whenever this holds; None means "whenever ``shows`` does not
    hold", and then the condition is exact. ``words`` says it for people.
    """

    shows: Callable[[Case], bool]
    words: str
    hides: Callable[[Case], bool] | None = None

    @property
    def exact(self) -> bool:
        """Whether ``shows`` is also necessary (the output differs if and only if it holds)."""
        return self.hides is None

    def hidden(self, case: Case) -> bool:
        """Whether the output is sure to equal the truth on ``case``."""
        return (not self.shows(case)) if self.hides is None else bool(self.hides(case))


def where_windows_read_x(condition: Callable[[Case], bool], words: str, gradient: bool = False) -> Condition:
    """A Condition that is exact where every window reads some cell of x: a window that
    reads only padding contributes the same zeros (and bias) right or wrong, so where
    there are such windows the mistake can hide in them. ``gradient``: also where the
    activation's derivative is nowhere 0 (a relu with Z ≤ 0 everywhere sends no gradient
    back, right or wrong)."""
    from .geometry import every_window_reads_x, gradient_flows_everywhere

    def shows(c: Case) -> bool:
        return condition(c) and every_window_reads_x(c) and (not gradient or gradient_flows_everywhere(c))

    caveat = " and f'(Z) is nowhere 0" if gradient else ""
    return Condition(
        shows,
        words + f" (exact when every window reads some cell of x{caveat}; a window over padding alone can hide it)",
        hides=lambda c: not condition(c),
    )


@dataclass(frozen=True)
class Mistake:
    """One catalogued mistake.

    Attributes
    ----------
    id : a short stable name, e.g. ``"empty_crop"``
    title : the mistake in a few words
    wrong : what the code does wrong, in one sentence
    should : what it should do instead, in one sentence
    source : where it comes from: a seed file and its construct, or a public source
    convention : "cs231n", "layer", "torch" (``convcore.mistakes.conventions``) or
        "torch-transposed" (``convcore.mistakes.layer_conventions``)
    conditions : per affected output, when it shows; outputs not named always match
    setup : the smallest Case in which it shows (no one-step-smaller Case shows it)
    implementation : the mistaken code as a Subject of its convention
    loops : the mistaken code itself: a PlainLoops class (``convcore.mistakes.plain_loops``)
        overriding the step it gets wrong; ``implementation`` calls it, the lab traces it
        (a TransposedLoops class, ``convcore.mistakes.transposed_loops``, for the
        transposed layer: graded, not traced)
    """

    id: str
    title: str
    wrong: str
    should: str
    source: str
    convention: str
    conditions: dict[str, Condition]
    setup: Case
    implementation: Subject
    loops: type

    def shows(self, case: Case) -> dict[str, bool]:
        """Per output of the convention, whether this mistake's conditions hold on ``case``."""
        return {name: (name in self.conditions and bool(self.conditions[name].shows(case))) for name in OUTPUTS}

    def results(self, case: Case) -> dict[str, Any]:
        """The mistaken implementation's out, dx, dw, db on ``case`` (arrays or Failures)."""
        return get_convention(self.convention).run(self.implementation, case, call_plainly)

    def summary(self) -> dict[str, Any]:
        """The entry as plain data (no code), for the API and reports."""
        return {
            "id": self.id,
            "title": self.title,
            "wrong": self.wrong,
            "should": self.should,
            "source": self.source,
            "convention": self.convention,
            "conditions": {name: {"words": c.words, "exact": c.exact} for name, c in self.conditions.items()},
            "setup": self.setup.to_dict(),
            "setup_config": self.setup_config(),
        }

    def setup_config(self) -> dict[str, Any] | None:
        """The smallest setup as a trace config (the page's lesson), in the convention's
        layout; None where the page does not know the layer (``in_lab``)."""
        if not self.in_lab:
            return None
        return self.setup.trace_config(get_convention(self.convention).layout)

    @property
    def in_lab(self) -> bool:
        """Whether the mistakes lab traces it (``lab_mistakes``)."""
        return get_convention(self.convention).on_the_page


MISTAKES: dict[str, Mistake] = {}


def register(mistake: Mistake) -> Mistake:
    """Add ``mistake`` to the catalogue; ids are unique."""
    if mistake.id in MISTAKES:
        raise ValueError(f"a mistake with id {mistake.id!r} is already catalogued")
    MISTAKES[mistake.id] = mistake
    return mistake


def catalogue_in(convention: str) -> Callable[..., type]:
    """``register`` for the mistakes of ``convention``: ``catalogued(loops, id=..., ...)``
    registers the mistake whose code is the PlainLoops class ``loops`` and returns it."""

    def catalogued(loops: type, **entry: Any) -> type:
        register(Mistake(convention=convention, implementation=code_subject(loops, convention), loops=loops, **entry))
        return loops

    return catalogued


def get_mistake(mistake_id: str) -> Mistake:
    """The mistake called ``mistake_id``; raises KeyError naming the catalogue's ids."""
    if mistake_id not in MISTAKES:
        raise KeyError(f"no mistake {mistake_id!r}; the catalogue has {', '.join(MISTAKES)}")
    return MISTAKES[mistake_id]


def lab_mistakes() -> list[Mistake]:
    """The mistakes the lab traces, in catalogue order: those of the conventions whose
    layer the page and the trace engine know (``Convention.on_the_page``: Conv2d's, whose
    plain loops record their steps). They are the page's "Common mistakes" lessons
    (``lessons``), the ids a trace request's ``mistake`` takes (``lab_config``) and the
    mistakes a class question names by a cell's value (``cell_values``). The
    transposed layer's mistakes are graded and documented, not traced."""
    return [m for m in MISTAKES.values() if m.in_lab]


def mistakes_for(convention: str) -> list[Mistake]:
    """The mistakes stated in ``convention``, in catalogue order."""
    return [m for m in MISTAKES.values() if m.convention == convention]


def mistaken_and_true(mistake: str | Mistake, case: Case | None = None) -> dict[str, dict[str, Any]]:
    """The mistaken and the true out, dx, dw, db of a mistake on ``case`` (default: its
    setup), in the convention's layout.

    Returns ``{"mistaken": {name: array or Failure}, "true": {name: array}}``; a Failure
    carries NumPy's message when the mistaken code raises.
    """
    m = get_mistake(mistake) if isinstance(mistake, str) else mistake
    case = m.setup if case is None else case
    return {"mistaken": m.results(case), "true": get_convention(m.convention).expected(case)}


def outcome_equal(a: Any, b: Any) -> bool:
    """Two outcomes are the same: arrays of one shape with equal values, or Failures of
    the same kind."""
    if isinstance(a, Failure) or isinstance(b, Failure):
        return isinstance(a, Failure) and isinstance(b, Failure) and a.kind == b.kind
    if a.shape != b.shape:
        return False
    with np.errstate(invalid="ignore"):
        return bool(np.all(values_equal(np.asarray(a), np.asarray(b))))
