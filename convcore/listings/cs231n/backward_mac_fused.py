"""CS231n's naive backward pass, one multiply-add at a time, fused: each multiply-add
of the forward pass sends its dout cell back into dw and dx (and db, once per cell).

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


def conv_backward_naive(dout, cache):
    """dout: (N, F, H_out, W_out), cache (x, w, b, conv_param) ->
    dx: (N, C, H, W), dw: (F, C, HH, WW), db: (F,).

    The forward's multiply-add out[n, f, i, j] += xp[n, c, r, q] * w[f, c, k, l] has
    two factors, so g = dout[n, f, i, j] flows to each times the other; the bias was
    added once per output cell, so db[f] gets g once. The gradient landing on the
    padding is cropped away at the end."""
    x, w, b, conv_param = cache
    s, pad = conv_param["stride"], conv_param["pad"]
    (N, C, _, _), (F, _, HH, WW) = x.shape, w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    dxp, dw, db = np.zeros(xp.shape), np.zeros(w.shape), np.zeros(b.shape)
    for n, f, i, j, c, k, l in np.ndindex(N, F, dout.shape[2], dout.shape[3], C, HH, WW):
        g = dout[n, f, i, j]
        if c == k == l == 0:
            db[f] += g  # step: backward
        dw[f, c, k, l] += xp[n, c, i * s + k, j * s + l] * g  # step: backward
        dxp[n, c, i * s + k, j * s + l] += w[f, c, k, l] * g  # step: backward
    dx = dxp[:, :, pad : pad + x.shape[2], pad : pad + x.shape[3]]  # step: crop
    return dx, dw, db
