"""PyTorch as the independent oracle, shared by the test modules.

``require_torch()`` returns the torch module. Without torch a test skips with a reason,
except under CI (``CI=true``), where a missing oracle is a failure, not a silent skip.
Import it as ``from oracle import require_torch, torch_conv`` (pytest puts tests/ on
sys.path).
"""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np
import pytest

__all__ = ["require_torch", "torch_conv"]


def require_torch():
    """The torch module; skips the calling test (fails it when CI=true) without torch."""
    try:
        import torch
    except ImportError as exc:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"torch is required for the oracle tests under CI=true: {exc}", pytrace=False)
        pytest.skip(f"torch is not installed, oracle test skipped ({exc})", allow_module_level=True)
    return torch


def _pair(value: int | Sequence[int]) -> tuple[int, int]:
    return (int(value), int(value)) if np.ndim(value) == 0 else tuple(int(v) for v in value)  # type: ignore[return-value]


def torch_conv(
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | None,
    dout: np.ndarray | None,
    stride: int | Sequence[int] = 1,
    padding4: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """PyTorch's conv2d forward and autograd backward, float64, NumPy in and out.

    Parameters
    ----------
    x : (N, C, H, W)
    w : (F, C/groups, KH, KW)
    b : (F,) or None (then db is the gradient of a zero bias)
    dout : (N, F, Ho, Wo), the upstream gradient; None means ones
    stride, dilation : int or (h, w)
    padding4 : int or (top, bottom, left, right), applied with F.pad (zeros)
    groups : int

    Returns
    -------
    out : (N, F, Ho, Wo), dx : (N, C, H, W), dw : (F, C/groups, KH, KW), db : (F,)
    """
    torch = require_torch()
    functional = torch.nn.functional
    pads = (int(padding4),) * 4 if np.ndim(padding4) == 0 else tuple(int(p) for p in padding4)
    top, bottom, left, right = pads
    xt = torch.tensor(np.asarray(x, dtype=np.float64), requires_grad=True)
    wt = torch.tensor(np.asarray(w, dtype=np.float64), requires_grad=True)
    bias = np.zeros(wt.shape[0]) if b is None else np.asarray(b, dtype=np.float64)
    bt = torch.tensor(bias, requires_grad=True)
    xp = functional.pad(xt, (left, right, top, bottom))
    out = functional.conv2d(
        xp, wt, bt, stride=_pair(stride), padding=0, dilation=_pair(dilation), groups=groups
    )
    upstream = torch.ones_like(out) if dout is None else torch.tensor(np.asarray(dout, dtype=np.float64))
    out.backward(upstream)
    return (
        out.detach().numpy().copy(),
        xt.grad.numpy().copy(),
        wt.grad.numpy().copy(),
        bt.grad.numpy().copy(),
    )
