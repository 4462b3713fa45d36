"""A student's correct CS231n conv layer in seven nested loops (one Python step per
multiply-add), the code ``bench/code_trace.py`` records."""

import numpy as np


def conv_forward_naive(x, w, b, conv_param):
    s, p = conv_param["stride"], conv_param["pad"]
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    Ho, Wo = 1 + (H + 2 * p - HH) // s, 1 + (W + 2 * p - WW) // s
    out = np.zeros((N, F, Ho, Wo))
    for n in range(N):
        for f in range(F):
            for i in range(Ho):
                for j in range(Wo):
                    for c in range(C):
                        for k in range(HH):
                            for l in range(WW):
                                out[n, f, i, j] += xp[n, c, i * s + k, j * s + l] * w[f, c, k, l]
                    out[n, f, i, j] += b[f]
    return out, (x, w, b, conv_param)


def conv_backward_naive(dout, cache):
    x, w, b, conv_param = cache
    s, p = conv_param["stride"], conv_param["pad"]
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    dxp, dw, db = np.zeros(xp.shape), np.zeros(w.shape), np.zeros(F)
    for n in range(N):
        for f in range(F):
            for i in range(dout.shape[2]):
                for j in range(dout.shape[3]):
                    db[f] += dout[n, f, i, j]
                    for c in range(C):
                        for k in range(HH):
                            for l in range(WW):
                                dw[f, c, k, l] += dout[n, f, i, j] * xp[n, c, i * s + k, j * s + l]
                                dxp[n, c, i * s + k, j * s + l] += dout[n, f, i, j] * w[f, c, k, l]
    return dxp[:, :, p : p + H, p : p + W], dw, db
