"""What a trace will cost, from the resolved config and its planned phases alone.

``trace_cost(rc)`` reads the spec and ``plan_phases(rc)`` (names and exact event
counts) and generates nothing: it is cheap enough to run on every request before any
work, so that a service can refuse what it cannot afford. It returns

- ``events``: the exact event count (the sum of the phase counts);
- ``cells_written``: cells written over all events (each written cell puts a ``delta``
  and a ``value`` number on the wire), from each phase's per-event geometry;
- ``header_cells``: the numbers in the header's tensors (every tensor's data);
- ``bytes``: an upper bound of the encoded document (JSON or NDJSON), from those counts
  and the largest sizes their pieces take (below);
- ``work``: a CPU measure in event-equivalents, ``events + cells_written / 32`` plus
  the extra of phases whose events each gather many taps (the transposed view's dx:
  one event-equivalent per three taps it sums): on a 2-core laptop an event costs
  4–12 µs to generate and encode, a written cell about 0.2 µs, a transposed dx event
  about 100 µs for 36 taps (bench/server.py measures the worst allowed requests);
  with a listing in the header each event a quarter more for its line keys
  (``CODE_EVENT_WORK``: the scalars are evaluated per step).

How ``bytes`` bounds the document: a number is at most ``NUMBER_BYTES`` as orjson
writes it (``-1.2345678901234567e-100,``), and fewer when every input is an integer
and the activation is identity or relu: then every number of the trace is an integer
no larger than ``A²·K + A`` (A the largest input magnitude, K the most terms any sum
of the trace adds), written as its digits and ``.0``; an event's fixed part (type, phase, loop,
text: the text lists at most nine products or eight values) at most
``EVENT_BASE_BYTES``; a Box (tensor, start, stop, step, with up to four axes of up to
five digits) at most ``BOX_BYTES``. With a listing in the header (``code.py``) each event also carries its
``line``, ``lines`` and ``scalars``: at most ``LINE_BYTES`` plus ``SCALAR_BYTES`` and
a number per scalar its lines read, and the header holds the listing (its JSON, counted
exactly). Measured over random specs (tests/test_cost.py)
the real size lies between ``1 / BYTES_FACTOR`` of the bound and the bound.

A phase this module does not know (a new view's) is charged as if each of its events
wrote its largest tensor whole: safe, and loud in the tests (they list every view).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from .aliases import copies_padding, trace_aliases
from .code import code_header, trace_listing
from .config import ResolvedConfig
from .document import plan_phases
from .padding_phases import fold_reads

__all__ = ["BYTES_FACTOR", "TraceCost", "number_bytes", "trace_cost"]

NUMBER_BYTES = 25
EVENT_BASE_BYTES = 420
BOX_BYTES = 100
HEADER_BASE_BYTES = 1500
HEADER_TENSOR_BYTES = 150
CELLS_PER_EVENT_OF_WORK = 32
CODE_EVENT_WORK = 0.25  # event-equivalents of work an event's line keys add (bench: +0.3 on a MAC trace)
LINE_BYTES = 48  # ,"line":NNNN,"lines":[NNNN,NNNN,NNNN],"scalars":{}
SCALAR_BYTES = 12  # "name": (the number's bytes apart)
BYTES_FACTOR = 4  # the real size is at least bytes / BYTES_FACTOR (tests/test_cost.py)


@dataclass(frozen=True)
class TraceCost:
    """What one trace costs; see the module notes for each measure."""

    events: int
    cells_written: int
    header_cells: int
    bytes: int
    work: int

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


# per event of a phase: (boxes it names, cells it writes), from the spec alone; a phase
# whose events differ gives the mean (mac backward: db is written at a position's first MAC)
PerEvent = Callable[[ResolvedConfig], tuple[float, float]]


def _window(rc: ResolvedConfig) -> int:
    return rc.spec.macs_per_output  # (C/groups)·KH·KW


def _bias(rc: ResolvedConfig) -> int:
    return 1 if rc.has_bias else 0


def _copied(rc: ResolvedConfig) -> int:
    """Cells a pad or crop event writes: all of x's in one step, else a row of W."""
    return math.prod(rc.spec.x_shape) if rc.copies == "one" else rc.spec.x_shape[3]


def _padded(rc: ResolvedConfig) -> int:
    """Cells a pad event writes: x's (zeros: the padding is never written), or with a
    mode that copies all of xp's in one step, else a row of xp."""
    if not copies_padding(rc):
        return _copied(rc)
    return math.prod(rc.spec.padded_shape) if rc.copies == "one" else rc.spec.padded_hw[1]


