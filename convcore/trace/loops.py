"""Loop nests in a chosen order, yielding indices in a fixed (canonical) order."""

from __future__ import annotations

from itertools import product
from operator import itemgetter
from typing import Iterator, Mapping

import numpy as np

__all__ = ["ordered", "ordered_chunks", "sub_order"]


def sub_order(order: str, letters: str) -> str:
    """The letters of ``letters`` in the order they appear in ``order``."""
    return "".join(c for c in order if c in letters)


def ordered(order: str, canonical: str, sizes: Mapping[str, int]) -> Iterator[tuple[int, ...]]:
    """Every index tuple of the loop nest ``order`` (outermost first), each given in the
    ``canonical`` letter order: ``ordered("jinf", "nfij", sizes)`` yields (n, f, i, j)
    with j outermost."""
    ranges = [range(sizes[c]) for c in order]
    getter = itemgetter(*[order.index(c) for c in canonical])
    return map(getter, product(*ranges))


def ordered_chunks(order: str, canonical: str, sizes: Mapping[str, int], chunk: int = 4096) -> Iterator[tuple[np.ndarray, ...]]:
    """The same loop nest in chunks of at most ``chunk`` iterations: per chunk one int64
    array per canonical letter (for vectorised index arithmetic in hot loops)."""
    dims = [sizes[c] for c in order]
    total = int(np.prod(dims))
    where = [order.index(c) for c in canonical]
    for start in range(0, total, chunk):
        flat = np.arange(start, min(start + chunk, total), dtype=np.int64)
        idx = np.unravel_index(flat, dims)
        yield tuple(idx[k] for k in where)
