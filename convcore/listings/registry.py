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

import ast
import importlib
import inspect
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

import numpy as np

from ..python_ast import parse_python
from ..trace.loops import sub_order
from ..trace.views import get_view
from .marks import Mark, read_marks
from .orders import reorder

__all__ = [
    "CALLS",
    "FILES",
    "HEAD",
    "Listing",
    "ListingNotFound",
    "compiled_listing",
    "get_listing",
    "listing_for",
    "listings",
]

# each convention's functions by pass, as the grader calls them (convcore.mistakes.conventions)
CALLS: dict[str, dict[str, str]] = {
    "cs231n": {"forward": "conv_forward_naive", "backward": "conv_backward_naive"},
    "torch": {"forward": "conv2d_forward", "backward": "conv2d_backward"},
    "layer": {"forward": "forward", "backward": "backward"},  # methods of the class Conv2D
}
# the package of each convention's files (convcore/listings/<package>/)
PACKAGES: dict[str, str] = {"cs231n": "cs231n", "torch": "torch_style", "layer": "layer"}
# a convention written as a class: (its module with the constructor, the class's name);
# each pass's file holds the class with that pass's method, the listing is one class
CLASSES: dict[str, tuple[str, str]] = {"layer": ("conv2d", "Conv2D")}

# the listing files of each convention (modules under convcore/listings/<package>/)
_EVERY_SETTING = (
    "forward_window",
    "forward_mac",
    "backward_window_fused",
    "backward_window_separate",
    "backward_mac_fused",
    "backward_mac_separate",
)
FILES: dict[str, tuple[str, ...]] = {"cs231n": _EVERY_SETTING, "torch": _EVERY_SETTING, "layer": _EVERY_SETTING}
# the listing files of the other views, by view and convention (one setting each: the
# view's one granularity and one backward form, the engine ignores ``backward``)
# (the transposed view's forward is the direct view's window forward)
VIEW_FILES: dict[str, dict[str, tuple[str, ...]]] = {
    "im2col": {convention: ("forward_im2col", "backward_im2col") for convention in PACKAGES},
    "transposed": {convention: ("forward_window", "backward_transposed") for convention in PACKAGES},
}
# the phase whose marked line's loops give a pass's loop order, by view (the direct
# view's: ``_setting``); the backward of im2col orders the columns only (n, i, j), the
# transposed view's backward runs row-major whatever the loop order (None: no letters)
ORDER_PHASES: dict[str, dict[str, str | None]] = {
    "im2col": {"forward": "forward", "backward": "col2im"},
    "transposed": {"forward": "forward", "backward": None},
}

HEAD = ("import numpy as np",)  # every listing's first line; its functions follow, two blank lines apart
VIEW = "direct"  # the view of FILES' listings


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
    view: str = VIEW


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


def _view_setting(
    where: str, direction: str, lines: tuple[str, ...], view: str
) -> tuple[str, str | None, str, str | None]:
    """``_setting`` of a file of another view than the direct one (``VIEW_FILES``): its
    one granularity, its loop order the loops of the pass's ``ORDER_PHASES`` mark (in the
    view's loop letters), every other mark's loops in that order too."""
    marks, (granularity, letters) = read_marks(lines), next(iter(get_view(view).letters.items()))
    phase = ORDER_PHASES[view][direction]
    order = "" if phase is None else _one(_loops(marks, phase, letters), f"{where}'s {direction}")
    for mark in marks:
        if "".join(v for v in mark.loops if v in order) != sub_order(order, "".join(mark.loops)):
            raise ValueError(f"{where}: line {mark.line}'s loops {mark.loops} are not in the order {order!r}")
    if direction == "forward":
        return granularity, None, order, None
    return granularity, "fused", order, order


def _setting(
    where: str, direction: str, lines: tuple[str, ...], view: str = VIEW
) -> tuple[str, str | None, str, str | None]:
    """(granularity, backward, loop order, dx loop order) of a pass's lines, read from the
    loops around its marked lines."""
    if view != VIEW:
        return _view_setting(where, direction, lines, view)
    marks, letters = read_marks(lines), get_view(VIEW).letters
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
    return granularity, backward, order, dx_order


def _part(convention: str, module_name: str, view: str = VIEW) -> _Part:
    """Read one listing file: its function, lines and the setting of its loops."""
    module = importlib.import_module(f"{__package__}.{PACKAGES[convention]}.{module_name}")
    where = f"{PACKAGES[convention]}/{module_name}"
    holder = getattr(module, CLASSES[convention][1]) if convention in CLASSES else module
    found = [(d, getattr(holder, name)) for d, name in CALLS[convention].items() if hasattr(holder, name)]
    if len(found) != 1:
        raise ValueError(f"{where} must define exactly one of {', '.join(CALLS[convention].values())}")
    direction, function = found[0]
    source, first = inspect.getsourcelines(function)
    lines = tuple(line.rstrip("\n") for line in source)
    granularity, backward, order, dx_order = _setting(where, direction, lines, view)
    return _Part(convention, module_name, direction, function, inspect.getsourcefile(function), first, lines,
                 granularity, backward, order, dx_order, view)  # fmt: skip