def _shared(name: str) -> PerEvent | None:
    """The phases every view shares (convcore.trace.phases, padding_phases, flip_phases)."""
    return {
        "pad": lambda rc: (2, _padded(rc)),
        "crop": lambda rc: (2, _copied(rc)),
        "fold": lambda rc: (2 if rc.copies == "one" else 1 + fold_reads(rc), _copied(rc)),
        "flip": lambda rc: (2, math.prod(rc.spec.w_shape)),
        "flip back": lambda rc: (2, math.prod(rc.spec.w_shape)),
        "activation": lambda rc: (2, rc.spec.out_shape[3]),
        "activation grad": lambda rc: (3, rc.spec.out_shape[3]),
    }.get(name)


INDEX_BYTES = 6  # one entry of a padding mode's row or column list in a text ("12, ")


def _text_bytes(rc: ResolvedConfig, phase: str) -> int:
    """What an event's text holds beyond ``EVENT_BASE_BYTES``: the pad and fold of a mode
    that copies list the source row of every padded row and column (``padding_phases``)."""
    if phase not in ("pad", "fold") or not copies_padding(rc):
        return 0
    hp, wp = rc.spec.padded_hw
    return INDEX_BYTES * (wp if rc.copies == "each" else hp + wp)


_DIRECT_WINDOW: dict[str, PerEvent] = {
    "forward": lambda rc: (3 + _bias(rc), 1),
    "backward": lambda rc: (4 + 2 * _bias(rc), 2 * _window(rc) + _bias(rc)),
    "db": lambda rc: (2, 1),
    "dw": lambda rc: (3, _window(rc)),
    "dx": lambda rc: (3, _window(rc)),
}
_DIRECT_MAC: dict[str, PerEvent] = {
    "forward": lambda rc: (3 + _bias(rc), 1),
    "backward": lambda rc: (4 + 2 * _bias(rc) / _window(rc), 2 + _bias(rc) / _window(rc)),
    "db": lambda rc: (2, 1),
    "dw": lambda rc: (3, 1),
    "dx": lambda rc: (3, 1),
}
_IM2COL: dict[str, PerEvent] = {
    "im2col": lambda rc: (2, rc.spec.C * rc.spec.KH * rc.spec.KW),
    "forward": lambda rc: (3 + _bias(rc), 1),
    "db": lambda rc: (2, 1),
    "dw": lambda rc: (3, 1),
    "dcols": lambda rc: (3, 1),
    "col2im": lambda rc: (2, rc.spec.C * rc.spec.KH * rc.spec.KW),
}
_TRANSPOSED: dict[str, PerEvent] = {
    "forward": lambda rc: (3 + _bias(rc), 1),
    "db": lambda rc: (2, 1),
    "dw": lambda rc: (3, 1),
    "dilate dz": lambda rc: (2, rc.spec.out_shape[3]),
    "rotate w": lambda rc: (2, _window(rc)),
    "dx": lambda rc: (3, 1),
}


# a transposed layer's phases (transpose_layer.py): its Conv2d's steps, on rc.spec
_TRANSPOSE_LAYER: dict[str, PerEvent] = {
    "stamp": lambda rc: (3, _window(rc)),
    "dilate x": lambda rc: (2, rc.spec.out_shape[3]),
    "rotate w": lambda rc: (2, _window(rc)),
    "gather": lambda rc: (3, 1),
    "bias": lambda rc: (2, rc.spec.x_shape[3]),
    "db": lambda rc: (2, 1),
    "dw": lambda rc: (3, _window(rc)),
    "dx": lambda rc: (3, 1),
}

# extra event-equivalents of work per event, beyond the event itself and its cells
_EXTRA_WORK: dict[tuple[str, str], Callable[[ResolvedConfig], float]] = {
    ("transposed", "dx"): lambda rc: rc.spec.filters_per_group * rc.spec.KH * rc.spec.KW / 3,
    ("transposed", "gather"): lambda rc: rc.spec.filters_per_group * rc.spec.KH * rc.spec.KW / 3,
}


def _view_table(rc: ResolvedConfig) -> dict[str, PerEvent]:
    if rc.layer == "conv_transpose2d":
        return _TRANSPOSE_LAYER
    if rc.view == "direct":
        return _DIRECT_MAC if rc.granularity == "mac" else _DIRECT_WINDOW
    return {"im2col": _IM2COL, "transposed": _TRANSPOSED}.get(rc.view, {})


