"""Size checks that run before anything is allocated or computed.

Sizes are read from the request alone (a fill spec's ``shape``, or the lengths of the
nested lists along their first items), so that a fill spec asking for 10^12 elements,
or a padding that would make a 10^12-cell padded input, is refused by its numbers
before anything is allocated. The event count comes from ``convcore.trace.count_events``
(the one source of that fact); the geometry from ``ConvSpec`` (likewise).

Everything else (ragged lists, non-numbers, NaN, values beyond ±max_abs, bad
parameters) is left to ``convcore.trace.resolve_config``, whose messages name the
field, the index path and the numbers.
"""

from __future__ import annotations

import math
from typing import Any

from convcore.messages import shorten
from convcore.spec import ConvSpec
from convcore.trace import DEFAULTS
from convcore.trace.views import get_view
from convcore.values import is_int

from .errors import ApiError, too_large, unprocessable
from .settings import Settings

__all__ = ["TENSOR_KEYS", "check_inputs", "declared_shape", "elements", "raise_for", "spec_from_shapes"]

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


def _to_nchw(shape: tuple[int, ...], name: str, layout: Any) -> tuple[int, ...]:
    """x (N, H, W, C) -> (N, C, H, W) and w (KH, KW, C, F) -> (F, C, KH, KW) for NHWC."""
    if layout != "NHWC" or len(shape) != 4:
        return shape
    if name == "x":
        n, h, w, c = shape
        return (n, c, h, w)
    kh, kw, c, f = shape
    return (f, c, kh, kw)


def spec_from_shapes(config: dict[str, Any], shapes: dict[str, tuple[int, ...]]) -> ConvSpec | None:
    """The ConvSpec the request describes, from declared shapes only (no arrays).

    An x or w left out is convcore's default tensor. None when x or w has no 4-D
    declared shape (convcore reports that). Raises
    ConvSpecError for a bad geometry.
    """
    layout = config.get("layout", "NCHW")
    nchw = {}
    for name in ("x", "w"):
        if config.get(name) is None:  # convcore's default tensor, the same geometry in both layouts
            nchw[name] = tuple(DEFAULTS[name]["shape"])
        elif len(shapes.get(name, ())) == 4:
            nchw[name] = _to_nchw(shapes[name], name, layout)
        else:
            return None
    kwargs = {key: config[key] for key in ("stride", "padding", "dilation", "groups") if config.get(key) is not None}
    return ConvSpec.create(nchw["x"], nchw["w"], **kwargs)


def _derived_tensors(spec: ConvSpec, config: dict[str, Any]) -> dict[str, int]:
    """Element counts of the tensors a trace builds from the inputs, the view's own
    included (``View.extra_shapes``), from the geometry alone."""
    sizes = {
        "xp": elements(spec.padded_shape),
        "out": elements(spec.out_shape),
    }
    view_name = config.get("view") or DEFAULTS["view"]
    view = get_view(view_name) if isinstance(view_name, str) else None
    if view is not None:  # an unknown view: convcore names the allowed ones
        for name, shape in view.extra_shapes(spec).items():
            sizes[name] = elements(shape)
    return sizes


_DERIVED_NAMES = {
    "xp": ("padding", "the padded input xp"),
    "out": ("x", "the output"),
}


def check_inputs(config: dict[str, Any], settings: Settings) -> ConvSpec | None:
    """Check a trace/conv config against the limits before anything is computed.

    Raises ApiError (413). Returns the spec read from the declared shapes, or None when
    the request is malformed and convcore must say what is wrong.
    """
    limit = settings.max_tensor_elements
    shapes: dict[str, tuple[int, ...]] = {}
    for name in TENSOR_KEYS:
        value = config.get(name)
        shape = declared_shape(value)
        if shape is None:
            continue
        count = elements(shape)
        if count > limit:
            raise too_large(
                name,
                f"{name} has {shorten(count)} elements (shape {shorten(list(shape))}), the limit is {limit} per tensor",
            )
        shapes[name] = shape
    try:
        spec = spec_from_shapes(config, shapes)
    except (TypeError, ValueError, OverflowError):
        return None  # a geometry convcore will refuse, with its own message
    if spec is None:
        return None
    for tensor, count in _derived_tensors(spec, config).items():
        if count > limit:
            field, what = _DERIVED_NAMES.get(tensor, ("view", f"the {config.get('view')} view's {tensor}"))
            raise too_large(
                field,
                f"{what} would have {shorten(count)} elements, the limit is {limit} per tensor",
            )
    return spec


def raise_for(exc: Exception) -> ApiError:
    """An ApiError for an exception convcore raised on bad input."""
    field = getattr(exc, "field", None)
    if isinstance(exc, MemoryError):
        return too_large(field, "the request needs more memory than this server has")
    return unprocessable(field, str(exc) or type(exc).__name__)


