"""PyTorch-style backward pass as the mistakes lab runs it (convcore.mistakes): db in
one sum, then one output position (n, i, j) at a time, every filter at once: the window
of dxp gains what each filter sends back to its group's channels, and each dw[f] the
window times its dout cell. The mistakes are this code with a line changed (each
mistake's ``listing_change``).

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


def conv2d_backward(dout, x, w, stride=1, padding=0, dilation=1, groups=1):
    """dout: (N, F, H_out, W_out), x: (N, C, H, W), w: (F, C // groups, KH, KW) ->
    dx: (N, C, H, W), dw: (F, C // groups, KH, KW), db: (F,).

    block is what the window of position (i, j) gets back: Σ_f dout[n, f, i, j] * w[f],
    each filter on its group's channels. The gradient landing on the padding is
    cropped away at the end."""
    sh, sw = np.broadcast_to(stride, 2)
    top, bottom, left, right = padding if np.size(padding) == 4 else np.repeat(np.broadcast_to(padding, 2), 2)
    dil_h, dil_w = np.broadcast_to(dilation, 2)
    F, Cg, KH, KW = w.shape
    db = np.sum(dout, axis=(0, 2, 3))  # step: db
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    dxp, dw = np.zeros(xp.shape), np.zeros(w.shape)
    for n, i, j in np.ndindex(dout.shape[0], dout.shape[2], dout.shape[3]):
        rows = slice(i * sh, i * sh + dil_h * (KH - 1) + 1, dil_h)
        cols = slice(j * sw, j * sw + dil_w * (KW - 1) + 1, dil_w)
        block = np.zeros((x.shape[1], KH, KW))
        for f in range(F):
            block[f // (F // groups) * Cg : f // (F // groups) * Cg + Cg] += dout[n, f, i, j] * w[f]
        dxp[n, :, rows, cols] += block  # step: backward
        for f in range(F):
            c0 = f // (F // groups) * Cg  # the first channel of the filter's group
            dw[f] += xp[n, c0 : c0 + Cg, rows, cols] * dout[n, f, i, j]  # step: backward
    dx = dxp[:, :, top : top + x.shape[2], left : left + x.shape[3]]  # step: crop
    return dx, dw, db
