"""Checks that run before any computing: sizes against the limits, input numbers.

Sizes are read from the request alone (a fill spec's ``shape``, or the lengths of the
nested lists along their first items), so that a fill spec asking for 10^12 elements,
or a padding that would make a 10^12-cell padded input, is refused by its numbers
before anything is allocated. The event count comes from ``convcore.trace.count_events``
(the one source of that fact); the geometry from ``ConvSpec`` (likewise).

Ragged lists and bad parameters are left to convcore, whose messages name the field,
the index path and the numbers.
"""

from __future__ import annotations

import math
from typing import Any

from convcore.spec import ConvSpec, ConvSpecError

from .errors import ApiError, too_large, unprocessable
from .settings import Settings

__all__ = ["TENSOR_KEYS", "check_inputs", "declared_shape", "elements", "spec_from_shapes"]

TENSOR_KEYS = ("x", "w", "b", "dout")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def declared_shape(value: Any) -> tuple[int, ...] | None:
    """The shape a tensor input asks for, without building it.

    A fill spec's ``shape``; for nested lists, the length at each depth along the first
    items (the true shape when the lists are rectangular). None when it cannot be told
    (convcore then says what is wrong).
    """
    if isinstance(value, dict):
        shape = value.get("shape")
        if isinstance(shape, list) and all(_is_int(d) and d >= 0 for d in shape):
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


def show_number(value: float) -> str:
    """A number as people write it: 1000000 rather than 1e+06, up to 1e15."""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def _index(name: str, path: tuple[int, ...]) -> str:
    return name + "".join(f"[{i}]" for i in path)


def _first_bad_number(value: list[Any], path: tuple[int, ...], max_abs: float) -> tuple[tuple[int, ...], str] | None:
    """The index path and the fault of the first leaf that is not a finite number within
    ±max_abs, or None."""
    for i, item in enumerate(value):
        kind = type(item)
        if kind is list:
            found = _first_bad_number(item, path + (i,), max_abs)
            if found:
                return found
        elif kind is int or kind is float:
            if kind is float and not math.isfinite(item):
                return path + (i,), f"is {item}: numbers must be finite"
            if abs(item) > max_abs:
                return path + (i,), f"= {show_number(item)} is beyond ±{show_number(max_abs)}"
        else:
            shown = "null" if item is None else ("true" if item is True else "false" if item is False else repr(item))
            return path + (i,), f"is {shown}, not a number"
    return None


def _check_numbers(name: str, value: Any, max_abs: float) -> None:
    """Refuse non-numbers, NaN/Infinity and magnitudes beyond ``max_abs`` in a literal
    tensor (nested lists), naming the index. Fill specs are checked after generation."""
    if isinstance(value, list):
        found = _first_bad_number(value, (), max_abs)
        if found:
            path, fault = found
            raise unprocessable(name, f"{_index(name, path)} {fault}")
    elif isinstance(value, float) and not math.isfinite(value):
        raise unprocessable(name, f"{name} is {value}: numbers must be finite")


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

    None when x or w has no 4-D declared shape (convcore reports that). Raises
    ConvSpecError for a bad geometry.
    """
    if len(shapes.get("x", ())) != 4 or len(shapes.get("w", ())) != 4:
        return None
    layout = config.get("layout", "NCHW")
    kwargs = {key: config[key] for key in ("stride", "padding", "dilation", "groups") if config.get(key) is not None}
    return ConvSpec.create(_to_nchw(shapes["x"], "x", layout), _to_nchw(shapes["w"], "w", layout), **kwargs)


def _derived_tensors(spec: ConvSpec, config: dict[str, Any]) -> dict[str, int]:
    """Element counts of the tensors a trace builds from the inputs."""
    ho, wo = spec.out_hw
    sizes = {
        "xp": elements(spec.padded_shape),
        "out": elements(spec.out_shape),
    }
    if config.get("view") == "im2col":
        sizes["cols"] = spec.N * ho * wo * spec.C * spec.KH * spec.KW
    return sizes


_DERIVED_NAMES = {
    "xp": ("padding", "the padded input xp"),
    "out": ("x", "the output"),
    "cols": ("view", "the im2col column matrix"),
}


def check_inputs(config: dict[str, Any], settings: Settings) -> ConvSpec | None:
    """Check a trace/conv config against the limits before anything is computed.

    Raises ApiError (413 for sizes, 422 for bad numbers and geometry). Returns the
    spec read from the declared shapes, or None when convcore must say what is wrong.
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
                f"{name} has {count} elements (shape {list(shape)}), the limit is {limit} per tensor",
            )
        shapes[name] = shape
    for name in TENSOR_KEYS:
        _check_numbers(name, config.get(name), settings.max_abs_value)
    try:
        spec = spec_from_shapes(config, shapes)
    except ConvSpecError as exc:
        raise unprocessable(exc.field, str(exc)) from exc
    except (TypeError, ValueError, OverflowError):
        return None  # not a geometry convcore can read: let it explain
    if spec is None:
        return None
    for tensor, count in _derived_tensors(spec, config).items():
        if count > limit:
            field, what = _DERIVED_NAMES[tensor]
            raise too_large(
                field,
                f"{what} would have {count} elements, the limit is {limit} per tensor",
            )
    return spec


def check_values_after_fill(name: str, array: Any, max_abs: float) -> None:
    """Refuse a generated tensor (``array``: any shape) with a value beyond ±max_abs."""
    if array is None or getattr(array, "size", 0) == 0:
        return
    import numpy as np

    magnitude = np.abs(array)
    worst = int(np.argmax(magnitude))
    if not np.isfinite(magnitude.flat[worst]) or magnitude.flat[worst] > max_abs:
        index = [int(i) for i in np.unravel_index(worst, array.shape)]
        raise unprocessable(
            name, f"{_index(name, tuple(index))} = {show_number(array.flat[worst])} is beyond ±{show_number(max_abs)}"
        )


def raise_for(exc: Exception) -> ApiError:
    """An ApiError for an exception convcore raised on bad input."""
    field = getattr(exc, "field", None)
    if isinstance(exc, MemoryError):
        return too_large(field, "the request needs more memory than this server has")
    return unprocessable(field, str(exc) or type(exc).__name__)


__all__ += ["check_values_after_fill", "raise_for", "ApiError"]
