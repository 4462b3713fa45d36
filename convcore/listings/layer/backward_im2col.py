"""Seed 001's layer, backward pass as matrix products (im2col): db sums dz, dW is dz (as
an (F, N * H_out * W_out) matrix) times cols transposed, dcols is W transposed times
dz, and col2im adds each column of dcols back into the window it came from.

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


class Conv2D:
    def backward(self, dLdY):
        """dLdY: (N, H_out, W_out, F) -> dX: (N, H, W, C); self.dW: (KH, KW, C, F),
        self.db: (F,).

        dz = dLdY · f'(z). Row r = (c * KH + k) * KW + l of cols and dcols is the tap
        (c, k, l) of every window, column p = (n * H_out + i) * W_out + j the window of
        (n, i, j). Windows that overlap add up in dxp; the gradient landing on the
        padding is cropped away."""
        (x, xp, z, cols), w = self.cache, self.W
        (sh, sw), (top, _, left, _) = self.stride, self.pad
        dout, (KH, KW, C, F) = dLdY, w.shape
        dz = dout if self.activation is None else self.activation.backward(z, dout)  # step: activation grad
        N, H_out, W_out, _ = dz.shape
        db, dw = np.zeros(F), np.zeros(w.shape)
        for f in range(F):
            db[f] = np.sum(dz[..., f])  # step: db
        for f, c, k, l in np.ndindex(F, C, KH, KW):
            r = (c * KH + k) * KW + l
            dw[k, l, c, f] = dz[..., f].ravel() @ cols[r]  # step: dw
        dcols = np.zeros(cols.shape)
        for c, k, l in np.ndindex(C, KH, KW):
            r = (c * KH + k) * KW + l
            for n, i, j in np.ndindex(N, H_out, W_out):
                p = (n * H_out + i) * W_out + j
                dcols[r, p] = w[k, l, c] @ dz[n, i, j]  # step: dcols
        dxp = np.zeros(xp.shape)
        for n, i, j in np.ndindex(N, H_out, W_out):
            p = (n * H_out + i) * W_out + j
            block = dcols[:, p].reshape(C, KH, KW).transpose(1, 2, 0)  # (KH, KW, C), as the window
            dxp[n, i * sh : i * sh + KH, j * sw : j * sw + KW, :] += block  # step: col2im
        dx = dxp[:, top : top + x.shape[1], left : left + x.shape[2], :]  # step: crop
        self.dW, self.db = dw, db
        return dx