def _phases_of_loops(lines: tuple[str, ...]) -> dict[int, set[str]]:
    """{line of a ``for`` statement: the phases of the marks in its body}."""
    marks = read_marks(lines)
    found: dict[int, set[str]] = {}
    for node in ast.walk(parse_python(textwrap.dedent("\n".join(lines)))):
        if isinstance(node, ast.For):
            inside = {m.phase for m in marks if node.body[0].lineno <= m.line <= node.end_lineno}
            found[node.lineno] = inside
    return found


@cache
def _reordered(part: _Part, loop_order: str, dx_loop_order: str) -> _Part:
    """``part`` in other loop orders (``orders.reorder``): each loop nest in
    ``loop_order`` (its own letters of it: db's n, f, i, j), the nest of the dx marks in
    ``dx_loop_order``; a nest over letters the part's own order does not hold (im2col's
    dw over f, c, k, l; the transposed view's backward, row-major) as it is; compiled
    from the rewritten lines, so that it runs as shown."""
    phases = _phases_of_loops(part.lines)

    def order_of(line: int, letters: str) -> str:
        if not set(letters) <= set(part.loop_order):
            return letters
        return sub_order(dx_loop_order if "dx" in phases.get(line, ()) else loop_order, letters)

    lines = reorder(part.lines, order_of)
    where = f"{PACKAGES[part.convention]}/{part.module} in loop order {loop_order}"
    if part.backward == "separate":
        where += f", dx loop order {dx_loop_order}"
    path = f"<{where}>"
    namespace: dict[str, Any] = {"np": np}
    method = lines[0].startswith(" ")  # a class's method: compiled in a class of its own
    source = ("class Listing:\n" if method else "") + "\n".join(lines) + "\n"
    exec(compile(source, path, "exec"), namespace)  # noqa: S102 - the listing's own code
    holder = namespace["Listing"].__dict__ if method else namespace
    function = holder[part.function.__name__]
    granularity, backward, order, dx_order = _setting(where, part.direction, lines, part.view)
    if (order, dx_order) != _orders(part, loop_order, dx_loop_order):
        raise ValueError(f"{where}: the rewritten loops run in order {order!r}, dx {dx_order!r}")
    first = 2 if method else 1
    return replace(
        part, function=function, path=path, first=first, lines=lines, loop_order=order, dx_loop_order=dx_order
    )


@cache
def _parts() -> tuple[_Part, ...]:
    direct = [_part(convention, name) for convention, names in FILES.items() for name in names]
    views = [
        _part(convention, name, view)
        for view, files in VIEW_FILES.items()
        for convention, names in files.items()
        for name in names
    ]
    return tuple(direct + views)


def _constructor(convention: str) -> Callable[..., Any]:
    """The ``__init__`` of a class convention's listing (``CLASSES``)."""
    module_name, class_name = CLASSES[convention]
    module = importlib.import_module(f"{__package__}.{PACKAGES[convention]}.{module_name}")
    return getattr(module, class_name).__init__


def _label(part: _Part) -> str:
    """``cs231n/forward_mac``, or ``cs231n/forward_mac in loop order nijklfc`` when reordered."""
    return part.path[1:-1] if part.path.startswith("<") else f"{PACKAGES[part.convention]}/{part.module}"


