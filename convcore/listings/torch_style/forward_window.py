"""PyTorch-style forward pass, one output position (one window) at a time.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


def conv2d_forward(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """x: (N, C, H, W), w: (F, C // groups, KH, KW), b: (F,) or None ->
    out: (N, F, H_out, W_out).

    Each output cell is a window of the padded input (its taps dilation apart, over
    the channels of the filter's group) times the filter, summed, plus the bias.
    np.ndindex runs the loops n, f, i, j as nested for loops would, the last fastest."""
    sh, sw = np.broadcast_to(stride, 2)
    top, bottom, left, right = padding if np.size(padding) == 4 else np.repeat(np.broadcast_to(padding, 2), 2)
    dil_h, dil_w = np.broadcast_to(dilation, 2)
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))  # step: pad
    (F, Cg, KH, KW), N = w.shape, x.shape[0]
    span_h, span_w = dil_h * (KH - 1) + 1, dil_w * (KW - 1) + 1
    out = np.zeros((N, F, 1 + (xp.shape[2] - span_h) // sh, 1 + (xp.shape[3] - span_w) // sw))
    for n, f, i, j in np.ndindex(*out.shape):
        c0 = f // (F // groups) * Cg  # the first channel of the filter's group
        window = xp[n, c0 : c0 + Cg, i * sh : i * sh + span_h : dil_h, j * sw : j * sw + span_w : dil_w]
        out[n, f, i, j] = np.sum(window * w[f]) + (0.0 if b is None else b[f])  # step: forward
    return out
