"""Transposed 2-D convolution (PyTorch's ``ConvTranspose2d``), forward and backward.

The forward is the scatter it is: every input cell ``x[n, c, h, w]`` stamps
``x[n, c, h, w] · w[c]`` onto the output, its tap (k, l) landing on row
``h·stride + k·dilation`` and column ``w·stride + l·dilation`` of the stamped area;
overlapping stamps add up. Then ``output_padding`` rows and columns (no stamp) are added
below and on the right, ``padding`` is cropped from every side, the bias added. No
Python loop runs over input cells: one matrix product makes every stamp, and the only
loop is over the KH·KW kernel taps, adding each tap's stamps with one strided slice.

The backward, from ``dy: (N, C_out, H_out, W_out)``:
- the crop's gradient puts ``dy`` back into the stamped area (``padding`` rows of zeros
  around it; the ``output_padding`` rows got no stamp and send nothing back);
- ``dx`` is a Conv2d of that gradient with the same weight, stride, dilation and groups
  (a cross-correlation: each input cell reads back the cells its stamp covered);
- ``dw[c, o]`` correlates ``x[:, c]`` with the windows of that gradient;
- ``db`` sums ``dy`` over the batch and the positions.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .functional import _input, bias_input, forward_padded, windows
from .spec import ConvSpec
from .transpose_spec import TransposeSpec

__all__ = ["conv_transpose2d_backward", "conv_transpose2d_forward", "dy_on_stamps", "stamps", "stamp_sum"]


def stamps(spec: TransposeSpec, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Every input cell's stamp, per tap: ``(KH, KW, N, C_out, H, W)``, element
    ``[k, l, n, o, h, w]`` = Σ over the input channels c of o's group of
    ``x[n, c, h, w] · w[c, o mod C_out/groups, k, l]``.

    x : (N, C_in, H, W); w : (C_in, C_out/groups, KH, KW)
    """
    n, g, cg, og = spec.N, spec.groups, spec.in_per_group, spec.out_per_group
    h, wd, kh, kw = spec.H, spec.W, spec.KH, spec.KW
    xg = x.reshape(n, g, cg, h * wd).transpose(1, 0, 3, 2).reshape(g, n * h * wd, cg)  # (G, N·H·W, Cg)
    wg = w.reshape(g, cg, og * kh * kw)  # (G, Cg, Og·KH·KW)
    s = np.matmul(xg, wg).reshape(g, n, h, wd, og, kh, kw)
    return s.transpose(5, 6, 1, 0, 4, 2, 3).reshape(kh, kw, n, spec.C_out, h, wd)


