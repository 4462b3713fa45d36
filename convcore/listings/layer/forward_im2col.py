"""Seed 001's layer, forward pass as a matrix product (im2col): each receptive field of
the padded input becomes one column of ``cols``, then each cell of z is one filter (its
channel axis first, flattened) times one column, plus the filter's bias.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


class Conv2D:
    def forward(self, X):
        """X: (N, H, W, C) -> out: (N, H_out, W_out, F), with self.W: (KH, KW, C, F).

        cols: (C * KH * KW, N * H_out * W_out); column p = (n * H_out + i) * W_out + j is
        the window of output position (n, i, j), its rows in the order (c, k, l): the
        window's channel axis first, as in the filters' rows w_rows[f]. out is the
        activation of z; the cache keeps cols for the backward pass. np.ndindex runs
        the loops as nested for loops would, the last one fastest."""
        (sh, sw), (top, bottom, left, right) = self.stride, self.pad
        x, w, b = X, self.W, self.b
        xp = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)))  # step: pad
        (KH, KW, C, F), N = w.shape, x.shape[0]
        H_out, W_out = 1 + (xp.shape[1] - KH) // sh, 1 + (xp.shape[2] - KW) // sw
        cols = np.zeros((C * KH * KW, N * H_out * W_out))
        for n, i, j in np.ndindex(N, H_out, W_out):
            p = (n * H_out + i) * W_out + j
            window = xp[n, i * sh : i * sh + KH, j * sw : j * sw + KW, :]  # (KH, KW, C)
            cols[:, p] = window.transpose(2, 0, 1).ravel()  # step: im2col
        w_rows = w.transpose(3, 2, 0, 1).reshape(F, C * KH * KW)
        z = np.zeros((N, H_out, W_out, F))
        for f, n, i, j in np.ndindex(F, N, H_out, W_out):
            p = (n * H_out + i) * W_out + j
            z[n, i, j, f] = w_rows[f] @ cols[:, p] + b[f]  # step: forward
        out = z if self.activation is None else self.activation.forward(z)  # step: activation
        self.cache = (x, xp, z, cols)
        return out
