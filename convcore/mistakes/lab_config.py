"""Which trace requests a mistake trace takes, and what one costs.

A mistake trace follows the naive loops of the mistake's convention, so it takes the
layers that code can be called with: CS231n code one stride and one padding for every
side, no dilation, no groups and no activation; the NHWC layer one stride, four
paddings and an activation, no dilation or groups; the PyTorch-named functions a
stride, a padding and a dilation per axis and groups, no activation. It always has a
bias (the code adds b) and shows the direct view's loops at window granularity, with
both passes. ``check_lab_config`` says what does not fit in a TraceConfigError naming
the field.

``mistake_cost`` is the cost of a mistake trace in the measures of
``convcore.trace.cost`` (events, cells written, header cells, a bound of the bytes,
work), with its constants, counted from the mistaken loops' own geometry (their phases
and how far they run: a loop over the input's size instead of the output's, a wider
padding; ``plain_loops``' table of phases), not from the engine's trace, whose phases
differ. Its work counts the runs a mistake trace makes (the mistaken loops, the correct
ones up to the first divergence, the catalogue's code for a crash's message) and what
one of their steps costs beside one of the engine's (``LOOP_WORK``, measured by
bench/mistakes.py). Its bytes count the header's code (the mistaken and the correct
lines) and each event's line keys. The service holds it to the same limits as every
trace.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..trace.config import ResolvedConfig, TraceConfigError
from ..trace.cost import (
    BOX_BYTES,
    CELLS_PER_EVENT_OF_WORK,
    EVENT_BASE_BYTES,
    HEADER_BASE_BYTES,
    HEADER_TENSOR_BYTES,
    LINE_BYTES,
    NUMBER_BYTES,
    TraceCost,
)
from .catalogue import Mistake, lab_mistakes
from .listing import mistake_code

__all__ = ["LAB_SETTINGS", "check_lab_config", "lab_mistake", "mistake_cost"]

# the settings a mistake trace shows (the config's defaults): the naive loops
LAB_SETTINGS = {"view": "direct", "granularity": "window", "backward": "fused", "phases": "both"}

LINE_NUMBER_BYTES = 5  # one more line number in an event's lines (a write more)
RUNS = 3  # the mistaken loops, the correct loops, the catalogue's code (for a crash's message)
# work of one event of these loops, in the engine's event-equivalents: they compute with
# NumPy window by window, as student code does (bench/mistakes.py measures the ratio)
LOOP_WORK = 5
HEADER_EXTRA_BYTES = 8192  # mistake, differences (at most 20 cells per tensor), divergence, failures
TEXT_PER_FILTER = 80  # a backward step's text says each filter's dw write


def lab_mistake(value: Any) -> Mistake:
    """The lab's mistake called ``value`` (``lab_mistakes``); TraceConfigError at
    "mistake" naming the ids."""
    traced = {m.id: m for m in lab_mistakes()}
    if not isinstance(value, str) or value not in traced:
        shown = repr(value)[:60]
        raise TraceConfigError(
            f"mistake must be one of the catalogue's ids: {', '.join(traced)}; got {shown}", "mistake"
        )
    return traced[value]


def _pair(values) -> str:
    return f"[{', '.join(str(v) for v in values)}]"


def check_lab_config(rc: ResolvedConfig, mistake: Mistake) -> None:
    """Raise TraceConfigError (its field the config key) when the mistake's code could
    not be called with ``rc``'s layer or the trace would not show its loops."""
    if rc.layer != "conv2d":
        raise TraceConfigError(
            f"the mistakes lab traces Conv2d's code: layer must be 'conv2d'; got {rc.layer!r} (the grader names "
            "the transposed layer's catalogued mistakes: convscope check --convention torch)",
            "layer",
        )
    for key, value in LAB_SETTINGS.items():
        if getattr(rc, key) != value:
            raise TraceConfigError(
                f"a mistake trace shows the naive code's loops: {key} must be {value!r}; "
                f"got {getattr(rc, key)!r} (leave {key} out)",
                key,
            )
    if rc.loop_order != rc.view_impl.loop_letters("window"):
        raise TraceConfigError("a mistake trace runs the code's own loops: leave loop_order out", "loop_order")
    if rc.b is None:
        raise TraceConfigError("a mistake trace needs b: the mistake's code adds a bias (send zeros for none)", "b")
    if rc.padding_mode != "zeros":
        raise TraceConfigError(
            f"the mistakes' code pads with zeros: padding_mode must be 'zeros'; got {rc.padding_mode!r}",
            "padding_mode",
        )
    if rc.flip:
        raise TraceConfigError("the mistakes' code correlates: leave flip out (it is false)", "flip")
    spec, where = rc.spec, f"the {mistake.convention} code of mistake {mistake.id!r}"
    top, bottom, left, right = spec.padding
    if mistake.convention in ("cs231n", "layer") and spec.stride[0] != spec.stride[1]:
        raise TraceConfigError(f"{where} takes one stride for both axes; got {_pair(spec.stride)}", "stride")
    if mistake.convention == "cs231n" and len(set(spec.padding)) != 1:
        raise TraceConfigError(f"{where} takes one padding for every side; got {_pair(spec.padding)}", "padding")
    if mistake.convention == "torch" and (top != bottom or left != right):
        raise TraceConfigError(
            f"{where} pads top and bottom alike and left and right alike; got {_pair(spec.padding)}", "padding"
        )
    if mistake.convention != "torch" and spec.dilation != (1, 1):
        raise TraceConfigError(f"{where} has no dilation; got {_pair(spec.dilation)}", "dilation")
    if mistake.convention != "torch" and spec.groups != 1:
        raise TraceConfigError(f"{where} has no groups; got {spec.groups}", "groups")
    if mistake.convention != "layer" and rc.activation.name != "identity":
        raise TraceConfigError(
            f"{where} has no activation: activation must be 'identity'; got {rc.activation.name!r}", "activation"
        )


