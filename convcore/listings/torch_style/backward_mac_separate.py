"""PyTorch-style backward pass, one multiply-add at a time, separate: db, then dw,
then dx, each in a loop nest of its own.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


def conv2d_backward(dout, x, w, stride=1, padding=0, dilation=1, groups=1):
    """dout: (N, F, H_out, W_out), x: (N, C, H, W), w: (F, C // groups, KH, KW) ->
    dx: (N, C, H, W), dw: (F, C // groups, KH, KW), db: (F,).

    db[f] adds every dout cell of filter f; dw[f, c, k, l] adds the input cell that
    weight multiplied, times dout; dxp adds the weight times dout at that input cell
    (channel: the c-th of the filter's group; rows and columns dilation apart)."""
    sh, sw = np.broadcast_to(stride, 2)
    top, bottom, left, right = padding if np.size(padding) == 4 else np.repeat(np.broadcast_to(padding, 2), 2)
    dil_h, dil_w = np.broadcast_to(dilation, 2)
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    (F, Cg, KH, KW), (N, _, H_out, W_out) = w.shape, dout.shape
    dxp, dw, db = np.zeros(xp.shape), np.zeros(w.shape), np.zeros(F)
    for n, f, i, j in np.ndindex(N, F, H_out, W_out):
        db[f] += dout[n, f, i, j]  # step: db
    for n, f, i, j, c, k, l in np.ndindex(N, F, H_out, W_out, Cg, KH, KW):
        channel = f // (F // groups) * Cg + c
        dw[f, c, k, l] += xp[n, channel, i * sh + k * dil_h, j * sw + l * dil_w] * dout[n, f, i, j]  # step: dw
    for n, f, i, j, c, k, l in np.ndindex(N, F, H_out, W_out, Cg, KH, KW):
        channel = f // (F // groups) * Cg + c
        dxp[n, channel, i * sh + k * dil_h, j * sw + l * dil_w] += w[f, c, k, l] * dout[n, f, i, j]  # step: dx
    dx = dxp[:, :, top : top + x.shape[2], left : left + x.shape[3]]  # step: crop
    return dx, dw, db
