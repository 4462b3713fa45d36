"""PyTorch's results for a convcore.mistakes Case, in a convention's layout (the
independent oracle of the catalogue and grader tests)."""

from __future__ import annotations

import numpy as np

from oracle import require_torch

from convcore.mistakes import Case, Failure, get_convention
from convcore.compare import values_equal

__all__ = ["differs", "torch_expected"]


def torch_expected(convention: str, case: Case) -> dict[str, np.ndarray]:
    """out, dx, dw, db of ``case`` by torch's conv2d and autograd (float64), with the
    case's activation, in ``convention``'s layout (NHWC / HWIO / (1, F) for the layer)."""
    torch = require_torch()
    functional = torch.nn.functional
    x, w, b, dout = case.arrays
    xt, wt, bt = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    top, bottom, left, right = case.padding
    z = functional.conv2d(functional.pad(xt, (left, right, top, bottom)), wt, bt, stride=case.stride,
                          dilation=case.dilation, groups=case.groups)
    out = {"identity": lambda t: t, "relu": torch.relu, "tanh": torch.tanh}[case.activation](z)
    out.backward(torch.tensor(dout))
    result = {"out": out.detach().numpy(), "dx": xt.grad.numpy(), "dw": wt.grad.numpy(), "db": bt.grad.numpy()}
    if get_convention(convention).layout == "NHWC":
        result = {"out": result["out"].transpose(0, 2, 3, 1), "dx": result["dx"].transpose(0, 2, 3, 1),
                  "dw": result["dw"].transpose(2, 3, 1, 0), "db": result["db"].reshape(1, -1)}
    return result


def differs(expected: np.ndarray, outcome) -> bool:
    """Whether an outcome (array or Failure) is not the expected array."""
    if isinstance(outcome, Failure) or outcome.shape != expected.shape:
        return True
    return not bool(np.all(values_equal(expected, outcome)))
