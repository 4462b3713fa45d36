"""PyTorch as the oracle for the layers beside Conv2d: ConvTranspose2d, Conv1d, the
padding modes and the flipped kernel.

``torch_grads(layer, x, w, b, dout)`` runs ``layer(xt, wt, bt)`` (a function of torch
tensors, written with ``torch.nn.functional``) forward and through autograd with the
upstream gradient ``dout``, float64, and returns ``(out, dx, dw, db)`` as NumPy arrays
(as tinygrad's ``helper_test_op``: each test names its torch expression in one line).
The upstream gradient is random in every test: an all-ones ``dout`` hides a flipped or
transposed gradient.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from hypothesis import HealthCheck, settings
from oracle import require_torch
from strategies import examples

__all__ = [
    "PROPERTY",
    "assert_all_close",
    "fitting_mode",
    "torch_conv2d",
    "torch_grads",
    "torch_module_grads",
    "torch_pad",
]

RTOL, ATOL = 1e-10, 1e-12

# the settings of every property test here: 300 specs (a quarter under make check's
# "dev" profile), no deadline (a torch call's first run is slow), filtering allowed
PROPERTY = settings(
    max_examples=examples(300),
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)


def assert_all_close(ours: Sequence[np.ndarray], theirs: Sequence[np.ndarray]) -> None:
    """``(out, dx, dw, db)`` against torch's: the same shapes, relative error ≤ 1e-10."""
    for name, a, e in zip(("out", "dx", "dw", "db"), ours, theirs):
        assert a.shape == e.shape, f"{name}: shape {a.shape}, torch's {e.shape}"
        np.testing.assert_allclose(a, e, rtol=RTOL, atol=ATOL, err_msg=name)


def _torch():
    """torch, on one thread: on the teaching shapes a second intra-op thread only waits
    (a conv with its backward took 10 ms on two busy cores, 0.13 ms on one)."""
    torch = require_torch()
    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)
    return torch


def torch_pad(xt: Any, sides: Sequence[int], padding_mode: str) -> Any:
    """``F.pad`` with ``sides`` as F.pad orders them (last axis first: left, right, top,
    bottom) and ConvScope's mode name (``"zeros"`` is F.pad's ``"constant"``)."""
    functional = _torch().nn.functional
    return functional.pad(xt, tuple(sides), mode="constant" if padding_mode == "zeros" else padding_mode)


def fitting_mode(spec: Any, padding_mode: str) -> bool:
    """Whether PyTorch's ``F.pad`` takes ``spec``'s padding in ``padding_mode`` (reflect
    padding smaller than the input, circular at most its size): a property test assumes it."""
    from convcore import ConvSpecError
    from convcore.padding_modes import check_mode_fits

    try:
        check_mode_fits(padding_mode, spec.padding, (spec.H, spec.W))
    except ConvSpecError:
        return False
    return True


def torch_conv2d(spec: Any, padding_mode: str = "zeros", flip: bool = False) -> Callable[[Any, Any, Any], Any]:
    """The layer ``(xt, wt, bt) -> out`` of a ConvSpec with ``padding_mode`` and ``flip``
    as PyTorch computes it: ``F.conv2d`` of ``F.pad(x, padding, mode)`` and, with flip, of
    ``torch.flip(w, (2, 3))``, for ``torch_grads``."""
    torch = _torch()
    top, bottom, left, right = spec.padding

    def layer(xt, wt, bt):
        kernel = torch.flip(wt, (2, 3)) if flip else wt
        padded = torch_pad(xt, (left, right, top, bottom), padding_mode)
        return torch.nn.functional.conv2d(padded, kernel, bt, spec.stride, 0, spec.dilation, spec.groups)

    return layer


def torch_grads(
    layer: Callable[[Any, Any, Any], Any],
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | None,
    dout: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(out, dx, dw, db)`` of ``layer(xt, wt, bt)`` with the upstream gradient ``dout``.

    ``b`` None calls the layer without a bias; ``db`` is then the gradient a bias would
    get, ``dout`` summed over every axis but the channels'. ``x``, ``w`` and ``dout`` are
    any shapes the layer takes.
    """
    torch = _torch()
    xt = torch.tensor(np.asarray(x, dtype=np.float64), requires_grad=True)
    wt = torch.tensor(np.asarray(w, dtype=np.float64), requires_grad=True)
    bt = None if b is None else torch.tensor(np.asarray(b, dtype=np.float64), requires_grad=True)
    out = layer(xt, wt, bt)
    out.backward(torch.tensor(np.asarray(dout, dtype=np.float64)))
    db = dout.sum(axis=tuple(a for a in range(dout.ndim) if a != 1)) if bt is None else bt.grad.numpy().copy()
    return out.detach().numpy().copy(), xt.grad.numpy().copy(), wt.grad.numpy().copy(), db


def torch_module_grads(
    module: Any, x: np.ndarray, w: np.ndarray, b: np.ndarray, dout: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``torch_grads`` of a torch module (``nn.Conv2d``, ``nn.Conv1d``) with ``w`` and
    ``b`` as its weight and bias: what the module itself does, its padding included."""
    torch = _torch()
    return torch_grads(
        lambda xt, wt, bt: torch.func.functional_call(module, {"weight": wt, "bias": bt}, (xt,)), x, w, b, dout
    )
