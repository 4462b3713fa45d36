"""PyTorch as the independent oracle, shared by the test modules.

``torch_layer(x, w, b, dout, stride=…, padding=…, activation=…)`` is the one torch
oracle (as tinygrad's ``helper_test_op``): conv2d with its activation, forward and
every gradient in one call; each test that compares with torch uses it.
``require_torch()`` returns the torch module. Without torch a test skips with a reason,
except under CI (``CI=true``), where a missing oracle is a failure, not a silent skip.
Import them as ``from oracle import torch_layer`` (pytest puts tests/ on sys.path).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

__all__ = ["TORCH_ACTIVATIONS", "TorchLayer", "geometry", "require_torch", "torch_layer"]


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


# PyTorch's activation for each of ConvScope's names (leaky ReLU: torch's default slope 0.01)
TORCH_ACTIVATIONS: dict[str, Callable[[Any, Any], Any]] = {
    "identity": lambda torch, z: z * 1.0,
    "relu": lambda torch, z: torch.relu(z),
    "leaky_relu": lambda torch, z: torch.nn.functional.leaky_relu(z, 0.01),
    "sigmoid": lambda torch, z: torch.sigmoid(z),
    "tanh": lambda torch, z: torch.tanh(z),
}


@dataclass(frozen=True)
class TorchLayer:
    """What PyTorch computes for one conv layer with its activation, NumPy float64.

    z, out : (N, F, Ho, Wo) pre-activation and output; dz : (N, F, Ho, Wo) the
    gradient at z; dx : (N, C, H, W); dw : (F, C/groups, KH, KW); db : (F,) (the
    gradient a bias gets, also when the layer has none)
    """

    z: np.ndarray
    out: np.ndarray
    dz: np.ndarray
    dx: np.ndarray
    dw: np.ndarray
    db: np.ndarray

    def results(self, bias: bool = True) -> dict[str, np.ndarray]:
        """{z, out, dz, dx, dw (, db with a bias)}: the trace's result tensors by name."""
        names = ("z", "out", "dz", "dx", "dw", "db") if bias else ("z", "out", "dz", "dx", "dw")
        return {name: getattr(self, name) for name in names}


def geometry(spec: Any) -> dict[str, Any]:
    """``torch_layer``'s geometry keywords from a ConvSpec (padding as four sides)."""
    return {"stride": spec.stride, "padding": spec.padding, "dilation": spec.dilation, "groups": spec.groups}


def torch_layer(
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | None = None,
    dout: np.ndarray | None = None,
    *,
    stride: int | Sequence[int] = 1,
    padding: int | Sequence[int] | str = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
    activation: str = "identity",
) -> TorchLayer:
    """The one torch oracle: conv2d then ``activation``, forward and autograd backward
    with the upstream gradient ``dout``, float64, NumPy in and out.

    Parameters
    ----------
    x : (N, C, H, W)
    w : (F, C/groups, KH, KW)
    b : (F,) or None (no bias; db is then the gradient a zero bias gets)
    dout : (N, F, Ho, Wo); None means ones
    stride, dilation : int or (h, w)
    padding : int or (top, bottom, left, right), zeros applied with F.pad; or "same",
        torch's own (stride 1 only)
    groups : int
    activation : one of ``TORCH_ACTIVATIONS``
    """
    torch = require_torch()
    functional = torch.nn.functional
    same = isinstance(padding, str) and padding == "same"
    top, bottom, left, right = (
        (0,) * 4 if same else ((int(padding),) * 4 if np.ndim(padding) == 0 else tuple(int(p) for p in padding))
    )
    xt = torch.tensor(np.asarray(x, dtype=np.float64), requires_grad=True)
    wt = torch.tensor(np.asarray(w, dtype=np.float64), requires_grad=True)
    bt = torch.tensor(np.zeros(wt.shape[0]) if b is None else np.asarray(b, dtype=np.float64), requires_grad=True)
    z = functional.conv2d(
        functional.pad(xt, (left, right, top, bottom)),
        wt,
        bt,
        stride=_pair(stride),
        padding="same" if same else 0,
        dilation=_pair(dilation),
        groups=groups,
    )
    z.retain_grad()
    out = TORCH_ACTIVATIONS[activation](torch, z)
    out.backward(torch.ones_like(out) if dout is None else torch.tensor(np.asarray(dout, dtype=np.float64)))
    return TorchLayer(*(t.detach().numpy().copy() for t in (z, out, z.grad, xt.grad, wt.grad, bt.grad)))
