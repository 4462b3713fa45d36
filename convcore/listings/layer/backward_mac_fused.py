"""Seed 001's layer, backward pass, one multiply-add at a time, fused: each
multiply-add of the forward pass sends its dz cell back into dW and dX (and db, once
per cell).

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


class Conv2D:
    def backward(self, dLdY):
        """dLdY: (N, H_out, W_out, F) -> dX: (N, H, W, C); self.dW: (KH, KW, C, F),
        self.db: (F,).

        dz = dLdY · f'(z); the multiply-add z[n, i, j, f] += xp[n, r, q, c] * w[k, l,
        c, f] has two factors, so g = dz[n, i, j, f] flows to each times the other; the
        bias was added once per cell, so db[f] gets g once."""
        (x, xp, z), w = self.cache, self.W
        (sh, sw), (top, _, left, _) = self.stride, self.pad
        dout, (KH, KW, C, F) = dLdY, w.shape
        dz = dout if self.activation is None else self.activation.backward(z, dout)  # step: activation grad
        (N, H_out, W_out, _), (dxp, dw, db) = dz.shape, (np.zeros(xp.shape), np.zeros(w.shape), np.zeros(F))
        for n, f, i, j, c, k, l in np.ndindex(N, F, H_out, W_out, C, KH, KW):
            g = dz[n, i, j, f]
            if c == k == l == 0:
                db[f] += g  # step: backward
            dw[k, l, c, f] += xp[n, i * sh + k, j * sw + l, c] * g  # step: backward
            dxp[n, i * sh + k, j * sw + l, c] += w[k, l, c, f] * g  # step: backward
        dx = dxp[:, top : top + x.shape[1], left : left + x.shape[2], :]  # step: crop
        self.dW, self.db = dw, db
        return dx
