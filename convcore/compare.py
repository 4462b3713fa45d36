"""Compare someone's result tensors with the true ones, cell by cell.

``compare_tensor(name, expected, got)`` says whether ``got`` is the same tensor as
``expected`` (same shape, every value within a tolerance) and, when it is not, how: a
different shape, or the cells whose values differ with the expected and the received
value of each. The grader judges a student's outputs with it and a trace request's
"compare your numbers" uses it through ``compare_tensors``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["MAX_LISTED", "TensorComparison", "compare_tensor", "compare_tensors", "values_equal"]

MAX_LISTED = 20  # differing cells listed one by one; the count says how many there are
RTOL, ATOL = 1e-6, 1e-9


def values_equal(expected: np.ndarray, got: np.ndarray) -> np.ndarray:
    """Elementwise "the same number" for two arrays of one shape: within a relative
    tolerance of 1e-6 of the tensor's largest magnitude (floating-point sums in another
    order differ by far less), so that small values next to large ones are not judged
    more strictly than the sum they belong to."""
    scale = max(float(np.max(np.abs(expected), initial=0.0)), 1.0)
    return np.abs(np.asarray(got, dtype=np.float64) - expected) <= ATOL + RTOL * scale


@dataclass(frozen=True)
class TensorComparison:
    """How a received tensor compares with the true one.

    Attributes
    ----------
    name : the tensor's name (``dx``, ``dw``, ``db``, ``out``)
    match : same shape and every value equal (within the tolerance)
    kind : "match", "wrong shape", "wrong values" or "not numbers"
    expected_shape, got_shape : the shapes (got_shape None when got has none)
    differing : per differing cell ``{"index": [...], "expected": v, "got": v}``, at
        most MAX_LISTED of them, in row-major order
    differing_count : how many cells differ
    differing_flat : the flat row-major index of every differing cell (all of them: a
        tensor here has at most the service's cell limit), for marking them
    message : the comparison in one sentence
    """

    name: str
    match: bool
    kind: str
    expected_shape: tuple[int, ...]
    got_shape: tuple[int, ...] | None
    differing: list[dict[str, Any]] = field(default_factory=list)
    differing_count: int = 0
    message: str = ""
    differing_flat: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "match": self.match,
            "kind": self.kind,
            "expected_shape": list(self.expected_shape),
            "got_shape": None if self.got_shape is None else list(self.got_shape),
            "differing": self.differing,
            "differing_count": self.differing_count,
            "differing_flat": self.differing_flat,
            "message": self.message,
        }


def _as_numbers(got: Any) -> np.ndarray | None:
    """``got`` as a float64 array, or None when it is not numbers (NaN stays NaN)."""
    if got is None or isinstance(got, (str, bytes, dict)):
        return None
    try:
        array = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        return None
    return array


def _equivalent_bias(name: str, expected: np.ndarray, got: np.ndarray) -> np.ndarray:
    """A bias gradient given as (1, F) where (F,) is expected, or the reverse, counts as
    the same shape (seed 001 keeps b as (1, F)); every other shape is its own."""
    if (
        name == "db"
        and got.size == expected.size
        and {got.ndim, expected.ndim} == {1, 2}
        and 1 in (got.shape + expected.shape)[:3]
    ):
        return got.reshape(expected.shape)
    return got


def compare_tensor(name: str, expected: np.ndarray, got: Any) -> TensorComparison:
    """Compare ``got`` (an array or nested lists) with ``expected`` (an array).

    Shapes must be equal (a db of (1, F) for (F,) excepted); values are equal within
    ``values_equal``'s tolerance. NaN or infinity in ``got`` differs from any number.
    """
    expected = np.asarray(expected, dtype=np.float64)
    array = _as_numbers(got)
    if array is None:
        what = (
            "None: nothing was returned for it" if got is None else f"a {type(got).__name__}, not an array of numbers"
        )
        return TensorComparison(name, False, "not numbers", expected.shape, None, message=f"{name} is {what}")
    array = _equivalent_bias(name, expected, array)
    if array.shape != expected.shape:
        return TensorComparison(
            name,
            False,
            "wrong shape",
            expected.shape,
            array.shape,
            message=f"{name} has shape {array.shape}, expected {expected.shape}",
        )
    with np.errstate(invalid="ignore"):
        same = values_equal(expected, array)
    count = int(same.size - np.count_nonzero(same))
    if count == 0:
        return TensorComparison(name, True, "match", expected.shape, array.shape, message=f"{name} matches")
    listed = []
    differing = np.flatnonzero(~same)
    for flat in differing[:MAX_LISTED]:
        index = np.unravel_index(flat, expected.shape)
        got_value = float(array[index])
        listed.append(
            {
                "index": [int(i) for i in index],
                "flat": int(flat),
                "expected": float(expected[index]),
                "got": got_value if np.isfinite(got_value) else repr(got_value),  # JSON has no NaN
            }
        )
    return TensorComparison(
        name,
        False,
        "wrong values",
        expected.shape,
        array.shape,
        listed,
        count,
        message=f"{name}: {count} of {expected.size} values differ",
        differing_flat=[int(f) for f in differing],
    )


def compare_tensors(expected: Mapping[str, np.ndarray], got: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per tensor named in ``got`` (dx, dw, db, out ...), its comparison with the tensor
    of the same name in ``expected``, as plain data. Raises KeyError naming a tensor
    that ``expected`` does not have."""
    out = {}
    for name, value in got.items():
        if name not in expected:
            raise KeyError(name)
        out[name] = compare_tensor(name, expected[name], value).to_dict()
    return out
