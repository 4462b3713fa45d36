"""Seed 001's layer, forward pass, one multiply-add at a time.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


class Conv2D:
    def forward(self, X):
        """X: (N, H, W, C) -> out: (N, H_out, W_out, F), with self.W: (KH, KW, C, F).

        Seven loops: output cell (n, f, i, j), then channel c and kernel cell (k, l);
        each multiply-add adds one input cell times one weight, the first one of a
        cell also its filter's bias; out is the activation of z."""
        x, w, b = X, self.W, self.b
        (sh, sw), (top, bottom, left, right) = self.stride, self.pad
        xp = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)))  # step: pad
        (KH, KW, C, F), N = w.shape, x.shape[0]
        H_out, W_out = 1 + (xp.shape[1] - KH) // sh, 1 + (xp.shape[2] - KW) // sw
        z = np.zeros((N, H_out, W_out, F))
        for n, f, i, j, c, k, l in np.ndindex(N, F, H_out, W_out, C, KH, KW):
            bias = b[f] if c == k == l == 0 else 0.0
            z[n, i, j, f] += xp[n, i * sh + k, j * sw + l, c] * w[k, l, c, f] + bias  # step: forward
        out = z if self.activation is None else self.activation.forward(z)  # step: activation
        self.cache = (x, xp, z)
        return out
