"""PyTorch-style, but dx is scattered with the kernel turned 180° (the full-correlation
formula's rotation, applied to a scatter that needs none)."""

import numpy as np


def pair(value):
    return (value, value) if isinstance(value, int) else tuple(value)


def geometry(x, w, stride, padding, dilation):
    (sh, sw), (ph, pw), (dh, dw) = pair(stride), pair(padding), pair(dilation)
    _, _, H, W = x.shape
    _, _, KH, KW = w.shape
    H_out = (H + 2 * ph - dh * (KH - 1) - 1) // sh + 1
    W_out = (W + 2 * pw - dw * (KW - 1) - 1) // sw + 1
    return (sh, sw), (ph, pw), (dh, dw), H_out, W_out


def tap(k, l, stride, dilation, H_out, W_out):
    """The rows and columns of the padded input that kernel tap (k, l) meets."""
    (sh, sw), (dh, dw) = stride, dilation
    return slice(k * dh, k * dh + sh * (H_out - 1) + 1, sh), slice(l * dw, l * dw + sw * (W_out - 1) + 1, sw)


def conv2d_forward(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """x: (N, C, H, W), w: (F, C/groups, KH, KW), b: (F,) or None -> (N, F, H_out, W_out)."""
    stride, (ph, pw), dilation, H_out, W_out = geometry(x, w, stride, padding, dilation)
    N = x.shape[0]
    F, Cg, KH, KW = w.shape
    Fg = F // groups
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    out = np.zeros((N, F, H_out, W_out))
    for g in range(groups):
        fs, cs = slice(g * Fg, (g + 1) * Fg), slice(g * Cg, (g + 1) * Cg)
        for k in range(KH):
            for l in range(KW):  # noqa: E741 - the kernel's column
                rows, cols = tap(k, l, stride, dilation, H_out, W_out)
                out[:, fs] += np.einsum("nchw,fc->nfhw", xp[:, cs, rows, cols], w[fs, :, k, l])
    if b is not None:
        out += b.reshape(1, F, 1, 1)
    return out


def conv2d_backward(dout, x, w, stride=1, padding=0, dilation=1, groups=1):
    """dout: (N, F, H_out, W_out) -> dx (N, C, H, W), dw (F, C/groups, KH, KW), db (F,)."""
    stride, (ph, pw), dilation, H_out, W_out = geometry(x, w, stride, padding, dilation)
    _, _, H, W = x.shape
    F, Cg, KH, KW = w.shape
    Fg = F // groups
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    dxp = np.zeros(xp.shape)
    dw = np.zeros(w.shape)
    for g in range(groups):
        fs, cs = slice(g * Fg, (g + 1) * Fg), slice(g * Cg, (g + 1) * Cg)
        for k in range(KH):
            for l in range(KW):  # noqa: E741 - the kernel's column
                rows, cols = tap(k, l, stride, dilation, H_out, W_out)
                dxp[:, cs, rows, cols] += np.einsum("nfhw,fc->nchw", dout[:, fs], w[fs, :, -1 - k, -1 - l])  # BUG
                dw[fs, :, k, l] = np.einsum("nfhw,nchw->fc", dout[:, fs], xp[:, cs, rows, cols])
    db = dout.sum(axis=(0, 2, 3))
    dx = dxp[:, :, ph : ph + H, pw : pw + W]
    return dx, dw, db
