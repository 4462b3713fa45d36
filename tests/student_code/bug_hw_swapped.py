"""The NHWC layer, but its backward adds each window's dX at the columns' slice for the rows
and the rows' for the columns (H and W swapped): the window of (i, j) lands on (j, i)."""

import numpy as np


class Conv2D:
    def __init__(self, n_out, kernel_shape, stride=1, pad=0, activation=None):
        self.n_out, self.kernel_shape, self.stride = n_out, kernel_shape, stride
        self.pad = (pad,) * 4 if isinstance(pad, int) else tuple(pad)
        self.activation = activation
        self.parameters, self.gradients, self.cache, self.n_in = {}, {}, {}, None

    def forward(self, X):
        W, b = self.parameters["W"], self.parameters["b"]
        KH, KW, _, F = W.shape
        top, bottom, left, right = self.pad
        s = self.stride
        Xp = np.pad(X, ((0, 0), (top, bottom), (left, right), (0, 0)))
        N, Hp, Wp, _ = Xp.shape
        H_out, W_out = 1 + (Hp - KH) // s, 1 + (Wp - KW) // s
        Z = np.zeros((N, H_out, W_out, F))
        for i in range(H_out):
            for j in range(W_out):
                window = Xp[:, i * s : i * s + KH, j * s : j * s + KW, :]  # (N, KH, KW, C)
                Z[:, i, j, :] = np.tensordot(window, W, axes=3) + b[0]
        self.cache = {"X": X, "Xp": Xp, "Z": Z}
        return self.activation(Z)

    def backward(self, dLdY):
        X, Xp, Z = self.cache["X"], self.cache["Xp"], self.cache["Z"]
        W = self.parameters["W"]
        KH, KW, _, F = W.shape
        top, _, left, _ = self.pad
        s = self.stride
        dZ = self.activation.backward(Z, dLdY)
        N, H_out, W_out, _ = dZ.shape
        dXp = np.zeros(Xp.shape)
        dW = np.zeros(W.shape)
        for i in range(H_out):
            for j in range(W_out):
                rows, cols = slice(i * s, i * s + KH), slice(j * s, j * s + KW)
                dXp[:, cols, rows, :] += np.einsum("nf,klcf->nklc", dZ[:, i, j, :], W)  # BUG
                dW += np.einsum("nklc,nf->klcf", Xp[:, rows, cols, :], dZ[:, i, j, :])
        self.gradients = {"W": dW, "b": dZ.sum(axis=(0, 1, 2)).reshape(1, -1)}
        return dXp[:, top : top + X.shape[1], left : left + X.shape[2], :]
