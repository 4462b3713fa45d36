"""CS231n's naive backward pass, one output position (one window) at a time, separate:
db, then dw, then dx, each in a loop nest of its own.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


def conv_backward_naive(dout, cache):
    """dout: (N, F, H_out, W_out), cache (x, w, b, conv_param) ->
    dx: (N, C, H, W), dw: (F, C, HH, WW), db: (F,).

    db[f] sums dout over images and positions; dw[f] adds each window times its dout
    cell; the window of dxp adds the filter times it. The gradient landing on the
    padding is cropped away at the end."""
    x, w, b, conv_param = cache
    s, pad = conv_param["stride"], conv_param["pad"]
    N, F, H_out, W_out = dout.shape
    HH, WW = w.shape[2], w.shape[3]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    dxp, dw, db = np.zeros(xp.shape), np.zeros(w.shape), np.zeros(b.shape)
    for f in range(F):
        db[f] = np.sum(dout[:, f])  # step: db
    for n, f, i, j in np.ndindex(N, F, H_out, W_out):
        dw[f] += dout[n, f, i, j] * xp[n, :, i * s : i * s + HH, j * s : j * s + WW]  # step: dw
    for n, f, i, j in np.ndindex(N, F, H_out, W_out):
        dxp[n, :, i * s : i * s + HH, j * s : j * s + WW] += dout[n, f, i, j] * w[f]  # step: dx
    dx = dxp[:, :, pad : pad + x.shape[2], pad : pad + x.shape[3]]  # step: crop
    return dx, dw, db
