"""The one naive convolution of the benchmarks: seed 004's seven nested Python loops.

Untraced forward and backward, one Python iteration per multiply-add, in seed 004's
loop orders: forward n, f, i, j, c, k, l; dw n, f, i, j, k, l, c; dx (its own loop
nest) n, i, j, k, l, f, c; db as one sum. ``bench/core.py`` and ``bench/trace.py``
compare against it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["naive_forward_backward"]


def naive_forward_backward(x, w, b, dout, stride, pad):
    """out, dx, dw, db of a 2-D convolution with bias, square stride, symmetric padding.

    x: (N, C, H, W), w: (F, C, KH, KW), b: (F,), dout: (N, F, Ho, Wo); ``stride`` and
    ``pad`` ints. Returns out (N, F, Ho, Wo), dx (N, C, H, W), dw (F, C, KH, KW), db (F,).
    """
    N, C, H, W = x.shape
    F, _, KH, KW = w.shape
    Ho = (H + 2 * pad - KH) // stride + 1
    Wo = (W + 2 * pad - KW) // stride + 1
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out = np.zeros((N, F, Ho, Wo))
    for n in range(N):
        for f in range(F):
            for i in range(Ho):
                for j in range(Wo):
                    total = b[f]
                    for c in range(C):
                        for k in range(KH):
                            for l in range(KW):
                                total += xp[n, c, i * stride + k, j * stride + l] * w[f, c, k, l]
                    out[n, f, i, j] = total
    db = np.sum(dout, axis=(0, 2, 3))
    dw = np.zeros_like(w)
    for n in range(N):
        for f in range(F):
            for i in range(Ho):
                for j in range(Wo):
                    for k in range(KH):
                        for l in range(KW):
                            for c in range(C):
                                dw[f, c, k, l] += xp[n, c, i * stride + k, j * stride + l] * dout[n, f, i, j]
    dxp = np.zeros_like(xp)
    for n in range(N):
        for i in range(Ho):
            for j in range(Wo):
                for k in range(KH):
                    for l in range(KW):
                        for f in range(F):
                            for c in range(C):
                                dxp[n, c, i * stride + k, j * stride + l] += dout[n, f, i, j] * w[f, c, k, l]
    dx = dxp[:, :, pad : pad + H, pad : pad + W] if pad else dxp
    return out, dx, dw, db
