"""PyTorch's results for a convcore.mistakes Case, in a convention's layout (the
independent oracle of the catalogue and grader tests)."""

from __future__ import annotations

import numpy as np
from layer_oracle import torch_grads, torch_pad
from oracle import require_torch, torch_layer

from convcore.compare import values_equal
from convcore.mistakes import Case, Failure, get_convention
from convcore.mistakes.layer_cases import Conv1dCase, TransposedCase

__all__ = ["differs", "torch_expected"]


def _other_layer(case) -> dict[str, np.ndarray]:
    """out, dx, dw, db of a TransposedCase by ``F.conv_transpose2d`` or of a Conv1dCase by
    ``F.conv1d`` (a causal one after ``F.pad`` on the left), torch's autograd."""
    functional = require_torch().nn.functional
    x, w, b, dout = case.arrays
    if isinstance(case, TransposedCase):
        kw = case.keywords()
        layer = lambda xt, wt, bt: functional.conv_transpose2d(xt, wt, bt, **kw)  # noqa: E731
    else:
        left, right = case.spec.padding[2:]
        kw = {"stride": case.stride, "dilation": case.dilation, "groups": case.groups}
        layer = lambda xt, wt, bt: functional.conv1d(torch_pad(xt, (left, right), "zeros"), wt, bt, **kw)  # noqa: E731
    out, dx, dw, db = torch_grads(layer, x, w, b, dout)
    return {"out": out, "dx": dx, "dw": dw, "db": db}


def torch_expected(convention: str, case: Case) -> dict[str, np.ndarray]:
    """out, dx, dw, db of ``case`` by torch's conv2d and autograd (float64), with the
    case's activation, in ``convention``'s layout (NHWC / HWIO / (1, F) for the layer);
    by conv_transpose2d (conv1d) for a torch-transposed (torch-conv1d) case."""
    if isinstance(case, (TransposedCase, Conv1dCase)):
        return _other_layer(case)
    x, w, b, dout = case.arrays
    t = torch_layer(
        x,
        w,
        b,
        dout,
        stride=case.stride,
        padding=case.padding,
        dilation=case.dilation,
        groups=case.groups,
        activation=case.activation,
    )
    result = {"out": t.out, "dx": t.dx, "dw": t.dw, "db": t.db}
    if get_convention(convention).layout == "NHWC":
        result = {
            "out": result["out"].transpose(0, 2, 3, 1),
            "dx": result["dx"].transpose(0, 2, 3, 1),
            "dw": result["dw"].transpose(2, 3, 1, 0),
            "db": result["db"].reshape(1, -1),
        }
    return result


def differs(expected: np.ndarray, outcome) -> bool:
    """Whether an outcome (array or Failure) is not the expected array."""
    if isinstance(outcome, Failure) or outcome.shape != expected.shape:
        return True
    return not bool(np.all(values_equal(expected, outcome)))
