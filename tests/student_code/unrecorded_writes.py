"""Correct CS231n passes whose writes go where the recording does not look: each fills an
output buffer by ``out.flat[k] = v``, ``np.put`` or ``np.einsum(..., out=dw)``, and no
recorded write follows. Their results are right; the stage should show them."""

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def padded_windows(x, w, conv_param):
    s, p = conv_param["stride"], conv_param["pad"]
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    return sliding_window_view(xp, w.shape[2:], axis=(2, 3))[:, :, ::s, ::s]  # (N, C, H_out, W_out, HH, WW)


def forward_flat(x, w, b, conv_param):
    windows = padded_windows(x, w, conv_param)
    out = np.zeros((x.shape[0], w.shape[0]) + windows.shape[2:4])
    for k in range(out.size):
        n, f, i, j = np.unravel_index(k, out.shape)
        out.flat[k] = np.sum(windows[n, :, i, j] * w[f]) + b[f]
    return out, (x, w, b, conv_param)


def forward_put(x, w, b, conv_param):
    windows = padded_windows(x, w, conv_param)
    out = np.zeros((x.shape[0], w.shape[0]) + windows.shape[2:4])
    for k in range(out.size):
        n, f, i, j = np.unravel_index(k, out.shape)
        np.put(out, k, np.sum(windows[n, :, i, j] * w[f]) + b[f])
    return out, (x, w, b, conv_param)


def backward_einsum_out(dout, cache):
    x, w, b, conv_param = cache
    s, p = conv_param["stride"], conv_param["pad"]
    H, W = x.shape[2:]
    HH, WW = w.shape[2:]
    H_out, W_out = dout.shape[2:]
    dw = np.zeros(w.shape)
    np.einsum("nchwkl,nfhw->fckl", padded_windows(x, w, conv_param), dout, out=dw)
    dxp = np.zeros((x.shape[0], x.shape[1], H + 2 * p, W + 2 * p))
    for k in range(HH):
        for l in range(WW):  # noqa: E741 - the kernel's column
            dxp[:, :, k : k + s * H_out : s, l : l + s * W_out : s] += np.einsum("nfhw,fc->nchw", dout, w[:, :, k, l])
    return dxp[:, :, p : p + H, p : p + W], dw, dout.sum(axis=(0, 2, 3))
