"""Tensors as people give them: nested lists, NumPy arrays or fill specs -> float64 arrays.

``to_array`` is the one place where an input tensor is checked. Rectangular input is
converted by NumPy in one go; only when that fails (ragged rows, a string, a boolean, a
null) is the nested structure walked in Python, to say where the problem is:
``x[0][1] has 4 items but x[0][0] has 5``, ``x[0][0][2][1] is 'a', not a number``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .fill import MAX_DIMS, format_number, make_tensor
from .messages import shorten
from .spec import ConvSpecError

__all__ = ["to_array"]

_NUMBER_TYPES = (int, float, np.integer, np.floating)


def _index(name: str, path: Sequence[int]) -> str:
    """``x[0][2][1]`` for name "x" and path (0, 2, 1)."""
    return name + "".join(f"[{i}]" for i in path)


def _items(count: int) -> str:
    return f"{count} item" if count == 1 else f"{count} items"


def _is_sequence(node: Any) -> bool:
    return isinstance(node, (list, tuple)) or (isinstance(node, np.ndarray) and node.ndim > 0)


def _is_number(node: Any) -> bool:
    return isinstance(node, _NUMBER_TYPES) and not isinstance(node, (bool, np.bool_))


def _leaf_problem(node: Any) -> str | None:
    """Why a leaf is not a usable number, or None if it is one."""
    if isinstance(node, np.ndarray):  # 0-d array
        node = node.item()
    if not _is_number(node):
        if isinstance(node, (bool, np.bool_)):
            return f"is {bool(node)}, not a number (booleans are not numbers)"
        return f"is {shorten(node)}, not a number"
    try:
        value = float(node)
    except OverflowError:
        return f"is an integer with {len(str(abs(int(node))))} digits, too large for a float64"
    if math.isnan(value):
        return "is NaN; every value must be a finite number"
    if math.isinf(value):
        return f"is {'-' if value < 0 else ''}Infinity; every value must be a finite number"
    return None


def _first_items_shape(value: Any) -> tuple[tuple[int, ...], bool]:
    """The lengths along the first items (``x``, ``x[0]``, ``x[0][0]``, ...): the shape
    when ``value`` is rectangular. Also whether an empty list ended the walk (then the
    depth says nothing). Iterative, so any nesting depth is measured."""
    lengths: list[int] = []
    node = value
    while _is_sequence(node):
        lengths.append(len(node))
        if len(node) == 0:
            return tuple(lengths), True
        node = node[0]
    return tuple(lengths), False


def _ndim_message(name: str, ndim: int, axes: str | None, shape: tuple[int, ...]) -> str:
    words = f" {axes}" if axes else ""
    return f"{name} must have {ndim} dimensions{words}, got {len(shape)}: shape {shorten(shape)}"


def _check_depth(value: Any, name: str, ndim: int | None, axes: str | None) -> None:
    """Refuse nested lists of the wrong depth before NumPy sees them (NumPy cannot
    iterate over more than 32 dimensions). Rectangular input is not walked."""
    shape, ended_empty = _first_items_shape(value)
    if ndim is not None and (len(shape) > ndim or (len(shape) < ndim and not ended_empty)):
        raise ConvSpecError(_ndim_message(name, ndim, axes, shape), name)
    if len(shape) > MAX_DIMS:
        raise ConvSpecError(
            f"{name} has lists nested {len(shape)} deep; at most {MAX_DIMS} dimensions are supported",
            name,
        )


def _explain(value: Any, name: str) -> str | None:
    """The first problem (row-major) that keeps ``value`` from being a rectangular array
    of finite numbers, naming its index path; None when there is none."""
    # The reference shape is read along the first items: x, x[0], x[0][0], ...
    reference = list(_first_items_shape(value)[0])

    def visit(node: Any, path: tuple[int, ...]) -> str | None:
        depth = len(path)
        here = _index(name, path)
        first = _index(name, (0,) * depth)
        if depth < len(reference):
            if not _is_sequence(node):
                shown = shorten(node) if not _is_number(node) else format_number(node)
                return f"{here} is {shown}, not a list of {_items(reference[depth])} like {first}"
            if len(node) == 0:
                return f"{here} is empty; every dimension needs at least one item"
            if len(node) != reference[depth]:
                return f"{here} has {_items(len(node))} but {first} has {reference[depth]}"
            for i, child in enumerate(node):
                problem = visit(child, path + (i,))
                if problem:
                    return problem
            return None
        if _is_sequence(node):
            return f"{here} is a list of {_items(len(node))} but {first} is a number"
        problem = _leaf_problem(node)
        return f"{here} {problem}" if problem else None

    return visit(value, ())


def _convert_nested(value: Any, name: str) -> np.ndarray:
    """Nested lists/tuples of numbers -> float64, walking the structure only on failure."""
    try:
        objects = np.array(value, dtype=object)
        types = set(map(type, objects.flat))
        if all(issubclass(t, _NUMBER_TYPES) and not issubclass(t, (bool, np.bool_)) for t in types):
            return objects.astype(np.float64)
        reason = None
    except (ValueError, TypeError, OverflowError) as exc:
        reason = exc
    problem = _explain(value, name)
    if problem:
        raise ConvSpecError(problem, name)
    raise ConvSpecError(f"{name} must be a rectangular array of numbers ({reason})", name)


def _first_index(mask: np.ndarray) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argwhere(mask)[0])


def to_array(
    value: Any,
    name: str,
    ndim: int | None = None,
    max_abs: float | None = None,
    axes: str | None = None,
    max_elements: int | None = None,
) -> np.ndarray:
    """``value`` as a float64 array, checked once at the boundary.

    Parameters
    ----------
    value : nested lists/tuples of numbers, a NumPy array, or a fill spec dict
        (``{"fill": "randint", "shape": [...], ...}``, see ``convcore.fill``)
    name : the parameter's name, used in messages and as the error's field
    ndim : required number of dimensions, or None for any
    max_abs : largest allowed |value|, or None for no limit
    axes : words for the dimensions in the ndim message, e.g. "(N, C, H, W)"
    max_elements : largest allowed number of elements (checked before a fill spec is
        generated), or None for no limit

    Returns
    -------
    A float64 array (a new array, never a view of ``value``) with every dimension >= 1
    and every value finite.

    Raises ConvSpecError(field=name) naming the index path and the numbers.
    """
    if isinstance(value, Mapping):
        arr = make_tensor(value, name=name, max_elements=max_elements)
    elif isinstance(value, np.ndarray) and value.dtype.kind in "iuf":
        arr = value.astype(np.float64)  # always a copy
    else:
        nested = value.tolist() if isinstance(value, np.ndarray) else value
        _check_depth(nested, name, ndim, axes)
        arr = _convert_nested(nested, name)

    if arr.size == 0:
        problem = _explain(value, name) if not isinstance(value, np.ndarray) else None
        raise ConvSpecError(problem or f"{name} has shape {arr.shape}; every dimension needs at least one item", name)
    if max_elements is not None and arr.size > max_elements:
        raise ConvSpecError(f"{name} has {arr.size} elements (shape {arr.shape}); the limit is {max_elements}", name)
    if ndim is not None and arr.ndim != ndim:
        raise ConvSpecError(_ndim_message(name, ndim, axes, arr.shape), name)
    finite = np.isfinite(arr)
    if not finite.all():
        index = _first_index(~finite)
        raise ConvSpecError(f"{_index(name, index)} {_leaf_problem(arr[index])}", name)
    if max_abs is not None:
        too_large = np.abs(arr) > max_abs
        if too_large.any():
            index = _first_index(too_large)
            raise ConvSpecError(
                f"{_index(name, index)} is {format_number(arr[index])}, beyond the limit: "
                f"|value| must be at most {format_number(max_abs)}",
                name,
            )
    return arr
