"""CS231n's naive backward pass, one multiply-add at a time, separate: db, then dw,
then dx, each in a loop nest of its own, as seed 004 writes it.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


def conv_backward_naive(dout, cache):
    """dout: (N, F, H_out, W_out), cache (x, w, b, conv_param) ->
    dx: (N, C, H, W), dw: (F, C, HH, WW), db: (F,).

    db[f] adds every dout cell of filter f; dw[f, c, k, l] adds the input cell that
    weight multiplied, times dout; dxp adds the weight times dout at the input cell.
    The gradient landing on the padding is cropped away at the end."""
    x, w, b, conv_param = cache
    s, pad = conv_param["stride"], conv_param["pad"]
    (N, C, _, _), (F, _, HH, WW) = x.shape, w.shape
    H_out, W_out = dout.shape[2], dout.shape[3]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    dxp, dw, db = np.zeros(xp.shape), np.zeros(w.shape), np.zeros(b.shape)
    for n, f, i, j in np.ndindex(N, F, H_out, W_out):
        db[f] += dout[n, f, i, j]  # step: db
    for n, f, i, j, c, k, l in np.ndindex(N, F, H_out, W_out, C, HH, WW):
        dw[f, c, k, l] += xp[n, c, i * s + k, j * s + l] * dout[n, f, i, j]  # step: dw
    for n, f, i, j, c, k, l in np.ndindex(N, F, H_out, W_out, C, HH, WW):
        dxp[n, c, i * s + k, j * s + l] += w[f, c, k, l] * dout[n, f, i, j]  # step: dx
    dx = dxp[:, :, pad : pad + x.shape[2], pad : pad + x.shape[3]]  # step: crop
    return dx, dw, db
