"""Size checks that run before anything is allocated or computed.

Input sizes are read from the request alone (a fill spec's ``shape``, or the lengths
of the nested lists along their first items), so that a fill spec asking for 10^12
elements is refused by its numbers before anything is generated. Everything derived
(the padded input, the output, a view's matrices, the trace's cost) is read from the
config convcore resolved once (``convscope.traces.prepare.prepare``): a padding that would make a
10^12-cell padded input is refused by the spec's numbers before anything is allocated,
and the cost (``convcore.trace.cost``) before any event is generated.

Everything else (ragged lists, non-numbers, NaN, values beyond ±max_abs, bad
parameters) is left to ``convcore.trace.resolve_config``, whose messages name the
field, the index path and the numbers.
"""

from __future__ import annotations

import math
from typing import Any

from convcore.messages import shorten
from convcore.trace.cost import TraceCost
from convcore.values import is_int

from ..http.errors import ApiError, too_large, unprocessable
from ..settings import Settings

__all__ = [
    "TENSOR_KEYS",
    "check_cost",
    "check_derived",
    "check_inputs",
    "derived_check",
    "declared_shape",
    "elements",
    "raise_for",
]

TENSOR_KEYS = ("x", "w", "b", "dout")


def declared_shape(value: Any) -> tuple[int, ...] | None:
    """The shape a tensor input asks for, without building it.

    A fill spec's ``shape``; for nested lists, the length at each depth along the first
    items (the true shape when the lists are rectangular). None when it cannot be told
    (convcore then says what is wrong).
    """
    if isinstance(value, dict):
        shape = value.get("shape")
        if isinstance(shape, list) and all(is_int(d) and d >= 0 for d in shape):
            return tuple(shape)
        return None
    if isinstance(value, list):
        dims: list[int] = []
        item: Any = value
        while isinstance(item, list):
            dims.append(len(item))
            if not item:
                break
            item = item[0]
        return tuple(dims)
    return None


def elements(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


def _derived_tensors(spec: Any, view: Any) -> dict[str, int]:
    """Element counts of the tensors a trace builds from the inputs, the view's own
    included (``View.extra_shapes``), from the spec alone (nothing allocated)."""
    sizes = {"xp": elements(spec.padded_shape), "out": elements(spec.out_shape)}
    for name, shape in view.extra_shapes(spec).items():
        sizes[name] = elements(shape)
    return sizes


_DERIVED_NAMES = {
    "xp": ("padding", "the padded input xp"),
    "out": ("x", "the output"),
}


def check_inputs(config: dict[str, Any], settings: Settings) -> None:
    """Hold the input tensors' declared sizes to the limit before anything is generated
    (a fill spec of 10^12 elements is refused by its numbers). Raises ApiError (413)."""
    limit = settings.max_tensor_elements
    for name in TENSOR_KEYS:
        shape = declared_shape(config.get(name))
        if shape is None:
            continue
        count = elements(shape)
        if count > limit:
            raise too_large(
                name,
                f"{name} has {shorten(count)} elements (shape {shorten(list(shape))}), the limit is {limit} per tensor",
            )


def derived_check(settings: Settings):
    """``check_spec(spec, view)`` for ``resolve_config``: holds the padded input, the
    output and the view's own tensors to the tensor limit as soon as convcore knows the
    geometry, before it makes anything output-sized. Raises ApiError (413)."""
    return lambda spec, view: check_derived(spec, view, settings)


def check_derived(spec: Any, view: Any, settings: Settings) -> None:
    """Hold the tensors a trace of ``spec`` (a ConvSpec) in ``view`` (a View) derives to
    the tensor limit. Raises ApiError (413)."""
    limit = settings.max_tensor_elements
    for tensor, count in _derived_tensors(spec, view).items():
        if count > limit:
            field, what = _DERIVED_NAMES.get(tensor, ("view", f"the {view.name} view's {tensor}"))
            raise too_large(field, f"{what} would have {shorten(count)} elements, the limit is {limit} per tensor")


def _megabytes(count: int) -> str:
    return f"{count / 1e6:.1f} MB"


def check_cost(cost: TraceCost, settings: Settings) -> None:
    """Hold a trace's cost (``convcore.trace.cost``) to the limits: events, predicted
    bytes, CPU work. Raises ApiError (413) naming the measure, its value and the limit."""
    if cost.events > settings.max_events:
        raise too_large(
            None,
            f"events: the trace would have {cost.events} events, the limit is {settings.max_events} "
            f"(use granularity 'window', fewer phases or smaller tensors)",
        )
    if cost.bytes > settings.max_trace_bytes:
        raise too_large(
            None,
            f"bytes: the trace would weigh up to {cost.bytes} bytes ({_megabytes(cost.bytes)}; "
            f"{cost.cells_written} cells written over {cost.events} events), the limit is "
            f"{settings.max_trace_bytes} bytes ({_megabytes(settings.max_trace_bytes)}) "
            f"(use smaller kernels, fewer channels or phases 'forward')",
        )
    if cost.work > settings.max_work:
        raise too_large(
            None,
            f"work: the trace would take {cost.work} units of work (events + cells written / 32), "
            f"the limit is {settings.max_work} (use smaller tensors or granularity 'window')",
        )


def raise_for(exc: Exception) -> ApiError:
    """An ApiError for an exception convcore raised on bad input."""
    field = getattr(exc, "field", None)
    if isinstance(exc, MemoryError):
        return too_large(field, "the request needs more memory than this server has")
    return unprocessable(field, str(exc) or type(exc).__name__)
