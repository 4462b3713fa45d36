"""Seed 001's layer, backward pass with dX as a transposed convolution: db, dW as the
correlation of the padded input with dz, then dz spread out by the stride and framed
with zeros, the filters turned 180°, and each cell of dxp gathered as one full window.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


class Conv2D:
    def backward(self, dLdY):
        """dLdY: (N, H_out, W_out, F) -> dX: (N, H, W, C); self.dW: (KH, KW, C, F),
        self.db: (F,).

        dz = dLdY · f'(z). dW[k, l, c, f] sums what tap (k, l) saw in every window (rows
        sh apart) times dz. dz_dilated holds dz[n, i, j, f] at (KH - 1 + i * sh,
        KW - 1 + j * sw), zeros elsewhere; dxp[n, y, x, c] is the window of dz_dilated at
        (y, x) times w_rot[:, :, c], summed (the loop names y, x are the cell's row and
        column: x is no longer the input after that loop, so its size is read first).
        The gradient landing on the padding is cropped away at the end."""
        (x, xp, z), w = self.cache, self.W
        (sh, sw), (top, _, left, _) = self.stride, self.pad
        dout, (KH, KW, C, F) = dLdY, w.shape
        dz = dout if self.activation is None else self.activation.backward(z, dout)  # step: activation grad
        (N, H_out, W_out, _), (H, W), (Hp, Wp) = dz.shape, x.shape[1:3], xp.shape[1:3]
        db, dw = np.zeros(F), np.zeros(w.shape)
        for f in range(F):
            db[f] = np.sum(dz[..., f])  # step: db
        for f, c, k, l in np.ndindex(F, C, KH, KW):
            seen = xp[:, k : k + (H_out - 1) * sh + 1 : sh, l : l + (W_out - 1) * sw + 1 : sw, c]
            dw[k, l, c, f] = np.sum(seen * dz[..., f])  # step: dw
        dz_dilated = np.zeros((N, Hp + KH - 1, Wp + KW - 1, F))
        for n, f, i in np.ndindex(N, F, H_out):
            dz_dilated[n, KH - 1 + i * sh, KW - 1 : KW + (W_out - 1) * sw : sw, f] = dz[n, i, :, f]  # step: dilate dz
        w_rot = np.zeros(w.shape)
        for f in range(F):
            w_rot[..., f] = w[::-1, ::-1, :, f]  # step: rotate w
        dxp = np.zeros(xp.shape)
        for n, c, y, x in np.ndindex(N, C, Hp, Wp):
            dxp[n, y, x, c] = np.sum(dz_dilated[n, y : y + KH, x : x + KW] * w_rot[:, :, c])  # step: dx
        dx = dxp[:, top : top + H, left : left + W, :]  # step: crop
        self.dW, self.db = dw, db
        return dx
