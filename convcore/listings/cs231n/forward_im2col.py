"""CS231n's forward pass as a matrix product (im2col): each receptive field of the padded
input becomes one column of ``cols``, then each output cell is one filter (a row of
``w`` flattened) times one column, plus the filter's bias.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


def conv_forward_naive(x, w, b, conv_param):
    """x: (N, C, H, W), w: (F, C, HH, WW), b: (F,), conv_param {"stride", "pad"} ->
    out: (N, F, H_out, W_out), cache (x, w, b, conv_param, cols).

    cols: (C * HH * WW, N * H_out * W_out); column p = (n * H_out + i) * W_out + j is
    the window of output position (n, i, j), its rows in the order (c, k, l) of
    w[f].ravel(). np.ndindex runs the loops as nested for loops would, the last one
    fastest."""
    s, pad = conv_param["stride"], conv_param["pad"]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))  # step: pad
    N, C, F, HH, WW = x.shape[0], x.shape[1], w.shape[0], w.shape[2], w.shape[3]
    H_out = 1 + (x.shape[2] + 2 * pad - HH) // s
    W_out = 1 + (x.shape[3] + 2 * pad - WW) // s
    cols = np.zeros((C * HH * WW, N * H_out * W_out))
    for n, i, j in np.ndindex(N, H_out, W_out):
        p = (n * H_out + i) * W_out + j
        cols[:, p] = xp[n, :, i * s : i * s + HH, j * s : j * s + WW].ravel()  # step: im2col
    w_rows = w.reshape(F, C * HH * WW)
    out = np.zeros((N, F, H_out, W_out))
    for f, n, i, j in np.ndindex(F, N, H_out, W_out):
        p = (n * H_out + i) * W_out + j
        out[n, f, i, j] = w_rows[f] @ cols[:, p] + b[f]  # step: forward
    return out, (x, w, b, conv_param, cols)
