"""PyTorch-style forward pass as a matrix product (im2col): each receptive field of the
padded input (its taps dilation apart) becomes one column of ``cols``, then each output
cell is one filter (a row of ``w`` flattened) times the rows of its group in one column,
plus the filter's bias.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


def conv2d_forward(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """x: (N, C, H, W), w: (F, C // groups, KH, KW), b: (F,) or None ->
    out: (N, F, H_out, W_out).

    cols: (C * KH * KW, N * H_out * W_out); column p = (n * H_out + i) * W_out + j is
    the window of output position (n, i, j), its rows in the order (c, k, l): group g's
    channels are the rows g * Cg * KH * KW onwards, and a filter of group g multiplies
    those rows only. np.ndindex runs the loops as nested for loops would, the last one
    fastest."""
    sh, sw = np.broadcast_to(stride, 2)
    top, bottom, left, right = padding if np.size(padding) == 4 else np.repeat(np.broadcast_to(padding, 2), 2)
    dil_h, dil_w = np.broadcast_to(dilation, 2)
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))  # step: pad
    (F, Cg, KH, KW), (N, C) = w.shape, x.shape[:2]
    span_h, span_w = dil_h * (KH - 1) + 1, dil_w * (KW - 1) + 1
    H_out, W_out = 1 + (xp.shape[2] - span_h) // sh, 1 + (xp.shape[3] - span_w) // sw
    cols = np.zeros((C * KH * KW, N * H_out * W_out))
    for n, i, j in np.ndindex(N, H_out, W_out):
        p = (n * H_out + i) * W_out + j
        window = xp[n, :, i * sh : i * sh + span_h : dil_h, j * sw : j * sw + span_w : dil_w]
        cols[:, p] = window.ravel()  # step: im2col
    w_rows = w.reshape(F, Cg * KH * KW)
    out = np.zeros((N, F, H_out, W_out))
    for f, n, i, j in np.ndindex(F, N, H_out, W_out):
        p = (n * H_out + i) * W_out + j
        r0 = f // (F // groups) * Cg * KH * KW  # the first row of the filter's group
        out[n, f, i, j] = w_rows[f] @ cols[r0 : r0 + Cg * KH * KW, p] + (0.0 if b is None else b[f])  # step: forward
    return out
