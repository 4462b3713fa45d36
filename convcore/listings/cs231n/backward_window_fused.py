"""CS231n's naive backward pass, one output position (one window) at a time, fused:
each dout cell goes back through its window into db, dw and dx in one loop nest.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


def conv_backward_naive(dout, cache):
    """dout: (N, F, H_out, W_out), cache (x, w, b, conv_param) ->
    dx: (N, C, H, W), dw: (F, C, HH, WW), db: (F,).

    For every output cell, g = dout[n, f, i, j] flows back: into db[f], into dw[f]
    (times the window it read) and into the window of dxp (times the filter). The
    gradient landing on the padding is cropped away at the end."""
    x, w, b, conv_param = cache
    s, pad = conv_param["stride"], conv_param["pad"]
    HH, WW = w.shape[2], w.shape[3]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    dxp, dw, db = np.zeros(xp.shape), np.zeros(w.shape), np.zeros(b.shape)
    for n, f, i, j in np.ndindex(*dout.shape):
        g = dout[n, f, i, j]
        db[f] += g  # step: backward
        dw[f] += g * xp[n, :, i * s : i * s + HH, j * s : j * s + WW]  # step: backward
        dxp[n, :, i * s : i * s + HH, j * s : j * s + WW] += g * w[f]  # step: backward
    dx = dxp[:, :, pad : pad + x.shape[2], pad : pad + x.shape[3]]  # step: crop
    return dx, dw, db
