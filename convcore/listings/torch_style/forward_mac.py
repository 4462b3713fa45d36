"""PyTorch-style forward pass, one multiply-add at a time.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


def conv2d_forward(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """x: (N, C, H, W), w: (F, C // groups, KH, KW), b: (F,) or None ->
    out: (N, F, H_out, W_out).

    Seven loops: output cell (n, f, i, j), then c (the channel within the filter's
    group, w's second axis) and kernel cell (k, l); each multiply-add adds one input
    cell times one weight, the first one of a cell also the bias."""
    sh, sw = np.broadcast_to(stride, 2)
    top, bottom, left, right = padding if np.size(padding) == 4 else np.repeat(np.broadcast_to(padding, 2), 2)
    dil_h, dil_w = np.broadcast_to(dilation, 2)
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))  # step: pad
    (F, Cg, KH, KW), N = w.shape, x.shape[0]
    H_out = 1 + (xp.shape[2] - dil_h * (KH - 1) - 1) // sh
    W_out = 1 + (xp.shape[3] - dil_w * (KW - 1) - 1) // sw
    out = np.zeros((N, F, H_out, W_out))
    for n, f, i, j, c, k, l in np.ndindex(N, F, H_out, W_out, Cg, KH, KW):
        channel, row, col = f // (F // groups) * Cg + c, i * sh + k * dil_h, j * sw + l * dil_w
        bias = b[f] if b is not None and c == k == l == 0 else 0.0
        out[n, f, i, j] += xp[n, channel, row, col] * w[f, c, k, l] + bias  # step: forward
    return out