def _assemble(
    convention: str, phases: str, forward: _Part | None, backward: _Part | None, loop_order: str | None = None
) -> Listing:
    """The listing of these parts; ``loop_order``: another view's, whose backward
    orders only some of its letters (and which has no dx loop order of its own)."""
    lines: list[str] = list(HEAD)
    sections, functions = [], {}
    if convention in CLASSES:  # the class line and its constructor, then the passes' methods
        init = _constructor(convention)
        lines += ["", "", f"class {CLASSES[convention][1]}:"]
        source, first = inspect.getsourcelines(init)
        sections.append(_Section(inspect.getsourcefile(init), first, len(lines) + 1, len(source)))
        lines += [line.rstrip("\n") for line in source]
    for part in (forward, backward):
        if part is None:
            continue
        lines += [""] if convention in CLASSES else ["", ""]
        sections.append(_Section(part.path, part.first, len(lines) + 1, len(part.lines)))
        lines += part.lines
        functions[part.direction] = part.function
    main = backward or forward
    return Listing(
        name=" + ".join(_label(p) for p in (forward, backward) if p is not None),
        convention=convention,
        view=main.view,
        granularity=main.granularity,
        backward=backward.backward if backward else "fused",
        loop_order=loop_order or main.loop_order,
        dx_loop_order=loop_order or (backward.dx_loop_order if backward else main.loop_order),
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
    ``phases`` "forward" or "backward" only that pass's function. Another view than the
    direct one (``VIEW_FILES``) has one listing a convention, in every loop order of its
    letters; the engine ignores ``backward`` and ``dx_loop_order`` there, and so does
    this."""
    passes = {"forward": ("forward",), "backward": ("backward",)}.get(phases, ("forward", "backward"))
    if view in VIEW_FILES and granularity in get_view(view).letters:
        letters = get_view(view).letters[granularity]
        loop_order = loop_order or letters
        mine = {p.direction: p for p in _parts() if (p.convention, p.view) == (convention, view)}
        if sorted(loop_order) == sorted(letters) and all(p in mine for p in passes):
            chosen = [
                _in_order(mine[p], loop_order, loop_order) if p in passes else None for p in ("forward", "backward")
            ]
            return _assemble(convention, phases, *chosen, loop_order=loop_order)
    letters = get_view(VIEW).letters.get(granularity) if view == VIEW else None
    if letters is not None:
        loop_order = loop_order or letters
        dx_loop_order = dx_loop_order or loop_order
        found: dict[str, _Part] = {}
        for part in _parts():
            if (part.convention, part.view, part.granularity) != (convention, VIEW, granularity):
                continue
            if part.direction == "forward" or part.backward == backward:
                found.setdefault(part.direction, part)
        orders = sorted(loop_order) == sorted(letters) == sorted(dx_loop_order)
        if orders and all(p in found for p in passes):
            dx_order = dx_loop_order if backward == "separate" else loop_order
            chosen = [
                _in_order(found[p], loop_order, dx_order) if p in passes else None for p in ("forward", "backward")
            ]
            return _assemble(convention, phases, *chosen)
    there = ", ".join(
        " ".join(
            w for w in (p.convention, p.view if p.view != VIEW else "", p.direction, p.granularity, p.backward) if w
        )
        for p in _parts()
    )
    raise ListingNotFound(
        f"no listing for {convention} {view} {granularity} backward {backward} loop_order {loop_order} "
        f"dx_loop_order {dx_loop_order} ({phases}); there are, each in every loop order of its letters: {there}"
    )


def _orders(part: _Part, loop_order: str, dx_loop_order: str) -> tuple[str, str | None]:
    """(loop order, dx loop order) a part's marks have in these orders: the letters of
    ``loop_order`` it loops over (im2col's backward: n, i, j), dx's for a separate backward."""
    order = sub_order(loop_order, part.loop_order)
    dx_order = dx_loop_order if part.backward == "separate" else (None if part.direction == "forward" else order)
    return order, dx_order


def _in_order(part: _Part, loop_order: str, dx_loop_order: str) -> _Part:
    """The file's part itself when its loops run in these orders, else it reordered."""
    if (part.loop_order, part.dx_loop_order) == _orders(part, loop_order, dx_loop_order):
        return part
    return _reordered(part, loop_order, dx_loop_order)


def compiled_listing(name: str, convention: str, lines: tuple[str, ...], **setting: str) -> Listing:
    """A listing made from its ``lines`` alone (``HEAD`` and the functions of
    ``CALLS[convention]``, the methods of its class for a class convention), compiled as one module named ``<name>`` so that it runs as
    shown: the mistakes lab's code and each mistake's (``convcore.mistakes.listing``).
    ``setting``: the Listing's view, granularity, backward, loop orders, phases."""
    path = f"<{name}>"
    namespace: dict[str, Any] = {}
    exec(compile("\n".join(lines) + "\n", path, "exec"), namespace)  # noqa: S102 - the listing's own code
    holder = vars(namespace[CLASSES[convention][1]]) if convention in CLASSES else namespace  # a class's methods
    functions = {d: holder[f] for d, f in CALLS[convention].items() if f in holder}
    defaults = {"view": VIEW, "granularity": "window", "backward": "fused", "loop_order": "nfij", "phases": "both"}
    defaults.update(setting)
    defaults.setdefault("dx_loop_order", defaults["loop_order"])
    return Listing(name=name, convention=convention, lines=tuple(lines), functions=functions,
                   marks=tuple(read_marks(lines)), sections=(_Section(path, 1, 1, len(lines)),), **defaults)  # fmt: skip


def listing_for(rc: Any, convention: str = "cs231n") -> Listing:
    """The listing of a trace's ResolvedConfig ``rc`` (``convcore.trace.resolve_config``)."""
    return get_listing(convention, rc.view, rc.granularity, rc.backward, rc.loop_order, rc.dx_loop_order, rc.phases)


def listings() -> list[Listing]:
    """Every listing there is (both passes)."""
    made = {}
    for part in _parts():
        if part.direction == "backward" and part.view != VIEW:
            made[part.view, part.convention] = get_listing(part.convention, part.view, part.granularity)
        elif part.direction == "backward":
            made[part.module, part.convention] = get_listing(
                part.convention, VIEW, part.granularity, part.backward, part.loop_order, part.dx_loop_order
            )
    return list(made.values())
