"""CS231n's naive forward pass, one multiply-add at a time.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


def conv_forward_naive(x, w, b, conv_param):
    """x: (N, C, H, W), w: (F, C, HH, WW), b: (F,), conv_param {"stride", "pad"} ->
    out: (N, F, H_out, W_out), cache (x, w, b, conv_param).

    Seven loops: output cell (n, f, i, j), then channel c and kernel cell (k, l); each
    multiply-add adds one input cell times one weight, the first one of a cell also
    its filter's bias. np.ndindex runs them as nested for loops would, the last fastest."""
    s, pad = conv_param["stride"], conv_param["pad"]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))  # step: pad
    (N, C, _, _), (F, _, HH, WW) = x.shape, w.shape
    H_out = 1 + (xp.shape[2] - HH) // s
    W_out = 1 + (xp.shape[3] - WW) // s
    out = np.zeros((N, F, H_out, W_out))
    for n, f, i, j, c, k, l in np.ndindex(N, F, H_out, W_out, C, HH, WW):
        bias = b[f] if c == k == l == 0 else 0.0
        out[n, f, i, j] += xp[n, c, i * s + k, j * s + l] * w[f, c, k, l] + bias  # step: forward
    return out, (x, w, b, conv_param)
