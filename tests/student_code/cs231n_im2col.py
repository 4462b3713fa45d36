"""A correct CS231n convolution by im2col: every window a column of one matrix, the
forward and the gradients matrix products, dx put back window by window (col2im)."""

import numpy as np


def im2col(xp, HH, WW, s, H_out, W_out):
    """xp: (N, C, Hp, Wp) -> cols (C·HH·WW, N·H_out·W_out), column n·H_out·W_out + i·W_out + j
    the window of output cell (n, i, j), its rows in (c, k, l) order."""
    N, C = xp.shape[:2]
    cols = np.zeros((C * HH * WW, N * H_out * W_out))
    for i in range(H_out):
        for j in range(W_out):
            window = xp[:, :, i * s : i * s + HH, j * s : j * s + WW]  # (N, C, HH, WW)
            cols[:, i * W_out + j :: H_out * W_out] = window.reshape(N, -1).T
    return cols


def conv_forward_naive(x, w, b, conv_param):
    s, p = conv_param["stride"], conv_param["pad"]
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    H_out = 1 + (H + 2 * p - HH) // s
    W_out = 1 + (W + 2 * p - WW) // s
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    cols = im2col(xp, HH, WW, s, H_out, W_out)
    rows = w.reshape(F, -1) @ cols + b[:, None]  # (F, N·H_out·W_out)
    out = rows.reshape(F, N, H_out, W_out).transpose(1, 0, 2, 3)
    return out, (x, w, b, conv_param, cols)


def conv_backward_naive(dout, cache):
    x, w, b, conv_param, cols = cache
    s, p = conv_param["stride"], conv_param["pad"]
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    _, _, H_out, W_out = dout.shape
    dout_rows = dout.transpose(1, 0, 2, 3).reshape(F, -1)  # (F, N·H_out·W_out), as the forward's rows
    db = dout_rows.sum(axis=1)
    dw = (dout_rows @ cols.T).reshape(w.shape)
    dcols = w.reshape(F, -1).T @ dout_rows  # (C·HH·WW, N·H_out·W_out)
    dxp = np.zeros((N, C, H + 2 * p, W + 2 * p))
    windows = dcols.reshape(C, HH, WW, N, H_out, W_out)  # (col2im) the gradient of each window's cells
    for i in range(H_out):
        for j in range(W_out):
            dxp[:, :, i * s : i * s + HH, j * s : j * s + WW] += windows[..., i, j].transpose(3, 0, 1, 2)
    dx = dxp[:, :, p : p + H, p : p + W]
    return dx, dw, db
