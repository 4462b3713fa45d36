"""PyTorch's results for a convcore.mistakes Case, in a convention's layout (the
independent oracle of the catalogue and grader tests)."""

from __future__ import annotations

import numpy as np
from oracle import torch_layer

from convcore.compare import values_equal
from convcore.mistakes import Case, Failure, get_convention

__all__ = ["differs", "torch_expected"]


def torch_expected(convention: str, case: Case) -> dict[str, np.ndarray]:
    """out, dx, dw, db of ``case`` by torch's conv2d and autograd (float64), with the
    case's activation, in ``convention``'s layout (NHWC / HWIO / (1, F) for the layer)."""
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
