"""CS231n's naive forward pass, one output position (one window) at a time.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


def conv_forward_naive(x, w, b, conv_param):
    """x: (N, C, H, W), w: (F, C, HH, WW), b: (F,), conv_param {"stride", "pad"} ->
    out: (N, F, H_out, W_out), cache (x, w, b, conv_param).

    Each output cell is the window of the padded input times the filter, summed, plus
    the filter's bias. np.ndindex runs the loops n, f, i, j as nested for loops would,
    the last one fastest."""
    s, pad = conv_param["stride"], conv_param["pad"]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))  # step: pad
    N, F, HH, WW = x.shape[0], w.shape[0], w.shape[2], w.shape[3]
    H_out = 1 + (x.shape[2] + 2 * pad - HH) // s
    W_out = 1 + (x.shape[3] + 2 * pad - WW) // s
    out = np.zeros((N, F, H_out, W_out))
    for n, f, i, j in np.ndindex(N, F, H_out, W_out):
        window = xp[n, :, i * s : i * s + HH, j * s : j * s + WW]
        out[n, f, i, j] = np.sum(window * w[f]) + b[f]  # step: forward
    return out, (x, w, b, conv_param)
