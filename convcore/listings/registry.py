"""The listings by trace setting: which files serve which (convention, view,
granularity, backward, loop order), assembled into one listing with its line map.

A listing is the code a student would write for one trace setting: ``import numpy as
np``, then the forward function, then the backward function (each the source of a
real file under ``convcore/listings/<package>/``, ``PACKAGES``, read with ``inspect``), two blank
lines apart. Nothing about a file is declared twice: its pass is its function's name
(``CALLS``), its granularity, backward form and loop orders are read from the loops
around its marked lines (``marks``).

``get_listing(convention=, view=, granularity=, backward=, loop_order=, dx_loop_order=,
phases=)`` and ``listing_for(rc, convention)`` return a ``Listing``; ``listings()`` all
of them. Raises ``ListingNotFound`` (a LookupError) naming what exists.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from ..trace.loops import sub_order
from ..trace.views import get_view
from .marks import Mark, read_marks

__all__ = ["CALLS", "FILES", "Listing", "ListingNotFound", "get_listing", "listing_for", "listings"]

# each convention's functions by pass, as the grader calls them (convcore.mistakes.conventions)
CALLS: dict[str, dict[str, str]] = {
    "cs231n": {"forward": "conv_forward_naive", "backward": "conv_backward_naive"},
    "torch": {"forward": "conv2d_forward", "backward": "conv2d_backward"},
}
# the package of each convention's files (convcore/listings/<package>/)
PACKAGES: dict[str, str] = {"cs231n": "cs231n", "torch": "torch_style"}

# the listing files of each convention (modules under convcore/listings/<package>/)
_EVERY_SETTING = (
    "forward_window",
    "forward_mac",
    "backward_window_fused",
    "backward_window_separate",
    "backward_mac_fused",
    "backward_mac_separate",
)
FILES: dict[str, tuple[str, ...]] = {"cs231n": _EVERY_SETTING, "torch": _EVERY_SETTING}

HEAD = ("import numpy as np",)  # every listing's first line; its functions follow, two blank lines apart
VIEW = "direct"  # the view whose loops the listings are


class ListingNotFound(LookupError):
    """No listing for the asked setting; the message names the settings there are."""


@dataclass(frozen=True)
class _Part:
    """One pass of a listing: the function of one file and the setting its loops have."""

    convention: str
    module: str
    direction: str  # "forward" or "backward"
    function: Callable[..., Any]
    path: str
    first: int  # the file's line number of the function's first line
    lines: tuple[str, ...]
    granularity: str
    backward: str | None  # "fused" / "separate"; None for a forward pass
    loop_order: str
    dx_loop_order: str | None


@dataclass(frozen=True)
class _Section:
    """Where a part's lines stand: the file's lines first … first + count − 1 are the
    listing's lines offset … offset + count − 1."""

    path: str
    first: int
    offset: int
    count: int


@dataclass(frozen=True)
class Listing:
    """The code of one trace setting.

    Attributes
    ----------
    name : the files it is made of (``cs231n/forward_window + cs231n/backward_window_fused``)
    convention, view, granularity, backward, loop_order, dx_loop_order, phases : the
        trace setting it is the code of (``convcore.trace.config``)
    lines : the listing, one string a line (no newline characters)
    functions : {"forward" | "backward": the callable}, the passes it has
    marks : the marked lines (``marks.Mark``), line numbers in ``lines``
    """

    name: str
    convention: str
    view: str
    granularity: str
    backward: str
    loop_order: str
    dx_loop_order: str
    phases: str
    lines: tuple[str, ...]
    functions: Mapping[str, Callable[..., Any]]
    marks: tuple[Mark, ...]
    sections: tuple[_Section, ...]

    @property
    def line_map(self) -> dict[str, dict[str, int]]:
        """{phase: {tensor the line writes (the listing's name): 1-based line}}."""
        found: dict[str, dict[str, int]] = {}
        for mark in self.marks:
            found.setdefault(mark.phase, {})[mark.target] = mark.line
        return found

    def line_of(self, phase: str, tensor: str, aliases: Mapping[str, str] | None = None) -> int:
        """The line where a step of ``phase`` writes ``tensor`` as a trace names it:
        through the trace header's ``aliases`` (without padding the trace's ``dx`` is the
        listing's ``dxp``). Raises KeyError when no line does."""
        aliases = aliases or {}
        for target, line in self.line_map.get(phase, {}).items():
            if aliases.get(target, target) == tensor:
                return line
        raise KeyError(f"{self.name} has no line of phase {phase!r} that writes {tensor!r}")

    def event_lines(self, event: Mapping[str, Any], aliases: Mapping[str, str] | None = None) -> tuple[int, ...]:
        """The lines a trace event runs, one per write, in the order of its writes."""
        return tuple(self.line_of(event["phase"], write["tensor"], aliases) for write in event["writes"])

    def listing_line(self, path: str, line: int) -> int | None:
        """The listing's line of ``line`` in the file ``path`` (a frame's
        ``co_filename`` and ``f_lineno``), or None when the listing does not hold it."""
        for section in self.sections:
            if path == section.path and section.first <= line < section.first + section.count:
                return section.offset + line - section.first
        return None


def _loops(marks: list[Mark], phase: str, letters: str) -> list[str]:
    """The loop letters around each mark of ``phase`` (only the view's letters)."""
    return ["".join(v for v in mark.loops if v in letters) for mark in marks if mark.phase == phase]


