"""Loop nests in a chosen order, yielding indices in a fixed (canonical) order, and
what each loop letter means in words (the header's ``loop_names``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from itertools import product
from operator import itemgetter

import numpy as np

__all__ = ["LOOP_WORDS", "loop_names", "ordered", "ordered_chunks", "sub_order"]

# every loop letter an event's ``loop`` may hold, in words
LOOP_WORDS: dict[str, str] = {
    "n": "image",
    "f": "filter",
    "i": "output row",
    "j": "output column",
    "c": "input channel",
    "k": "kernel row",
    "l": "kernel column",
    "h": "input row",
    "y": "row of the padded input",
    "x": "column of the padded input",
}


def loop_names(letters: str, *, groups: int = 1, padded: bool = True) -> dict[str, str]:
    """``{letter: words}`` for ``letters`` (each once, in their order). With ``groups`` > 1
    the letter c indexes w's second axis where a step reads w cell by cell (MACs, dw);
    without padding y and x are the input's own rows and columns."""
    words = dict(LOOP_WORDS)
    if groups > 1:
        words["c"] = (
            "input channel (in a multiply-add and in dw: the channel within the filter's group, w's second axis)"
        )
    if not padded:
        words["y"], words["x"] = "input row", "input column"
    return {letter: words[letter] for letter in dict.fromkeys(letters)}


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


def ordered_chunks(
    order: str, canonical: str, sizes: Mapping[str, int], chunk: int = 4096
) -> Iterator[tuple[np.ndarray, ...]]:
    """The same loop nest in chunks of at most ``chunk`` iterations: per chunk one int64
    array per canonical letter (for vectorised index arithmetic in hot loops)."""
    dims = [sizes[c] for c in order]
    total = int(np.prod(dims))
    where = [order.index(c) for c in canonical]
    for start in range(0, total, chunk):
        flat = np.arange(start, min(start + chunk, total), dtype=np.int64)
        idx = np.unravel_index(flat, dims)
        yield tuple(idx[k] for k in where)
