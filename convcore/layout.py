"""Memory layouts: PyTorch's NCHW input / OIHW weights and the NHWC / HWIO of seed 001.

The axis permutations below are the one source of truth; every conversion (arrays,
shapes, the per-axis start/stop/step of a trace Box) uses them with NumPy's transpose
rule: ``result axis i`` is ``source axis perm[i]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import numpy as np

from .spec import ConvSpecError

__all__ = [
    "HWIO_TO_OIHW",
    "NCHW_TO_NHWC",
    "NHWC_TO_NCHW",
    "OIHW_TO_HWIO",
    "hwio_to_oihw",
    "inverse_permutation",
    "nchw_to_nhwc",
    "nhwc_to_nchw",
    "oihw_to_hwio",
    "permute",
]

NCHW_TO_NHWC: tuple[int, int, int, int] = (0, 2, 3, 1)
NHWC_TO_NCHW: tuple[int, int, int, int] = (0, 3, 1, 2)
OIHW_TO_HWIO: tuple[int, int, int, int] = (2, 3, 1, 0)
HWIO_TO_OIHW: tuple[int, int, int, int] = (3, 2, 0, 1)

T = TypeVar("T")


def permute(values: Sequence[T], perm: Sequence[int]) -> tuple[T, ...]:
    """Reorder per-axis ``values`` (a shape, a Box's start/stop/step) as ``np.transpose``
    reorders axes: ``result[i] = values[perm[i]]``.

    ``permute((1, 3, 5, 7), NCHW_TO_NHWC) == (1, 5, 7, 3)``.
    """
    if len(values) != len(perm):
        raise ValueError(f"{len(values)} values for a permutation of {len(perm)} axes")
    return tuple(values[p] for p in perm)


def inverse_permutation(perm: Sequence[int]) -> tuple[int, ...]:
    """The permutation undoing ``perm``: ``permute(permute(v, p), inverse_permutation(p)) == v``."""
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return tuple(inverse)


def _transpose4(a: np.ndarray, perm: tuple[int, ...], name: str, axes: str) -> np.ndarray:
    arr = np.asarray(a)
    if arr.ndim != 4:
        raise ConvSpecError(f"{name} must have 4 dimensions {axes}, got {arr.ndim}: shape {arr.shape}", name)
    return np.ascontiguousarray(arr.transpose(perm))


def nchw_to_nhwc(x: np.ndarray, name: str = "x") -> np.ndarray:
    """``x: (N, C, H, W)`` -> ``(N, H, W, C)`` (a contiguous copy)."""
    return _transpose4(x, NCHW_TO_NHWC, name, "(N, C, H, W)")


def nhwc_to_nchw(x: np.ndarray, name: str = "x") -> np.ndarray:
    """``x: (N, H, W, C)`` -> ``(N, C, H, W)`` (a contiguous copy)."""
    return _transpose4(x, NHWC_TO_NCHW, name, "(N, H, W, C)")


def oihw_to_hwio(w: np.ndarray, name: str = "w") -> np.ndarray:
    """``w: (F, C/groups, KH, KW)`` -> ``(KH, KW, C/groups, F)`` (a contiguous copy)."""
    return _transpose4(w, OIHW_TO_HWIO, name, "(F, C/groups, KH, KW)")


def hwio_to_oihw(w: np.ndarray, name: str = "w") -> np.ndarray:
    """``w: (KH, KW, C/groups, F)`` -> ``(F, C/groups, KH, KW)`` (a contiguous copy)."""
    return _transpose4(w, HWIO_TO_OIHW, name, "(KH, KW, C/groups, F)")