def stamp_sum(spec: TransposeSpec, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The stamps added up, before the crop and with the output_padding rows and columns:
    ``(N, C_out, stamped_h + oh, stamped_w + ow)``."""
    (sh, sw), (oh, ow) = spec.stamped_hw, spec.output_padding
    full = np.zeros((spec.N, spec.C_out, sh + oh, sw + ow), dtype=np.float64)
    taps = stamps(spec, x, w)
    for k, l, rows, columns in spec.tap_slices:
        full[:, :, rows, columns] += taps[k, l]
    return full


def dy_on_stamps(spec: TransposeSpec, dy: np.ndarray) -> np.ndarray:
    """The crop's gradient: ``dy: (N, C_out, H_out, W_out)`` placed back on the stamped
    area, ``(N, C_out, stamped_h, stamped_w)``; zero on the cropped padding."""
    (sh, sw), (ph, pw), (oh, ow) = spec.stamped_hw, spec.padding, spec.output_padding
    full = np.zeros((spec.N, spec.C_out, sh + oh, sw + ow), dtype=np.float64)
    full[:, :, ph : ph + spec.out_hw[0], pw : pw + spec.out_hw[1]] = dy
    return full[:, :, :sh, :sw]  # the output_padding rows and columns got no stamp


def _conv_of_dy(spec: TransposeSpec) -> ConvSpec:
    """The Conv2d that maps the stamped area back onto the input: input (N, C_out,
    stamped_h, stamped_w), weight w as (F = C_in, C_out/groups, KH, KW), no padding."""
    return ConvSpec.create(
        (spec.N, spec.C_out, *spec.stamped_hw), spec.w_shape, spec.stride, 0, spec.dilation, spec.groups
    )


def _arrays(x: object, w: object, spec_args: tuple) -> tuple[np.ndarray, np.ndarray, TransposeSpec]:
    xa, wa = _input(x, "x", 4), _input(w, "w", 4)
    return xa, wa, TransposeSpec.create(xa.shape, wa.shape, *spec_args)


def conv_transpose2d_forward(
    x: object,
    w: object,
    b: object | None = None,
    stride: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0,
    output_padding: int | Sequence[int] = 0,
    groups: int = 1,
    dilation: int | Sequence[int] = 1,
) -> np.ndarray:
    """Forward pass of a transposed 2-D convolution, as ``torch.nn.functional.conv_transpose2d``,
    in its positional order (``..., output_padding, groups, dilation``: unlike conv2d's).

    Parameters
    ----------
    x : (N, C_in, H, W)
    w : (C_in, C_out/groups, KH, KW)
    b : (C_out,) or None
    stride, dilation : int or (h, w), each at least 1
    padding : int or (h, w): rows and columns cropped from each side of the stamps
    output_padding : int or (h, w), each smaller than that axis's stride or dilation:
        rows and columns added below and on the right
    groups : int dividing C_in

    Returns
    -------
    y : (N, C_out, H_out, W_out), H_out = (H−1)·stride − 2·padding + dilation·(KH−1)
        + output_padding + 1
    """
    xa, wa, spec = _arrays(x, w, (stride, padding, output_padding, dilation, groups))
    ba = bias_input(b, spec, spec.C_out)
    (ph, pw), (ho, wo) = spec.padding, spec.out_hw
    y = np.ascontiguousarray(stamp_sum(spec, xa, wa)[:, :, ph : ph + ho, pw : pw + wo])
    if ba is not None:
        y += ba.reshape(1, -1, 1, 1)
    return y


def conv_transpose2d_backward(
    dout: object,
    x: object,
    w: object,
    b: object | None = None,
    stride: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0,
    output_padding: int | Sequence[int] = 0,
    groups: int = 1,
    dilation: int | Sequence[int] = 1,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Backward pass of a transposed 2-D convolution.

    Parameters
    ----------
    dout : (N, C_out, H_out, W_out), the gradient of the loss with respect to the output
    x : (N, C_in, H, W)
    w : (C_in, C_out/groups, KH, KW)
    b : (C_out,) or None; only its shape is checked (no gradient depends on it)
    stride, padding, output_padding, dilation, groups : as in ``conv_transpose2d_forward``

    Returns
    -------
    dx : (N, C_in, H, W), a Conv2d of the gradient on the stamps with w
    dw : (C_in, C_out/groups, KH, KW)
    db : (C_out,), the bias gradient (whether or not the layer has a bias)
    """
    xa, wa, spec = _arrays(x, w, (stride, padding, output_padding, dilation, groups))
    bias_input(b, spec, spec.C_out)  # (its shape checked: no gradient depends on it)
    dy = _input(dout, "dout")
    spec.check_shape("dout", dy.shape, spec.out_shape)
    on_stamps = dy_on_stamps(spec, dy)
    conv = _conv_of_dy(spec)
    dx = forward_padded(conv, on_stamps, wa, None)  # (N, C_in, H, W)
    g, cg = spec.groups, spec.in_per_group
    xg = xa.reshape(spec.N, g, cg, spec.H, spec.W)
    # windows: (N, G, C_out/G, H, W, KH, KW), the stamped cells each input cell's taps reached
    dw = np.einsum("ngchw,ngohwkl->gcokl", xg, windows(conv, on_stamps), optimize=True)
    return dx, np.ascontiguousarray(dw.reshape(spec.w_shape)), dy.sum(axis=(0, 2, 3))
