"""PyTorch-style backward pass, one output position (one window) at a time, separate:
db, then dw, then dx, each in a loop nest of its own.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


def conv2d_backward(dout, x, w, stride=1, padding=0, dilation=1, groups=1):
    """dout: (N, F, H_out, W_out), x: (N, C, H, W), w: (F, C // groups, KH, KW) ->
    dx: (N, C, H, W), dw: (F, C // groups, KH, KW), db: (F,).

    db[f] sums dout over images and positions; dw[f] adds each window times its dout
    cell; the window of dxp adds the filter times it, over the channels of the
    filter's group. The gradient landing on the padding is cropped away at the end."""
    sh, sw = np.broadcast_to(stride, 2)
    top, bottom, left, right = padding if np.size(padding) == 4 else np.repeat(np.broadcast_to(padding, 2), 2)
    dil_h, dil_w = np.broadcast_to(dilation, 2)
    F, Cg, KH, KW = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    dxp, dw, db = np.zeros(xp.shape), np.zeros(w.shape), np.zeros(F)

    def window(n, f, i, j):
        """The index of the receptive field of output cell (n, f, i, j) in xp."""
        c0 = f // (F // groups) * Cg
        rows = slice(i * sh, i * sh + dil_h * (KH - 1) + 1, dil_h)
        return n, slice(c0, c0 + Cg), rows, slice(j * sw, j * sw + dil_w * (KW - 1) + 1, dil_w)

    for f in range(F):
        db[f] = np.sum(dout[:, f])  # step: db
    for n, f, i, j in np.ndindex(*dout.shape):
        dw[f] += dout[n, f, i, j] * xp[window(n, f, i, j)]  # step: dw
    for n, f, i, j in np.ndindex(*dout.shape):
        dxp[window(n, f, i, j)] += dout[n, f, i, j] * w[f]  # step: dx
    dx = dxp[:, :, top : top + x.shape[2], left : left + x.shape[3]]  # step: crop
    return dx, dw, db
