"""Seed 001's layer, backward pass, one output position (one window) at a time, fused:
each dz cell goes back through its window into db, dW and dX in one loop nest.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


class Conv2D:
    def backward(self, dLdY):
        """dLdY: (N, H_out, W_out, F) -> dX: (N, H, W, C); self.dW: (KH, KW, C, F),
        self.db: (F,).

        dz = dLdY · f'(z); for every output cell, g = dz[n, i, j, f] flows back: into
        db[f], into dW[..., f] (times the window it read) and into the window of dxp
        (times the filter). The gradient landing on the padding is cropped away."""
        (x, xp, z), w = self.cache, self.W
        (sh, sw), (top, _, left, _) = self.stride, self.pad
        dout, (KH, KW, _, F) = dLdY, w.shape
        dz = dout if self.activation is None else self.activation.backward(z, dout)  # step: activation grad
        dxp, dw, db = np.zeros(xp.shape), np.zeros(w.shape), np.zeros(F)
        for n, f, i, j in np.ndindex(dz.shape[0], F, dz.shape[1], dz.shape[2]):
            g = dz[n, i, j, f]
            db[f] += g  # step: backward
            dw[:, :, :, f] += g * xp[n, i * sh : i * sh + KH, j * sw : j * sw + KW, :]  # step: backward
            dxp[n, i * sh : i * sh + KH, j * sw : j * sw + KW, :] += g * w[:, :, :, f]  # step: backward
        dx = dxp[:, top : top + x.shape[1], left : left + x.shape[2], :]  # step: crop
        self.dW, self.db = dw, db
        return dx