def _pads(rc: ResolvedConfig, loops: Any) -> tuple[int, int, int, int]:
    """The zeros the mistaken loops put around x; the true ones when their pad step
    raises (the pass then stops there: fewer events than the bound)."""
    try:
        return loops.pads()
    except Exception:  # noqa: BLE001 - a mistake's own error (pad_only_if_pad)
        return tuple(rc.spec.padding)


def _loop_phases(rc: ResolvedConfig, loops: Any) -> list[tuple[int, int, int, int]]:
    """Per phase of the mistaken loops ``loops`` (a PlainLoops): (events, boxes, writes and
    cells written per event), upper bounds from the geometry alone (plain_loops' table)."""
    spec = rc.spec
    n, c, h, w = spec.x_shape
    f, window = spec.F, spec.KH * spec.KW
    top, bottom, left, right = _pads(rc, loops)
    hp, wp = h + top + bottom, w + left + right
    ho, wo = (max(0, size) for size in loops.out_hw())
    bh, bw = (max(0, size) for size in loops.backward_hw())
    dz_hw = max(ho, spec.out_hw[0]) * max(wo, spec.out_hw[1])  # z's shape broadcast with dout's
    phases = [
        (n * c * h, 2, 1, w),  # pad: one per row of x
        (n * f * ho * wo, 4, 1, 1),  # forward: one per output position
        (n * f, 3, 1, ho * wo),  # activation
        (n * f, 3, 1, dz_hw),  # activation grad
        (1, 2, 1, f + max(wo, spec.out_hw[1])),  # db (over the wrong axes: a row of dz)
        (n * bh * bw, 2 * f + 3, f + 1, (c + f * spec.channels_per_group) * window),  # backward
        (n * c, 2, 1, hp * wp),  # crop
    ]
    if loops.dx_by_rotation:
        phases.append((n * hp * wp, 3, 1, c))  # the dx gather: one per cell of dxp
    return phases


def mistake_cost(rc: ResolvedConfig, mistake: Mistake) -> TraceCost:
    """The cost of the mistake trace of ``rc`` (module notes), from the geometry alone, in
    the measures and with the constants of ``convcore.trace.cost``."""
    spec, loops = rc.spec, mistake.loops(rc, mistake.convention)
    phases = _loop_phases(rc, loops)
    events = sum(count for count, *_ in phases)
    boxes = sum(count * per for count, per, _, _ in phases)
    writes = sum(count * per for count, _, per, _ in phases)
    cells = sum(count * per for count, _, _, per in phases)
    n, c, h, w = spec.x_shape
    top, bottom, left, right = _pads(rc, loops)
    padded = n * c * (h + top + bottom) * (w + left + right)
    outputs = n * spec.F * max(math.prod(loops.out_hw()), math.prod(spec.out_hw)) * 2  # as large as dz may be
    inputs = math.prod(spec.x_shape) + math.prod(spec.w_shape) + spec.F + math.prod(spec.out_shape)
    truth = math.prod(spec.out_shape) + math.prod(spec.x_shape) + math.prod(spec.w_shape) + spec.F
    header_cells = inputs + 3 * padded + 2 * outputs + math.prod(spec.w_shape) + phases[4][3] + truth
    code = mistake_code(mistake)  # the header's code (lines and the correct ones) and each event's lines
    code_bytes = len(json.dumps(code, ensure_ascii=False).encode()) if code else 0
    line_bytes = (LINE_BYTES * events + LINE_NUMBER_BYTES * writes) if code else 0
    size = (
        HEADER_BASE_BYTES
        + code_bytes
        + line_bytes
        + HEADER_TENSOR_BYTES * 16
        + NUMBER_BYTES * header_cells
        + HEADER_EXTRA_BYTES
        + TEXT_PER_FILTER * spec.F * (2 + phases[5][0])  # the backward texts (and the divergence's)
        + EVENT_BASE_BYTES * events
        + BOX_BYTES * boxes
        + 2 * NUMBER_BYTES * cells
    )
    gather = phases[7][0] * spec.F * spec.KH * spec.KW // 3 if loops.dx_by_rotation else 0  # taps, as cost's
    work = RUNS * LOOP_WORK * (events + writes + cells // CELLS_PER_EVENT_OF_WORK + gather)
    return TraceCost(events=events, cells_written=cells, header_cells=header_cells, bytes=size, work=work)
