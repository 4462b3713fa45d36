"""CS231n's backward pass as matrix products (im2col): db sums dout, dw is dout (as an
(F, N * H_out * W_out) matrix) times cols transposed, dcols is w transposed times dout,
and col2im adds each column of dcols back into the window it came from.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


def conv_backward_naive(dout, cache):
    """dout: (N, F, H_out, W_out), cache (x, w, b, conv_param, cols) ->
    dx: (N, C, H, W), dw: (F, C, HH, WW), db: (F,).

    Row r = (c * HH + k) * WW + l of cols and dcols is the tap (c, k, l) of every
    window, column p = (n * H_out + i) * W_out + j the window of (n, i, j). Windows that
    overlap add up in dxp; the gradient landing on the padding is cropped away."""
    x, w, b, conv_param, cols = cache
    s, pad = conv_param["stride"], conv_param["pad"]
    N, F, H_out, W_out = dout.shape
    C, HH, WW = w.shape[1], w.shape[2], w.shape[3]
    db, dw = np.zeros(b.shape), np.zeros(w.shape)
    for f in range(F):
        db[f] = np.sum(dout[:, f])  # step: db
    for f, c, k, l in np.ndindex(F, C, HH, WW):
        r = (c * HH + k) * WW + l
        dw[f, c, k, l] = dout[:, f].ravel() @ cols[r]  # step: dw
    dcols = np.zeros(cols.shape)
    for c, k, l in np.ndindex(C, HH, WW):
        r = (c * HH + k) * WW + l
        for n, i, j in np.ndindex(N, H_out, W_out):
            p = (n * H_out + i) * W_out + j
            dcols[r, p] = w[:, c, k, l] @ dout[n, :, i, j]  # step: dcols
    dxp = np.zeros((N, C, x.shape[2] + 2 * pad, x.shape[3] + 2 * pad))
    for n, i, j in np.ndindex(N, H_out, W_out):
        p = (n * H_out + i) * W_out + j
        dxp[n, :, i * s : i * s + HH, j * s : j * s + WW] += dcols[:, p].reshape(C, HH, WW)  # step: col2im
    dx = dxp[:, :, pad : pad + x.shape[2], pad : pad + x.shape[3]]  # step: crop
    return dx, dw, db
