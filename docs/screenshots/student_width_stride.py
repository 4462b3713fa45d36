"""A student's CS231n conv layer with one bug: the width's stride dropped where dx is
scattered (line 42). docs/screenshots/take_screenshots.py traces it for the README."""

import numpy as np


def conv_forward_naive(x, w, b, conv_param):
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    s, p = conv_param["stride"], conv_param["pad"]
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    Ho = 1 + (H + 2 * p - HH) // s
    Wo = 1 + (W + 2 * p - WW) // s
    out = np.zeros((N, F, Ho, Wo))
    for n in range(N):
        for f in range(F):
            for i in range(Ho):
                for j in range(Wo):
                    out[n, f, i, j] = np.sum(xp[n, :, i * s : i * s + HH, j * s : j * s + WW] * w[f]) + b[f]
    return out, (x, w, b, conv_param)


def conv_backward_naive(dout, cache):
    x, w, b, conv_param = cache
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    s, p = conv_param["stride"], conv_param["pad"]
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    dxp = np.zeros_like(xp)
    dw = np.zeros_like(w)
    db = np.zeros_like(b)
    _, _, Ho, Wo = dout.shape
    for n in range(N):
        for f in range(F):
            db[f] += np.sum(dout[n, f])
            for i in range(Ho):
                for j in range(Wo):
                    for c in range(C):
                        for k in range(HH):
                            for l in range(WW):
                                dw[f, c, k, l] += dout[n, f, i, j] * xp[n, c, i * s + k, j * s + l]
                                dxp[n, c, i * s + k, j + l] += dout[n, f, i, j] * w[f, c, k, l]
    dx = dxp[:, :, p : p + H, p : p + W]
    return dx, dw, db
