"""PyTorch-style backward pass, one output position (one window) at a time, fused:
each dout cell goes back through its window into db, dw and dx in one loop nest.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


def conv2d_backward(dout, x, w, stride=1, padding=0, dilation=1, groups=1):
    """dout: (N, F, H_out, W_out), x: (N, C, H, W), w: (F, C // groups, KH, KW) ->
    dx: (N, C, H, W), dw: (F, C // groups, KH, KW), db: (F,).

    For every output cell, its dout flows back: into db[f], into dw[f] (times the
    window it read) and into that window of dxp (times the filter). The gradient
    landing on the padding is cropped away at the end."""
    sh, sw = np.broadcast_to(stride, 2)
    top, bottom, left, right = padding if np.size(padding) == 4 else np.repeat(np.broadcast_to(padding, 2), 2)
    dil_h, dil_w = np.broadcast_to(dilation, 2)
    F, Cg, KH, KW = w.shape
    span_h, span_w = dil_h * (KH - 1) + 1, dil_w * (KW - 1) + 1
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    dxp, dw, db = np.zeros(xp.shape), np.zeros(w.shape), np.zeros(F)
    for n, f, i, j in np.ndindex(*dout.shape):
        c0 = f // (F // groups) * Cg  # the first channel of the filter's group
        rows, cols = slice(i * sh, i * sh + span_h, dil_h), slice(j * sw, j * sw + span_w, dil_w)
        db[f] += dout[n, f, i, j]  # step: backward
        dw[f] += dout[n, f, i, j] * xp[n, c0 : c0 + Cg, rows, cols]  # step: backward
        dxp[n, c0 : c0 + Cg, rows, cols] += dout[n, f, i, j] * w[f]  # step: backward
    dx = dxp[:, :, top : top + x.shape[2], left : left + x.shape[3]]  # step: crop
    return dx, dw, db
