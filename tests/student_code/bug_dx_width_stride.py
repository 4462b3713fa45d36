"""The einsum convolution, but each tap's dx slice drops the stride along the width: the
columns l … l + W_out − 1 instead of l, l + s, …"""

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def windows(xp, HH, WW, s):
    """xp: (N, C, Hp, Wp) -> (N, C, H_out, W_out, HH, WW): the window of every output cell."""
    return sliding_window_view(xp, (HH, WW), axis=(2, 3))[:, :, ::s, ::s]


def conv_forward_naive(x, w, b, conv_param):
    s, p = conv_param["stride"], conv_param["pad"]
    HH, WW = w.shape[2:]
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    out = np.einsum("nchwkl,fckl->nfhw", windows(xp, HH, WW, s), w)
    out += b[None, :, None, None]
    return out, (x, w, b, conv_param)


def conv_backward_naive(dout, cache):
    x, w, b, conv_param = cache
    s, p = conv_param["stride"], conv_param["pad"]
    H, W = x.shape[2:]
    HH, WW = w.shape[2:]
    H_out, W_out = dout.shape[2:]
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    db = dout.sum(axis=(0, 2, 3))
    dw = np.einsum("nchwkl,nfhw->fckl", windows(xp, HH, WW, s), dout)
    dxp = np.zeros(xp.shape)
    for k in range(HH):
        for l in range(WW):  # noqa: E741 - the kernel's column
            # tap (k, l) of every window lands on rows k, k + s, … and columns l, l + s, …
            dxp[:, :, k : k + s * H_out : s, l : l + W_out] += np.einsum("nfhw,fc->nchw", dout, w[:, :, k, l])  # BUG
    dx = dxp[:, :, p : p + H, p : p + W]
    return dx, dw, db
