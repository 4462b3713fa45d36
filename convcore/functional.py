"""Vectorised 2-D convolution, forward and backward: ConvScope's numerical truth.

Cross-correlation as every framework computes it (no kernel flip). NCHW input, OIHW
weights, float64. No Python loop runs over output positions: windows are strided views
of the padded input and the sums are batched matrix products; the only Python loop is
over the KH·KW kernel offsets when gradients are scattered back into the padded input.

Two levels:
- ``conv2d_forward`` / ``conv2d_backward`` take PyTorch's keyword arguments and
  validate everything, for callers outside convcore; with ``padding_mode`` (as
  ``torch.nn.Conv2d``'s: convcore.padding_modes) and ``flip`` (a true convolution, the
  kernel rotated 180°) besides;
- ``pad_input``, ``forward_padded``, ``backward_padded`` and ``crop_padding`` take a
  resolved ``ConvSpec`` and trust their inputs, for the trace engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .messages import shorten
from .padding_modes import check_mode_fits, check_padding_mode, fold_padding, pad_with_mode
from .spec import ConvSpec, ConvSpecError, PaddingArg
from .tensor_input import to_array

__all__ = [
    "as_float_array",
    "backward_padded",
    "backward_with_mode",
    "bias_input",
    "check_flip",
    "conv2d_backward",
    "conv2d_forward",
    "crop_padding",
    "forward_padded",
    "forward_with_mode",
    "pad_input",
    "rotate_kernel",
    "windows",
]


def as_float_array(value: object, name: str, ndim: int | None = None) -> np.ndarray:
    """``value`` as a float64 array, checked for dimensions and finiteness.

    Delegates to ``convcore.tensor_input.to_array`` (nested lists, arrays or fill specs).
    Raises ConvSpecError naming ``name`` for ragged, non-numeric or non-finite input.
    """
    return to_array(value, name, ndim)


def _input(value: object, name: str, ndim: int | None = None) -> np.ndarray:
    """An argument of conv2d_forward or conv2d_backward, which only read their inputs: a
    finite float64 array of the right rank is used as it is (no copy, no walk: at the
    teaching shapes that check was a quarter of a call); anything else goes through
    ``as_float_array``, which converts it and names what is wrong."""
    if (
        type(value) is np.ndarray
        and value.dtype == np.float64
        and (ndim is None or value.ndim == ndim)
        and value.size
        and np.isfinite(value).all()
    ):
        return value
    return as_float_array(value, name, ndim)


def pad_input(spec: ConvSpec, x: np.ndarray) -> np.ndarray:
    """Zero-pad ``x: (N, C, H, W)`` to ``xp: (N, C, H + top + bottom, W + left + right)``."""
    top, bottom, left, right = spec.padding
    xp = np.zeros(spec.padded_shape, dtype=np.float64)
    xp[:, :, top : top + spec.H, left : left + spec.W] = x
    return xp


def crop_padding(spec: ConvSpec, dxp: np.ndarray) -> np.ndarray:
    """The interior of ``dxp: (N, C, Hp, Wp)`` as ``dx: (N, C, H, W)`` (a copy)."""
    top, _, left, _ = spec.padding
    return dxp[:, :, top : top + spec.H, left : left + spec.W].copy()


def windows(spec: ConvSpec, xp: np.ndarray) -> np.ndarray:
    """Every receptive field of ``xp: (N, C, Hp, Wp)`` as a read-only strided view.

    Returns ``(N, G, C/G, Ho, Wo, KH, KW)``: element ``[n, g, c, i, j, k, l]`` is
    ``xp[n, g·C/G + c, i·sh + k·dh, j·sw + l·dw]``.
    """
    n, c, _, _ = xp.shape
    g = spec.groups
    ho, wo = spec.out_hw
    sh, sw = spec.stride
    dh, dw = spec.dilation
    s_n, s_c, s_h, s_w = xp.strides

    def step(length: int, stride_bytes: int) -> int:
        # an axis of length 1 is never stepped along: 0 bytes, so that a stride or
        # dilation of 2^62 (legal when it yields one window or one tap) cannot overflow
        return stride_bytes if length > 1 else 0

    return as_strided(
        xp,
        shape=(n, g, c // g, ho, wo, spec.KH, spec.KW),
        strides=(
            s_n,
            s_c * (c // g),
            s_c,
            step(ho, s_h * sh),
            step(wo, s_w * sw),
            step(spec.KH, s_h * dh),
            step(spec.KW, s_w * dw),
        ),
        writeable=False,
    )


def _columns(spec: ConvSpec, xp: np.ndarray) -> np.ndarray:
    """im2col per group: ``(G, N·Ho·Wo, C/G·KH·KW)``, a contiguous copy."""
    win = windows(spec, xp)  # (N, G, Cg, Ho, Wo, KH, KW)
    g = spec.groups
    return np.ascontiguousarray(win.transpose(1, 0, 3, 4, 2, 5, 6)).reshape(g, -1, spec.macs_per_output)


def _grouped_weights(spec: ConvSpec, w: np.ndarray) -> np.ndarray:
    """``w: (F, C/G, KH, KW)`` as ``(G, F/G, C/G·KH·KW)`` (a view)."""
    return w.reshape(spec.groups, spec.filters_per_group, spec.macs_per_output)


# Below this many im2col elements (C·KH·KW · N·Ho·Wo) the per-tap loop's Python costs
# more than its better memory reads save: the teaching shapes (the trace engine's, whose
# documents are snapshotted byte for byte) keep the one strided gather of every window.
# bench/core.py measures both sides of it.
TAP_MAJOR_MIN = 1 << 14


def _by_tap(spec: ConvSpec) -> bool:
    return spec.groups == 1 and spec.macs_per_output * spec.N * spec.out_hw[0] * spec.out_hw[1] >= TAP_MAJOR_MIN


def _tap_columns(spec: ConvSpec, xp: np.ndarray) -> np.ndarray:
    """im2col by kernel tap, for one group: ``(C·KH·KW, N·Ho·Wo)``, row ``(c, k, l)``
    holding ``xp[n, c, i·sh + k·dh, j·sw + l·dw]`` at column ``(n, i, j)``. Built with
    one strided copy per tap (runs along Wo), which reads memory far better than
    gathering each window's KW cells."""
    n, c = spec.N, spec.C
    ho, wo = spec.out_hw
    cols = np.empty((c, spec.KH, spec.KW, n, ho, wo), dtype=np.float64)
    for k, l, rows, columns in spec.tap_slices:
        cols[:, k, l] = xp[:, :, rows, columns].transpose(1, 0, 2, 3)
    return cols.reshape(c * spec.KH * spec.KW, n * ho * wo)