def _tensor_shapes(rc: ResolvedConfig) -> dict[str, tuple[int, ...]]:
    """Every tensor a trace of ``rc`` may put in its header (the view's extra tensors all,
    an upper bound when a forward-only trace has fewer)."""
    spec = rc.spec
    if rc.layer == "conv_transpose2d":  # the layer's names over its Conv2d's shapes
        shapes = {"x": spec.out_shape, "w": spec.w_shape, "overlaps": spec.padded_hw, "yp": spec.padded_shape}
        shapes |= {"y": spec.x_shape, "dy": spec.x_shape, "dyp": spec.padded_shape, "dw": spec.w_shape}
        shapes |= {"dx": spec.out_shape} | ({"b": (spec.C,), "db": (spec.C,)} if rc.has_bias else {})
        if rc.view == "transposed":  # the gather's x dilated and turned kernel
            shapes |= rc.view_impl.extra_shapes(spec)
        return shapes if any(spec.padding) else {k: v for k, v in shapes.items() if k not in ("yp", "dyp")}
    shapes = {"x": spec.x_shape, "xp": spec.padded_shape, "w": spec.w_shape, "z": spec.out_shape, "out": spec.out_shape}
    if rc.has_bias:
        shapes["b"] = (spec.F,)
    if rc.backward_included:
        shapes.update(dout=spec.out_shape, dz=spec.out_shape, dw=spec.w_shape, dxp=spec.padded_shape, dx=spec.x_shape)
        if rc.has_bias:
            shapes["db"] = (spec.F,)
        if rc.flip:
            shapes["dwf"] = spec.w_shape
    if rc.flip:
        shapes["wf"] = spec.w_shape
    shapes.update(rc.view_impl.extra_shapes(spec))
    for name in trace_aliases(rc):  # the same tensor as another: not in the header
        shapes.pop(name, None)
    return shapes


_INTEGER_ACTIVATIONS = ("identity", "relu")  # integers in, integers out (and f' in {0, 1})


def number_bytes(rc: ResolvedConfig) -> int:
    """The most bytes one number of the trace of ``rc`` takes, its comma included."""
    arrays = [rc.x, rc.w, rc.dout] + ([rc.b] if rc.b is not None else [])
    if rc.activation.name not in _INTEGER_ACTIVATIONS or not all(np.array_equal(a, np.round(a)) for a in arrays):
        return NUMBER_BYTES
    spec = rc.spec
    n, f, ho, wo = spec.out_shape
    largest = max(1.0, *(float(np.abs(a).max()) for a in arrays))
    terms = max(spec.macs_per_output + 1, n * ho * wo, f * spec.KH * spec.KW)  # z, dw and db, dx and dcols
    if rc.layer == "conv_transpose2d":  # db sums dy, the Conv2d's input-shaped tensor
        terms = max(terms, n * spec.H * spec.W + 1)
    if copies_padding(rc):  # dx folds up to (1 + top + bottom)·(1 + left + right) cells of dxp into one
        top, bottom, left, right = spec.padding
        terms = max(terms, f * spec.KH * spec.KW * (1 + top + bottom) * (1 + left + right))
    bound = largest * largest * terms + largest
    if bound >= 1e15:
        return NUMBER_BYTES
    return min(NUMBER_BYTES, len(str(int(bound))) + 4)  # minus sign, digits, ".0", comma


def _code_bytes(rc: ResolvedConfig, number: int) -> tuple[int, int]:
    """(the header's listing, the most an event's line keys take), in bytes."""
    listing = trace_listing(rc)
    if listing is None:
        return 0, 0
    scalars = max((len(mark.scalars) for mark in listing.marks), default=0)
    scalars = max(scalars, len({name for mark in listing.marks for name, _ in mark.scalars}))
    header = len(json.dumps(code_header(listing), ensure_ascii=False).encode())
    return header, LINE_BYTES + scalars * (SCALAR_BYTES + number)


def trace_cost(rc: ResolvedConfig) -> TraceCost:
    """The cost of the trace of ``rc`` (a ResolvedConfig), without generating it."""
    shapes = _tensor_shapes(rc)
    largest = max(math.prod(s) for s in shapes.values())
    table = _view_table(rc)
    events = cells = boxes = extra = text = 0
    for phase in plan_phases(rc):
        weight = _EXTRA_WORK.get((rc.view, phase.name))
        extra += round(phase.count * weight(rc)) if weight else 0
        per_event = _shared(phase.name) or table.get(phase.name)
        n_boxes, n_cells = per_event(rc) if per_event else (6, largest)
        events += phase.count
        cells += round(phase.count * n_cells)
        boxes += round(phase.count * n_boxes)
        text += phase.count * _text_bytes(rc, phase.name)
    header_cells = sum(math.prod(s) for s in shapes.values())
    number = number_bytes(rc)
    code_bytes, line_bytes = _code_bytes(rc, number)
    size = (
        HEADER_BASE_BYTES
        + code_bytes
        + line_bytes * events
        + HEADER_TENSOR_BYTES * len(shapes)
        + number * header_cells
        + EVENT_BASE_BYTES * events
        + text
        + BOX_BYTES * boxes
        + 2 * number * cells
    )
    work = events + cells // CELLS_PER_EVENT_OF_WORK + extra + (round(events * CODE_EVENT_WORK) if line_bytes else 0)
    return TraceCost(events=events, cells_written=cells, header_cells=header_cells, bytes=size, work=work)
