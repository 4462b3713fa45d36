"""Seed 001's layer, backward pass, one output position (one window) at a time,
separate: db, then dW, then dX, each in a loop nest of its own.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


class Conv2D:
    def backward(self, dLdY):
        """dLdY: (N, H_out, W_out, F) -> dX: (N, H, W, C); self.dW: (KH, KW, C, F),
        self.db: (F,).

        dz = dLdY · f'(z); db[f] sums dz over images and positions; dW[..., f] adds
        each window times its dz cell; the window of dxp adds the filter times it. The
        gradient landing on the padding is cropped away at the end."""
        (x, xp, z), w = self.cache, self.W
        (sh, sw), (top, _, left, _) = self.stride, self.pad
        dout, (KH, KW, _, F) = dLdY, w.shape
        dz = dout if self.activation is None else self.activation.backward(z, dout)  # step: activation grad
        (N, H_out, W_out, _), (dxp, dw, db) = dz.shape, (np.zeros(xp.shape), np.zeros(w.shape), np.zeros(F))
        for f in range(F):
            db[f] = np.sum(dz[:, :, :, f])  # step: db
        for n, f, i, j in np.ndindex(N, F, H_out, W_out):
            dw[:, :, :, f] += dz[n, i, j, f] * xp[n, i * sh : i * sh + KH, j * sw : j * sw + KW, :]  # step: dw
        for n, f, i, j in np.ndindex(N, F, H_out, W_out):
            dxp[n, i * sh : i * sh + KH, j * sw : j * sw + KW, :] += dz[n, i, j, f] * w[:, :, :, f]  # step: dx
        dx = dxp[:, top : top + x.shape[1], left : left + x.shape[2], :]  # step: crop
        self.dW, self.db = dw, db
        return dx