def forward_padded(spec: ConvSpec, xp: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """``z: (N, F, Ho, Wo)`` from ``xp: (N, C, Hp, Wp)``, ``w: (F, C/G, KH, KW)``, ``b: (F,)``."""
    n, ho, wo = spec.N, *spec.out_hw
    if _by_tap(spec):  # one matrix product: (F, C·KH·KW) @ (C·KH·KW, N·Ho·Wo)
        z = (w.reshape(spec.F, -1) @ _tap_columns(spec, xp)).reshape(spec.F, n, ho, wo)
        if b is not None:
            z += b.reshape(-1, 1, 1, 1)
        return np.ascontiguousarray(z.transpose(1, 0, 2, 3))
    cols = _columns(spec, xp)  # (G, N·Ho·Wo, K)
    z = np.matmul(cols, _grouped_weights(spec, w).transpose(0, 2, 1))  # (G, NHoWo, Fg)
    z = z.reshape(spec.groups, n, ho, wo, spec.filters_per_group)
    z = z.transpose(1, 0, 4, 2, 3).reshape(n, spec.F, ho, wo)
    if b is not None:
        z = z + b.reshape(1, -1, 1, 1)
    return np.ascontiguousarray(z)


def backward_padded(
    spec: ConvSpec, dz: np.ndarray, xp: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients from ``dz: (N, F, Ho, Wo)``, the upstream gradient of the conv's output.

    Returns ``dxp: (N, C, Hp, Wp)`` (the padded input's gradient, zero on rows and
    columns no window reaches), ``dw: (F, C/G, KH, KW)`` and ``db: (F,)``.
    """
    g, fg, cg = spec.groups, spec.filters_per_group, spec.channels_per_group
    n, ho, wo = spec.N, *spec.out_hw
    kh, kw = spec.KH, spec.KW
    db = dz.sum(axis=(0, 2, 3))
    if _by_tap(spec):
        dz_f = dz.transpose(1, 0, 2, 3).reshape(spec.F, -1)  # (F, N·Ho·Wo)
        dw = (dz_f @ _tap_columns(spec, xp).T).reshape(spec.w_shape)
        taps = (w.reshape(spec.F, -1).T @ dz_f).reshape(spec.C, kh, kw, n, ho, wo)  # dz through each tap
        dxp = np.zeros(spec.padded_shape, dtype=np.float64)
        for k, l, rows, columns in spec.tap_slices:
            dxp[:, :, rows, columns] += taps[:, k, l].transpose(1, 0, 2, 3)
        return dxp, dw, db
    # dz per group as (G, N·Ho·Wo, Fg)
    dz_g = dz.reshape(n, g, fg, ho, wo).transpose(1, 0, 3, 4, 2).reshape(g, -1, fg)
    cols = _columns(spec, xp)  # (G, NHoWo, K)
    dw = np.matmul(dz_g.transpose(0, 2, 1), cols).reshape(spec.w_shape)
    dcols = np.matmul(dz_g, _grouped_weights(spec, w))  # (G, NHoWo, Cg·KH·KW)
    # (G, N, Ho, Wo, Cg, KH, KW) -> (KH, KW, N, G, Cg, Ho, Wo) = per offset an NCHW block
    dcols = dcols.reshape(g, n, ho, wo, cg, kh, kw).transpose(5, 6, 1, 0, 4, 2, 3)
    dcols = dcols.reshape(kh, kw, n, spec.C, ho, wo)
    dxp = np.zeros(spec.padded_shape, dtype=np.float64)
    for k, l, rows, columns in spec.tap_slices:
        dxp[:, :, rows, columns] += dcols[k, l]
    return dxp, dw, db


def _typed(value: object) -> object:
    """A hashable key of an argument that keeps its types (True is not 1, [2] not (2,)),
    so that a cached spec is only ever one ConvSpec.create would have made the same."""
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_typed(v) for v in value))
    hash(value)  # (TypeError for what cannot be a key: then nothing is cached)
    return (type(value).__name__, value)


@lru_cache(maxsize=512)
def _cached_spec(key: tuple, x_shape: tuple, w_shape: tuple, stride, padding, dilation, groups) -> ConvSpec:
    return ConvSpec.create(x_shape, w_shape, stride, padding, dilation, groups)


def _spec_for(
    x: np.ndarray,
    w: np.ndarray,
    stride: int | Sequence[int],
    padding: PaddingArg,
    dilation: int | Sequence[int],
    groups: int,
) -> ConvSpec:
    """The validated spec, from a cache for arguments seen before (validation is most of
    a teaching-shape call's cost); a refused one raises every time, as it is not kept."""
    try:
        key = (x.shape, w.shape, _typed(stride), _typed(padding), _typed(dilation), _typed(groups))
    except TypeError:
        return ConvSpec.create(x.shape, w.shape, stride, padding, dilation, groups)
    return _cached_spec(key, x.shape, w.shape, _frozen(stride), _frozen(padding), _frozen(dilation), groups)


def _frozen(value: object) -> object:
    return tuple(_frozen(v) for v in value) if isinstance(value, (list, tuple)) else value


def check_flip(flip: object) -> bool:
    """``flip`` if it is a bool (Python's or NumPy's); ConvSpecError naming it otherwise."""
    if isinstance(flip, (bool, np.bool_)):
        return bool(flip)
    raise ConvSpecError(f"flip must be True (convolution) or False (cross-correlation), got {shorten(flip)}", "flip")


def rotate_kernel(w: np.ndarray) -> np.ndarray:
    """``w: (..., KH, KW)`` rotated 180° in its last two axes (a view)."""
    return w[..., ::-1, ::-1]


def bias_input(b: object | None, spec: ConvSpec, channels: int) -> np.ndarray | None:
    """``b`` as a ``(channels,)`` float64 array, or None for no bias; ConvSpecError
    naming ``b`` for any other shape (``spec`` says it: a ConvSpec or a TransposeSpec)."""
    if b is None:
        return None
    ba = _input(b, "b")
    spec.check_shape("b", ba.shape, (channels,))
    return ba


def _conv2d_arguments(
    x: object, w: object, stride, padding, dilation, groups, padding_mode: object, flip: object
) -> tuple[np.ndarray, np.ndarray, ConvSpec, str, bool]:
    """``x``, ``w`` as arrays, their ConvSpec, the padding mode and the flip, each checked."""
    mode, flipped = check_padding_mode(padding_mode), check_flip(flip)
    xa = _input(x, "x", 4)
    wa = _input(w, "w", 4)
    spec = _spec_for(xa, wa, stride, padding, dilation, groups)
    if mode != "zeros":
        check_mode_fits(mode, spec.padding, (spec.H, spec.W))
    return xa, wa, spec, mode, flipped


def forward_with_mode(
    spec: ConvSpec, x: np.ndarray, w: np.ndarray, b: np.ndarray | None, padding_mode: str, flip: bool
) -> np.ndarray:
    """``z: (N, F, Ho, Wo)`` from ``x: (N, C, H, W)``, ``w: (F, C/G, KH, KW)``, ``b: (F,)``
    or None: ``x`` padded in ``padding_mode``, ``w`` rotated 180° when ``flip``."""
    xp = pad_input(spec, x) if padding_mode == "zeros" else pad_with_mode(x, spec.padding, padding_mode)
    return forward_padded(spec, xp, rotate_kernel(w) if flip else w, b)


def backward_with_mode(
    spec: ConvSpec, dz: np.ndarray, x: np.ndarray, w: np.ndarray, padding_mode: str, flip: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(dx: (N, C, H, W), dw: (F, C/G, KH, KW), db: (F,))`` from ``dz: (N, F, Ho, Wo)``:
    the padding's gradient folded back onto the cells it copied (dropped for zeros), and
    with ``flip`` the rotated kernel's gradient rotated back onto ``w``."""
    xp = pad_input(spec, x) if padding_mode == "zeros" else pad_with_mode(x, spec.padding, padding_mode)
    dxp, dw, db = backward_padded(spec, dz, xp, rotate_kernel(w) if flip else w)
    dx = crop_padding(spec, dxp) if padding_mode == "zeros" else fold_padding(dxp, spec.padding, padding_mode)
    return dx, (np.ascontiguousarray(rotate_kernel(dw)) if flip else dw), db


def conv2d_forward(
    x: object,
    w: object,
    b: object | None = None,
    stride: int | Sequence[int] = 1,
    padding: PaddingArg = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
    padding_mode: str = "zeros",
    flip: bool = False,
) -> np.ndarray:
    """Forward pass of a 2-D convolution, as ``torch.nn.functional.conv2d``.

    Parameters
    ----------
    x : (N, C, H, W)
    w : (F, C/groups, KH, KW)
    b : (F,) or None
    stride, dilation : int or (h, w)
    padding : int, (h, w), (top, bottom, left, right), "valid" or "same"
    groups : int dividing C and F
    padding_mode : "zeros", "reflect", "replicate" or "circular", as
        ``torch.nn.Conv2d(padding_mode=...)``: ``F.pad(x, padding, mode)`` then no padding
    flip : False (cross-correlation, what PyTorch computes) or True (convolution: the
        kernel rotated 180°, as ``conv2d`` with ``torch.flip(w, (2, 3))``)

    Returns
    -------
    out : (N, F, Ho, Wo)
    """
    xa, wa, spec, mode, flipped = _conv2d_arguments(x, w, stride, padding, dilation, groups, padding_mode, flip)
    return forward_with_mode(spec, xa, wa, bias_input(b, spec, spec.F), mode, flipped)


def conv2d_backward(
    dout: object,
    x: object,
    w: object,
    stride: int | Sequence[int] = 1,
    padding: PaddingArg = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
    padding_mode: str = "zeros",
    flip: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Backward pass of a 2-D convolution.

    Parameters
    ----------
    dout : (N, F, Ho, Wo), the gradient of the loss with respect to the output
    x : (N, C, H, W)
    w : (F, C/groups, KH, KW)
    stride, padding, dilation, groups, padding_mode, flip : as in ``conv2d_forward``

    Returns
    -------
    dx : (N, C, H, W) (with a padding_mode other than zeros, the padding's gradient
        added onto the cells it copied)
    dw : (F, C/groups, KH, KW)
    db : (F,), the bias gradient (whether or not the layer has a bias)
    """
    xa, wa, spec, mode, flipped = _conv2d_arguments(x, w, stride, padding, dilation, groups, padding_mode, flip)
    dz = _input(dout, "dout")
    spec.check_shape("dout", dz.shape, spec.out_shape)
    return backward_with_mode(spec, dz, xa, wa, mode, flipped)
