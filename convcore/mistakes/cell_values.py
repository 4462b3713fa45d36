"""What each catalogued mistake's code leaves in one cell of a setup's out, dx, dw or db,
where the true code leaves another number: a class's wrong answer named by the mistake
that gives it (predict, then reveal: everyone who forgot the bias).

```python
from convcore.mistakes.cell_values import mistaken_cell_values
mistaken_cell_values(config, "out", (0, 1, 0, 0))   # [{"id", "title", "value"}, ...]
```

A mistake counts when its code can take the setup (the lab's own check, on the setup's
geometry and numbers: the view and granularity play no part), returns the tensor in the
true shape, and leaves in the cell a number the trace's precision tells apart from the
true one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..trace.axes import kind_of
from ..trace.config import TraceConfigError, resolve_config
from ..trace.questions import accepted
from .case import Case
from .catalogue import lab_mistakes
from .conventions import Failure, get_convention
from .lab_config import check_lab_config

__all__ = ["OUTPUT_TENSORS", "mistaken_cell_values"]

OUTPUT_TENSORS = ("out", "dx", "dw", "db")
# what a setup says of how it is shown, not of what it computes (the lab's defaults apply)
SHOWN_ONLY = ("view", "granularity", "backward", "phases", "copies", "loop_order", "compare", "mistake")


def _nchw_index(tensor: str, index: Sequence[int], layout: str) -> tuple[int, ...]:
    """``index`` of ``tensor`` in ``layout`` (the trace's axes) as an index of its NCHW /
    OIHW array."""
    perm = kind_of(tensor).perm(layout)
    if not perm:
        return tuple(index)
    out = [0] * len(index)
    for k, axis in enumerate(perm):
        out[axis] = index[k]
    return tuple(out)


def _as_nchw(tensor: str, arr: np.ndarray, layout: str) -> np.ndarray:
    """A convention's array of ``tensor`` in ``layout`` as its NCHW / OIHW array."""
    perm = kind_of(tensor).perm(layout)
    return arr.transpose(np.argsort(perm)) if perm else arr


def mistaken_cell_values(config: Mapping[str, Any], tensor: str, index: Sequence[int]) -> list[dict[str, Any]]:
    """Each catalogued mistake that leaves another number in ``tensor[index]`` (one of
    OUTPUT_TENSORS, ``index`` in the config's layout) than the true code: its id, title
    and that number, in the catalogue's order. [] for another tensor."""
    if tensor not in OUTPUT_TENSORS:
        return []
    rc = resolve_config({k: v for k, v in config.items() if k not in SHOWN_ONLY})
    if rc.layer != "conv2d":
        return []  # (the lab's mistakes are Conv2d's code)
    b = rc.b if rc.b is not None else np.zeros(rc.spec.F)
    case = Case.with_inputs(rc.spec, rc.activation.name, rc.x, rc.w, b, rc.dout)
    at = _nchw_index(tensor, index, rc.layout)
    truths: dict[str, float] = {}
    found = []
    for mistake in lab_mistakes():  # (the Conv2d mistakes: this is a Conv2d's cell)
        try:
            check_lab_config(rc, mistake)
        except TraceConfigError:
            continue  # (its code cannot take this setup)
        convention = get_convention(mistake.convention)
        if mistake.convention not in truths:
            truths[mistake.convention] = float(
                _as_nchw(tensor, convention.expected(case)[tensor], convention.layout)[at]
            )
        got = mistake.results(case)[tensor]
        if isinstance(got, Failure):
            continue
        got = _as_nchw(tensor, np.asarray(got), convention.layout)
        true_shape = _as_nchw(tensor, convention.expected(case)[tensor], convention.layout).shape
        if got.shape != true_shape or not np.isfinite(got[at]):
            continue
        low, high = accepted(truths[mistake.convention])
        if not low <= float(got[at]) <= high:
            found.append({"id": mistake.id, "title": mistake.title, "value": float(got[at])})
    return found