def _one(orders: list[str], what: str) -> str:
    if len(set(orders)) != 1:
        raise ValueError(f"{what}: its marked lines sit in different loops {sorted(set(orders))}")
    return orders[0]


def _part(convention: str, module_name: str) -> _Part:
    """Read one listing file: its function, lines and the setting of its loops."""
    module = importlib.import_module(f"{__package__}.{PACKAGES[convention]}.{module_name}")
    where = f"{PACKAGES[convention]}/{module_name}"
    found = [(d, getattr(module, name)) for d, name in CALLS[convention].items() if hasattr(module, name)]
    if len(found) != 1:
        raise ValueError(f"{where} must define exactly one of {', '.join(CALLS[convention].values())}")
    (direction, function), letters = found[0], get_view(VIEW).letters
    source, first = inspect.getsourcelines(function)
    lines = tuple(line.rstrip("\n") for line in source)
    marks = read_marks(lines)
    every = "".join(sorted(set(letters["mac"])))
    backward = dx_order = None
    if direction == "forward":
        order = _one(_loops(marks, "forward", every), f"{where}'s forward")
    else:
        backward = "fused" if any(m.phase == "backward" for m in marks) else "separate"
        order = _one(_loops(marks, "backward" if backward == "fused" else "dw", every), f"{where}'s {backward} pass")
        dx_order = _one(_loops(marks, "dx", every), f"{where}'s dx") if backward == "separate" else order
    granularity = next((g for g, a in letters.items() if sorted(a) == sorted(order)), None)
    if granularity is None:
        raise ValueError(f"{where}: loops {order!r} are no granularity's letters {dict(letters)}")
    db = _loops(marks, "db", every)
    if db and _one(db, f"{where}'s db") != ("f" if granularity == "window" else sub_order(order, "nfij")):
        raise ValueError(f"{where}: the db loops {db[0]!r} are not the trace's for loop order {order!r}")
    return _Part(convention, module_name, direction, function, inspect.getsourcefile(function), first, lines,
                 granularity, backward, order, dx_order)  # fmt: skip


@cache
def _parts() -> tuple[_Part, ...]:
    return tuple(_part(convention, name) for convention, names in FILES.items() for name in names)


def _assemble(convention: str, phases: str, forward: _Part | None, backward: _Part | None) -> Listing:
    lines: list[str] = list(HEAD)
    sections, functions = [], {}
    for part in (forward, backward):
        if part is None:
            continue
        lines += ["", ""]
        sections.append(_Section(part.path, part.first, len(lines) + 1, len(part.lines)))
        lines += part.lines
        functions[part.direction] = part.function
    main = backward or forward
    return Listing(
        name=" + ".join(f"{PACKAGES[p.convention]}/{p.module}" for p in (forward, backward) if p is not None),
        convention=convention,
        view=VIEW,
        granularity=main.granularity,
        backward=backward.backward if backward else "fused",
        loop_order=main.loop_order,
        dx_loop_order=backward.dx_loop_order if backward else main.loop_order,
        phases=phases,
        lines=tuple(lines),
        functions=functions,
        marks=tuple(read_marks(lines)),
        sections=tuple(sections),
    )


def get_listing(
    convention: str = "cs231n",
    view: str = VIEW,
    granularity: str = "window",
    backward: str = "fused",
    loop_order: str | None = None,
    dx_loop_order: str | None = None,
    phases: str = "both",
) -> Listing:
    """The listing of a trace setting (defaults as ``convcore.trace.config``'s: the
    view's letters for ``loop_order``, ``loop_order`` for ``dx_loop_order``); with
    ``phases`` "forward" or "backward" only that pass's function."""
    if view == VIEW and granularity in get_view(VIEW).letters:
        loop_order = loop_order or get_view(VIEW).letters[granularity]
        dx_loop_order = dx_loop_order or loop_order
        passes = {"forward": ("forward",), "backward": ("backward",)}.get(phases, ("forward", "backward"))
        found: dict[str, _Part] = {}
        for part in _parts():
            if (part.convention, part.granularity, part.loop_order) != (convention, granularity, loop_order):
                continue
            if part.direction == "forward" or (part.backward, part.dx_loop_order) == (backward, dx_loop_order):
                found[part.direction] = part
        if all(p in found for p in passes):
            return _assemble(
                convention, phases, *(found.get(p) if p in passes else None for p in ("forward", "backward"))
            )
    there = ", ".join(
        f"{p.convention} {p.direction} {p.granularity} {p.backward or ''} {p.loop_order}".replace("  ", " ")
        for p in _parts()
    )
    raise ListingNotFound(
        f"no listing for {convention} {view} {granularity} backward {backward} loop_order {loop_order} "
        f"dx_loop_order {dx_loop_order} ({phases}); there are: {there}"
    )


def listing_for(rc: Any, convention: str = "cs231n") -> Listing:
    """The listing of a trace's ResolvedConfig ``rc`` (``convcore.trace.resolve_config``)."""
    return get_listing(convention, rc.view, rc.granularity, rc.backward, rc.loop_order, rc.dx_loop_order, rc.phases)


def listings() -> list[Listing]:
    """Every listing there is (both passes)."""
    made = {}
    for part in _parts():
        if part.direction == "backward":
            made[part.module, part.convention] = get_listing(
                part.convention, VIEW, part.granularity, part.backward, part.loop_order, part.dx_loop_order
            )
    return list(made.values())
