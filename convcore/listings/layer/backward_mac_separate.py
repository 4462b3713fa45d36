"""Seed 001's layer, backward pass, one multiply-add at a time, separate: db, then dW,
then dX, each in a loop nest of its own.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


class Conv2D:
    def backward(self, dLdY):
        """dLdY: (N, H_out, W_out, F) -> dX: (N, H, W, C); self.dW: (KH, KW, C, F),
        self.db: (F,).

        dz = dLdY · f'(z); db[f] adds every dz cell of filter f; dW[k, l, c, f] adds
        the input cell that weight multiplied, times dz; dxp adds the weight times dz
        at the input cell. The gradient landing on the padding is cropped away."""
        (x, xp, z), w = self.cache, self.W
        (sh, sw), (top, _, left, _) = self.stride, self.pad
        dout, (KH, KW, C, F) = dLdY, w.shape
        dz = dout if self.activation is None else self.activation.backward(z, dout)  # step: activation grad
        (N, H_out, W_out, _), (dxp, dw, db) = dz.shape, (np.zeros(xp.shape), np.zeros(w.shape), np.zeros(F))
        for n, f, i, j in np.ndindex(N, F, H_out, W_out):
            db[f] += dz[n, i, j, f]  # step: db
        for n, f, i, j, c, k, l in np.ndindex(N, F, H_out, W_out, C, KH, KW):
            dw[k, l, c, f] += xp[n, i * sh + k, j * sw + l, c] * dz[n, i, j, f]  # step: dw
        for n, f, i, j, c, k, l in np.ndindex(N, F, H_out, W_out, C, KH, KW):
            dxp[n, i * sh + k, j * sw + l, c] += w[k, l, c, f] * dz[n, i, j, f]  # step: dx
        dx = dxp[:, top : top + x.shape[1], left : left + x.shape[2], :]  # step: crop
        self.dW, self.db = dw, db
        return dx
