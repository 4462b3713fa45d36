"""Which trace requests a mistake trace takes, and what one costs.

A mistake trace follows the naive loops of the mistake's convention, so it takes the
layers that code can be called with: CS231n code one stride and one padding for every
side, no dilation, no groups and no activation; the NHWC layer one stride, four
paddings and an activation, no dilation or groups; the PyTorch-named functions a
stride, a padding and a dilation per axis and groups, no activation. It always has a
bias (the code adds b) and shows the direct view's loops at window granularity, with
both passes. ``check_lab_config`` says what does not fit in a TraceConfigError naming
the field.

``mistake_cost`` is the cost (``convcore.trace.cost.trace_cost``) of the trace the
mistake trace replaces, the direct window trace of the same config, scaled by how much
further the mistaken loops run (a loop over the input's size instead of the output's,
a wider padding) and by the runs it makes (the mistaken loops, the correct ones for the
first divergence, the catalogue's code for a crash's message) and by what one of their
steps costs beside one of the engine's (``LOOP_WORK``), plus the true tensors the header
carries. Lessons are small: the work limit admits mistake traces of layers a twelfth
the size of the largest plain traces.
"""

from __future__ import annotations

import math
from typing import Any

from ..trace.config import ResolvedConfig, TraceConfigError
from ..trace.cost import NUMBER_BYTES, TraceCost, trace_cost
from .catalogue import MISTAKES, Mistake

__all__ = ["LAB_SETTINGS", "check_lab_config", "lab_mistake", "mistake_cost"]

# the settings a mistake trace shows (the config's defaults): the naive loops
LAB_SETTINGS = {"view": "direct", "granularity": "window", "backward": "fused", "phases": "both"}

RUNS = 3  # the mistaken loops, the correct loops, the catalogue's code (for a crash's message)
# work of one event of these loops, in the engine's event-equivalents: they compute with
# NumPy window by window, as student code does (bench/mistakes.py measures the ratio)
LOOP_WORK = 5
HEADER_EXTRA_BYTES = 8192  # mistake, differences (at most 20 cells per tensor), divergence, failures


def lab_mistake(value: Any) -> Mistake:
    """The catalogued mistake called ``value``; TraceConfigError at "mistake" naming the ids."""
    if not isinstance(value, str) or value not in MISTAKES:
        shown = repr(value)[:60]
        raise TraceConfigError(f"mistake must be one of the catalogue's ids: {', '.join(MISTAKES)}; got {shown}",
                               "mistake")
    return MISTAKES[value]


def _pair(values) -> str:
    return f"[{', '.join(str(v) for v in values)}]"


def check_lab_config(rc: ResolvedConfig, mistake: Mistake) -> None:
    """Raise TraceConfigError (its field the config key) when the mistake's code could
    not be called with ``rc``'s layer or the trace would not show its loops."""
    for key, value in LAB_SETTINGS.items():
        if getattr(rc, key) != value:
            raise TraceConfigError(f"a mistake trace shows the naive code's loops: {key} must be {value!r}; "
                                   f"got {getattr(rc, key)!r} (leave {key} out)", key)
    if rc.loop_order != rc.view_impl.loop_letters("window"):
        raise TraceConfigError("a mistake trace runs the code's own loops: leave loop_order out", "loop_order")
    if rc.b is None:
        raise TraceConfigError("a mistake trace needs b: the mistake's code adds a bias (send zeros for none)", "b")
    spec, where = rc.spec, f"the {mistake.convention} code of mistake {mistake.id!r}"
    top, bottom, left, right = spec.padding
    if mistake.convention in ("cs231n", "layer") and spec.stride[0] != spec.stride[1]:
        raise TraceConfigError(f"{where} takes one stride for both axes; got {_pair(spec.stride)}", "stride")
    if mistake.convention == "cs231n" and len(set(spec.padding)) != 1:
        raise TraceConfigError(f"{where} takes one padding for every side; got {_pair(spec.padding)}", "padding")
    if mistake.convention == "torch" and (top != bottom or left != right):
        raise TraceConfigError(f"{where} pads top and bottom alike and left and right alike; got "
                               f"{_pair(spec.padding)}", "padding")
    if mistake.convention != "torch" and spec.dilation != (1, 1):
        raise TraceConfigError(f"{where} has no dilation; got {_pair(spec.dilation)}", "dilation")
    if mistake.convention != "torch" and spec.groups != 1:
        raise TraceConfigError(f"{where} has no groups; got {spec.groups}", "groups")
    if mistake.convention != "layer" and rc.activation.name != "identity":
        raise TraceConfigError(f"{where} has no activation: activation must be 'identity'; got "
                               f"{rc.activation.name!r}", "activation")


def mistake_cost(rc: ResolvedConfig, mistake: Mistake) -> TraceCost:
    """The cost of the mistake trace of ``rc`` (module notes), from the geometry alone."""
    from .traced import traced_loops

    base = trace_cost(rc)
    spec, loops = rc.spec, traced_loops(mistake.id)(rc, mistake.convention)
    positions = spec.out_hw[0] * spec.out_hw[1]
    top, bottom, left, right = loops.pads()
    padded = (spec.H + top + bottom) * (spec.W + left + right)
    reach = max(1.0, math.prod(loops.out_hw()) / positions, math.prod(loops.backward_hw()) / positions,
                padded / math.prod(spec.padded_hw))
    gather_events = spec.N * padded if loops.dx_by_rotation else 0  # one per cell of dxp
    gather_work = gather_events * spec.F * spec.KH * spec.KW // 3
    truth_cells = math.prod(spec.out_shape) + math.prod(spec.x_shape) + math.prod(spec.w_shape) + spec.F
    events = math.ceil(base.events * reach) + gather_events + 1  # + 1: the one db event
    cells = math.ceil(base.cells_written * reach) + gather_events * spec.C
    header_cells = math.ceil(base.header_cells * reach)
    size = (math.ceil(base.bytes * reach) + NUMBER_BYTES * (truth_cells + 3 * gather_events * spec.C)
            + 500 * gather_events + HEADER_EXTRA_BYTES)
    work = RUNS * LOOP_WORK * (math.ceil(base.work * reach) + gather_events + gather_work)
    return TraceCost(events=events, cells_written=cells, header_cells=header_cells + truth_cells, bytes=size,
                     work=work)
