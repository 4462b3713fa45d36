"""CS231n's naive backward pass with dx as a transposed convolution: db, dw as the
correlation of the padded input with dout, then dout spread out by the stride and framed
with zeros, the filters turned 180°, and each cell of dxp gathered as one full window.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


def conv_backward_naive(dout, cache):
    """dout: (N, F, H_out, W_out), cache (x, w, b, conv_param) ->
    dx: (N, C, H, W), dw: (F, C, HH, WW), db: (F,).

    dw[f, c, k, l] sums what tap (k, l) saw in every window (rows s apart) times dout.
    dz_dilated holds dout[n, f, i, j] at (HH - 1 + i * s, WW - 1 + j * s), zeros
    elsewhere; dxp[n, c, y, x] is the window of dz_dilated at (y, x) times w_rot[:, c],
    summed (the loop names y, x are the cell's row and column: x is no longer the input
    after that loop, so its size is read first). The gradient landing on the padding
    is cropped away at the end."""
    x, w, b, conv_param = cache
    s, pad = conv_param["stride"], conv_param["pad"]
    N, F, H_out, W_out = dout.shape
    C, HH, WW = w.shape[1], w.shape[2], w.shape[3]
    H, W = x.shape[2], x.shape[3]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    Hp, Wp = H + 2 * pad, W + 2 * pad
    db, dw = np.zeros(b.shape), np.zeros(w.shape)
    for f in range(F):
        db[f] = np.sum(dout[:, f])  # step: db
    for f, c, k, l in np.ndindex(F, C, HH, WW):
        seen = xp[:, c, k : k + (H_out - 1) * s + 1 : s, l : l + (W_out - 1) * s + 1 : s]
        dw[f, c, k, l] = np.sum(seen * dout[:, f])  # step: dw
    dz_dilated = np.zeros((N, F, Hp + HH - 1, Wp + WW - 1))
    for n, f, i in np.ndindex(N, F, H_out):
        dz_dilated[n, f, HH - 1 + i * s, WW - 1 : WW + (W_out - 1) * s : s] = dout[n, f, i]  # step: dilate dz
    w_rot = np.zeros(w.shape)
    for f in range(F):
        w_rot[f] = w[f, :, ::-1, ::-1]  # step: rotate w
    dxp = np.zeros((N, C, Hp, Wp))
    for n, c, y, x in np.ndindex(N, C, Hp, Wp):
        dxp[n, c, y, x] = np.sum(dz_dilated[n, :, y : y + HH, x : x + WW] * w_rot[:, c])  # step: dx
    dx = dxp[:, :, pad : pad + H, pad : pad + W]  # step: crop
    return dx, dw, db
