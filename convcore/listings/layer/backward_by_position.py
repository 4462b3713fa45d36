"""Seed 001's layer, backward pass as the mistakes lab runs it (convcore.mistakes): db
in one sum, then one output position (n, i, j) at a time, every filter at once: the
window of dxp gains what every filter sends back, and each dW[..., f] the window times
its dz cell. The mistakes are this code with a line changed (each mistake's
``listing_change``).

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


class Conv2D:
    def backward(self, dLdY):
        """dLdY: (N, H_out, W_out, F) -> dX: (N, H, W, C); self.dW: (KH, KW, C, F),
        self.db: (F,).

        dz = dLdY · f'(z). The layer counts its output positions again, from the input
        and its padding (as seed 001's backward does). np.tensordot(w, dz[n, i, j],
        axes=1) is Σ_f w[..., f] * dz[n, i, j, f]: what the window of position (i, j)
        sends back to the input, all filters together. The gradient landing on the
        padding is cropped away at the end."""
        (x, xp, z), w = self.cache, self.W
        (sh, sw), (top, bottom, left, right) = self.stride, self.pad
        (KH, KW, _, F), N = w.shape, x.shape[0]
        dz = dLdY if self.activation is None else self.activation.backward(z, dLdY)  # step: activation grad
        db = np.sum(dz, axis=(0, 1, 2))  # step: db
        H_out = 1 + (x.shape[1] + top + bottom - KH) // sh
        W_out = 1 + (x.shape[2] + left + right - KW) // sw
        dxp, dw = np.zeros(xp.shape), np.zeros(w.shape)
        for n, i, j in np.ndindex(N, H_out, W_out):
            rows, cols = slice(i * sh, i * sh + KH), slice(j * sw, j * sw + KW)
            dxp[n, rows, cols] += np.tensordot(w, dz[n, i, j], axes=1)  # step: backward
            for f in range(F):
                dw[:, :, :, f] += xp[n, rows, cols] * dz[n, i, j, f]  # step: backward
        dx = dxp[:, top : top + x.shape[1], left : left + x.shape[2], :]  # step: crop
        self.dW, self.db = dw, db
        return dx
