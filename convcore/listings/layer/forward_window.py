"""Seed 001's layer, forward pass, one output position (one window) at a time.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


class Conv2D:
    def forward(self, X):
        """X: (N, H, W, C) -> out: (N, H_out, W_out, F), with self.W: (KH, KW, C, F).

        Each cell of z is a window of the padded input times the filter, summed, plus
        the bias; out is the activation of z. np.ndindex runs the loops n, f, i, j as
        nested for loops would, the last one fastest."""
        (sh, sw), (top, bottom, left, right) = self.stride, self.pad
        x, w, b = X, self.W, self.b
        xp = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)))  # step: pad
        (KH, KW, _, F), N = w.shape, x.shape[0]
        H_out, W_out = 1 + (xp.shape[1] - KH) // sh, 1 + (xp.shape[2] - KW) // sw
        z = np.zeros((N, H_out, W_out, F))
        for n, f, i, j in np.ndindex(N, F, H_out, W_out):
            window = xp[n, i * sh : i * sh + KH, j * sw : j * sw + KW, :]
            z[n, i, j, f] = np.sum(window * w[:, :, :, f]) + b[f]  # step: forward
        out = z if self.activation is None else self.activation.forward(z)  # step: activation
        self.cache = (x, xp, z)
        return out
