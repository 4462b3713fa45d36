"""PyTorch-style backward pass with dx as a transposed convolution: db, dw as the
correlation of the padded input with dout (over the channels of each filter's group),
then dout spread out by the stride and framed with zeros, the filters turned 180°, and
each cell of dxp gathered as one full window of its group's filters.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


def conv2d_backward(dout, x, w, stride=1, padding=0, dilation=1, groups=1):
    """dout: (N, F, H_out, W_out), x: (N, C, H, W), w: (F, C // groups, KH, KW) ->
    dx: (N, C, H, W), dw: (F, C // groups, KH, KW), db: (F,).

    dw[f, c, k, l] sums what tap (k, l) saw in every window (rows sh apart) times dout.
    dz_dilated holds dout[n, f, i, j] at (span_h - 1 + i * sh, span_w - 1 + j * sw),
    zeros elsewhere; dxp[n, c, y, x] is the window of dz_dilated at (y, x), its taps
    dilation apart, over the filters of c's group, times their w_rot at c, summed (the
    loop names y, x are the cell's row and column: x is no longer the input after that
    loop, so its size is read first). The gradient landing on the padding is cropped
    away at the end."""
    sh, sw = np.broadcast_to(stride, 2)
    top, bottom, left, right = padding if np.size(padding) == 4 else np.repeat(np.broadcast_to(padding, 2), 2)
    dil_h, dil_w = np.broadcast_to(dilation, 2)
    (N, F, H_out, W_out), (_, Cg, KH, KW), (C, H, W) = dout.shape, w.shape, x.shape[1:]
    span_h, span_w = dil_h * (KH - 1) + 1, dil_w * (KW - 1) + 1
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    Hp, Wp = xp.shape[2], xp.shape[3]
    db, dw = np.zeros(F), np.zeros(w.shape)
    for f in range(F):
        db[f] = np.sum(dout[:, f])  # step: db
    for f, c, k, l in np.ndindex(F, Cg, KH, KW):
        c0 = f // (F // groups) * Cg  # the first channel of the filter's group
        rows = slice(k * dil_h, k * dil_h + (H_out - 1) * sh + 1, sh)
        columns = slice(l * dil_w, l * dil_w + (W_out - 1) * sw + 1, sw)
        dw[f, c, k, l] = np.sum(xp[:, c0 + c, rows, columns] * dout[:, f])  # step: dw
    dz_dilated = np.zeros((N, F, Hp + span_h - 1, Wp + span_w - 1))
    top_z, left_z = span_h - 1, span_w - 1  # the zero frame above and left of dout's cells
    for n, f, i in np.ndindex(N, F, H_out):
        dz_dilated[n, f, top_z + i * sh, left_z : left_z + (W_out - 1) * sw + 1 : sw] = dout[n, f, i]  # step: dilate dz
    w_rot = np.zeros(w.shape)
    for f in range(F):
        w_rot[f] = w[f, :, ::-1, ::-1]  # step: rotate w
    dxp = np.zeros(xp.shape)
    for n, c, y, x in np.ndindex(N, C, Hp, Wp):
        f0 = c // Cg * (F // groups)  # the first filter of the channel's group
        taps = dz_dilated[n, f0 : f0 + F // groups, y : y + span_h : dil_h, x : x + span_w : dil_w]
        dxp[n, c, y, x] = np.sum(taps * w_rot[f0 : f0 + F // groups, c % Cg])  # step: dx
    dx = dxp[:, :, top : top + H, left : left + W]  # step: crop
    return dx, dw, db
