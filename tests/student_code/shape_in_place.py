"""A correct CS231n forward pass that makes ``out`` flat, writes one cell of it, then gives
it its four axes in place (``out.shape = ...``) and writes every cell by four indices:
the recording must follow the array's new shape."""

import numpy as np


def conv_forward_naive(x, w, b, conv_param):
    s, p = conv_param["stride"], conv_param["pad"]
    F, _, HH, WW = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    shape = (x.shape[0], F, 1 + (xp.shape[2] - HH) // s, 1 + (xp.shape[3] - WW) // s)
    out = np.zeros(np.prod(shape))
    out[-1] = b[-1]
    out.shape = shape
    for n, f, i, j in np.ndindex(*shape):
        out[n, f, i, j] = np.sum(xp[n, :, i * s : i * s + HH, j * s : j * s + WW] * w[f]) + b[f]
    return out, (x, w, b, conv_param)
