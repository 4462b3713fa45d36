"""PyTorch-style backward pass as matrix products (im2col): db sums dout, dw is dout (as
an (F, N * H_out * W_out) matrix) times the group's rows of cols transposed, dcols is
the group's filters transposed times dout, and col2im adds each column of dcols back
into the window it came from.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


def conv2d_backward(dout, x, w, stride=1, padding=0, dilation=1, groups=1):
    """dout: (N, F, H_out, W_out), x: (N, C, H, W), w: (F, C // groups, KH, KW) ->
    dx: (N, C, H, W), dw: (F, C // groups, KH, KW), db: (F,).

    cols is built again from x, as the forward built it (this function gets no cache).
    Row r = (c * KH + k) * KW + l of cols and dcols is the tap (c, k, l) of every
    window, column p = (n * H_out + i) * W_out + j the window of (n, i, j). Windows that
    overlap add up in dxp; the gradient landing on the padding is cropped away."""
    sh, sw = np.broadcast_to(stride, 2)
    top, bottom, left, right = padding if np.size(padding) == 4 else np.repeat(np.broadcast_to(padding, 2), 2)
    dil_h, dil_w = np.broadcast_to(dilation, 2)
    (N, F, H_out, W_out), (_, Cg, KH, KW), C = dout.shape, w.shape, x.shape[1]
    span_h, span_w = dil_h * (KH - 1) + 1, dil_w * (KW - 1) + 1
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))

    def window(n, i, j):
        """The index of the receptive field of output position (n, i, j) in xp."""
        return n, slice(None), slice(i * sh, i * sh + span_h, dil_h), slice(j * sw, j * sw + span_w, dil_w)

    cols = np.zeros((C * KH * KW, N * H_out * W_out))
    for n, i, j in np.ndindex(N, H_out, W_out):
        cols[:, (n * H_out + i) * W_out + j] = xp[window(n, i, j)].ravel()
    db, dw = np.zeros(F), np.zeros(w.shape)
    for f in range(F):
        db[f] = np.sum(dout[:, f])  # step: db
    for f, c, k, l in np.ndindex(F, Cg, KH, KW):
        r = f // (F // groups) * Cg * KH * KW + (c * KH + k) * KW + l
        dw[f, c, k, l] = dout[:, f].ravel() @ cols[r]  # step: dw
    dcols = np.zeros(cols.shape)
    for c, k, l in np.ndindex(C, KH, KW):
        r = (c * KH + k) * KW + l
        f0 = c // Cg * (F // groups)  # the first filter of the channel's group
        for n, i, j in np.ndindex(N, H_out, W_out):
            p = (n * H_out + i) * W_out + j
            dcols[r, p] = w[f0 : f0 + F // groups, c % Cg, k, l] @ dout[n, f0 : f0 + F // groups, i, j]  # step: dcols
    dxp = np.zeros(xp.shape)
    for n, i, j in np.ndindex(N, H_out, W_out):
        p = (n * H_out + i) * W_out + j
        dxp[window(n, i, j)] += dcols[:, p].reshape(C, KH, KW)  # step: col2im
    dx = dxp[:, :, top : top + x.shape[2], left : left + x.shape[3]]  # step: crop
    return dx, dw, db
