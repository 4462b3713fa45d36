"""Seven loops, but the forward's window is 3 × 3 whatever the kernel: on a 1 × 1 kernel
w[f] broadcasts over the nine cells and every out cell sums them all."""

import numpy as np


def conv_forward_naive(x, w, b, conv_param):
    """x: (N, C, H, W), w: (F, C, HH, WW), b: (F,) -> out (N, F, H_out, W_out), cache."""
    s, p = conv_param["stride"], conv_param["pad"]
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    H_out = 1 + (H + 2 * p - HH) // s
    W_out = 1 + (W + 2 * p - WW) // s
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    out = np.zeros((N, F, H_out, W_out))
    for n in range(N):
        for f in range(F):
            for i in range(H_out):
                for j in range(W_out):
                    out[n, f, i, j] = np.sum(xp[n, :, i * s : i * s + 3, j * s : j * s + 3] * w[f]) + b[f]  # BUG
    return out, (x, w, b, conv_param)


def conv_backward_naive(dout, cache):
    """dout: (N, F, H_out, W_out) -> dx (N, C, H, W), dw (F, C, HH, WW), db (F,)."""
    x, w, b, conv_param = cache
    s, p = conv_param["stride"], conv_param["pad"]
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    _, _, H_out, W_out = dout.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    dxp = np.zeros(xp.shape)
    dw = np.zeros(w.shape)
    db = np.zeros(b.shape)
    for n in range(N):
        for f in range(F):
            db[f] += np.sum(dout[n, f])
            for i in range(H_out):
                for j in range(W_out):
                    for c in range(C):
                        for k in range(HH):
                            for l in range(WW):  # noqa: E741 - the kernel's column, as the course names it
                                g = dout[n, f, i, j]
                                dw[f, c, k, l] += g * xp[n, c, i * s + k, j * s + l]
                                dxp[n, c, i * s + k, j * s + l] += g * w[f, c, k, l]
    dx = dxp[:, :, p : p + H, p : p + W]
    return dx, dw, db
