"""1-D convolution (PyTorch's ``Conv1d``), forward and backward, NCL.

``x: (N, C, L)``, ``w: (F, C/groups, K)``, ``b: (F,)``. The arguments are resolved and
refused here in a sequence's words (L, K, left, right); the numbers are a Conv2d's on a
one-row image, ``(N, C, 1, L)`` with ``(F, C/groups, 1, K)``, through
``convcore.functional`` (one source of truth for the arithmetic).

``padding="causal"`` pads ``dilation·(K − 1)`` on the left only, so that output ``t``
reads inputs ``≤ t`` (a causal filter, WaveNet's convolution) and, at stride 1, the
output is as long as the input. PyTorch has no such string: its equivalent is
``F.conv1d(F.pad(x, (dilation·(K − 1), 0)), w, b, stride, 0, dilation, groups)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .functional import _input, backward_with_mode, bias_input, check_flip, forward_with_mode
from .messages import shorten
from .padding_modes import check_mode_fits, check_padding_mode
from .spec import ConvSpec, ConvSpecError, _same_padding
from .values import is_int

__all__ = ["Conv1dPaddingArg", "conv1d_backward", "conv1d_forward", "conv1d_spec"]

Conv1dPaddingArg = int | str | Sequence[int]

_PADDING_FORMS = "an int, (left, right), 'valid', 'same' or 'causal'"


def _single(value: Any, name: str) -> int:
    """An int, or a sequence of one int (PyTorch's ``(s,)``), as an int."""
    if isinstance(value, (list, tuple)) and len(value) == 1:
        value = value[0]
    if not is_int(value):
        raise ConvSpecError(f"{name} of conv1d must be an int (or a 1-tuple), got {shorten(value)}", name)
    return int(value)


def _left_right(padding: Conv1dPaddingArg, length: int, stride: int, extent: int) -> tuple[int, int]:
    """``padding`` as (left, right) padding of a sequence of ``length`` read with a
    kernel spanning ``extent`` cells."""
    if isinstance(padding, str):
        mode = padding.lower()
        if mode == "valid":
            return (0, 0)
        if mode == "same":
            return _same_padding(length, stride, extent)
        if mode == "causal":
            return (extent - 1, 0)
    elif is_int(padding):
        return (int(padding), int(padding))
    elif isinstance(padding, (list, tuple)) and len(padding) in (1, 2) and all(is_int(p) for p in padding):
        return (int(padding[0]), int(padding[-1]))
    raise ConvSpecError(f"padding of conv1d must be {_PADDING_FORMS}, got {shorten(padding)}", "padding")


def _shape3(shape: Sequence[int], name: str, axes: str) -> tuple[int, int, int]:
    if len(shape) != 3:
        raise ConvSpecError(f"{name} must have 3 dimensions {axes}, got {len(shape)}: shape {tuple(shape)}", name)
    if min(shape) < 1:
        raise ConvSpecError(f"{name} dimensions must all be at least 1, got shape {tuple(shape)}", name)
    return tuple(shape)  # type: ignore[return-value]


def conv1d_spec(
    x_shape: Sequence[int],
    w_shape: Sequence[int],
    stride: int | Sequence[int] = 1,
    padding: Conv1dPaddingArg = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
) -> ConvSpec:
    """The ConvSpec of a Conv1d as a one-row Conv2d: x ``(N, C, 1, L)``, w
    ``(F, C/groups, 1, K)``, padding ``(0, 0, left, right)``, stride ``(1, s)``,
    dilation ``(1, d)``. Refuses bad arguments in 1-D words (ConvSpecError)."""
    n, c, length = _shape3(x_shape, "x", "(N, C, L)")
    f, cg, k = _shape3(w_shape, "w", "(F, C/groups, K)")
    s, d = _single(stride, "stride"), _single(dilation, "dilation")
    if s < 1:
        raise ConvSpecError(f"stride must be at least 1, got {shorten(s)}", "stride")
    if d < 1:
        raise ConvSpecError(f"dilation must be at least 1 (1 means none), got {shorten(d)}", "dilation")
    extent = d * (k - 1) + 1
    left, right = _left_right(padding, length, s, extent)
    if min(left, right) < 0:
        raise ConvSpecError(f"padding must not be negative, got {shorten(min(left, right))}", "padding")
    if extent > length + left + right:
        how = f" with dilation {d}" if d > 1 else ""
        raise ConvSpecError(
            f"kernel spans {extent} cells{how} (kernel {k}), padded input has {length + left + right} "
            f"(L plus padding): output length would be less than 1",
            "w",
        )
    return ConvSpec.create((n, c, 1, length), (f, cg, 1, k), (1, s), (0, 0, left, right), (1, d), groups)


def _prepare(x: object, w: object, args: tuple, padding_mode: object, flip: object):
    mode, flipped = check_padding_mode(padding_mode), check_flip(flip)
    xa, wa = _input(x, "x"), _input(w, "w")  # their rank checked by conv1d_spec, in (N, C, L) words
    spec = conv1d_spec(xa.shape, wa.shape, *args)
    if mode != "zeros":
        check_mode_fits(mode, spec.padding, (spec.H, spec.W), ("H", "L"))
    return xa[:, :, None, :], wa[:, :, None, :], spec, mode, flipped


def conv1d_forward(
    x: object,
    w: object,
    b: object | None = None,
    stride: int | Sequence[int] = 1,
    padding: Conv1dPaddingArg = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
    padding_mode: str = "zeros",
    flip: bool = False,
) -> np.ndarray:
    """Forward pass of a 1-D convolution, as ``torch.nn.functional.conv1d`` (with
    ``torch.nn.Conv1d``'s padding_mode).

    Parameters
    ----------
    x : (N, C, L)
    w : (F, C/groups, K)
    b : (F,) or None
    stride, dilation : int (or a 1-tuple)
    padding : int, (left, right), "valid", "same" (TensorFlow's: output ceil(L/stride),
        the odd cell on the right) or "causal" (dilation·(K−1) on the left only)
    groups : int dividing C and F
    padding_mode : "zeros", "reflect", "replicate" or "circular"
    flip : True for a true convolution (kernel reversed), False for cross-correlation

    Returns
    -------
    out : (N, F, L_out), L_out = (L + left + right − dilation·(K−1) − 1) // stride + 1
    """
    x4, w4, spec, mode, flipped = _prepare(x, w, (stride, padding, dilation, groups), padding_mode, flip)
    return forward_with_mode(spec, x4, w4, bias_input(b, spec, spec.F), mode, flipped)[:, :, 0, :]


def conv1d_backward(
    dout: object,
    x: object,
    w: object,
    b: object | None = None,
    stride: int | Sequence[int] = 1,
    padding: Conv1dPaddingArg = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
    padding_mode: str = "zeros",
    flip: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Backward pass of a 1-D convolution.

    Parameters
    ----------
    dout : (N, F, L_out), the gradient of the loss with respect to the output
    x : (N, C, L)
    w : (F, C/groups, K)
    b : (F,) or None; only its shape is checked (no gradient depends on it)
    stride, padding, dilation, groups, padding_mode, flip : as in ``conv1d_forward``

    Returns
    -------
    dx : (N, C, L); dw : (F, C/groups, K); db : (F,) (whether or not there is a bias)
    """
    x4, w4, spec, mode, flipped = _prepare(x, w, (stride, padding, dilation, groups), padding_mode, flip)
    bias_input(b, spec, spec.F)  # (its shape checked: no gradient depends on it)
    dz = _input(dout, "dout")
    spec.check_shape("dout", dz.shape, (spec.N, spec.F, spec.out_hw[1]))
    dx, dw, db = backward_with_mode(spec, dz[:, :, None, :], x4, w4, mode, flipped)
    return dx[:, :, 0, :], dw[:, :, 0, :], db
