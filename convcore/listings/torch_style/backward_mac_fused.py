"""PyTorch-style backward pass, one multiply-add at a time, fused: each multiply-add
of the forward pass sends its dout cell back into dw and dx (and db, once per cell).

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


def conv2d_backward(dout, x, w, stride=1, padding=0, dilation=1, groups=1):
    """dout: (N, F, H_out, W_out), x: (N, C, H, W), w: (F, C // groups, KH, KW) ->
    dx: (N, C, H, W), dw: (F, C // groups, KH, KW), db: (F,).

    The forward's multiply-add out[n, f, i, j] += xp[n, channel, row, col] * w[f, c, k, l]
    has two factors, so dout[n, f, i, j] flows to each times the other; the bias was
    added once per output cell, so db[f] gets it once."""
    sh, sw = np.broadcast_to(stride, 2)
    top, bottom, left, right = padding if np.size(padding) == 4 else np.repeat(np.broadcast_to(padding, 2), 2)
    dil_h, dil_w = np.broadcast_to(dilation, 2)
    (F, Cg, KH, KW), (N, _, H_out, W_out) = w.shape, dout.shape
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    dxp, dw, db = np.zeros(xp.shape), np.zeros(w.shape), np.zeros(F)
    for n, f, i, j, c, k, l in np.ndindex(N, F, H_out, W_out, Cg, KH, KW):
        channel, row, col = f // (F // groups) * Cg + c, i * sh + k * dil_h, j * sw + l * dil_w
        if c == k == l == 0:
            db[f] += dout[n, f, i, j]  # step: backward
        dw[f, c, k, l] += xp[n, channel, row, col] * dout[n, f, i, j]  # step: backward
        dxp[n, channel, row, col] += w[f, c, k, l] * dout[n, f, i, j]  # step: backward
    dx = dxp[:, :, top : top + x.shape[2], left : left + x.shape[3]]  # step: crop
    return dx, dw, db
