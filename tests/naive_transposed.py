"""The transposed-convolution mistakes written apart from convcore's loops: the
independent oracle of ``convcore.mistakes.in_transposed`` (whose loops scatter: each
input cell stamps x·w onto the output).

``TransposedCorrelation`` computes a ConvTranspose2d the other way, as the correlation
view: the input with stride − 1 zeros between its cells (``spaced``), framed by
dilation·(K − 1) zeros, correlated with the kernel rotated by 180° (``rotated``) over
the whole uncropped output (its output_padding rows left to the bias, ``out_size``),
then the padding cropped. Its backward
gathers, per input cell, dout on the rows that cell reached (``spaced`` again). Each
mistake is a subclass replacing exactly one of those steps. ``NAIVE_TRANSPOSED`` and
``CORRECT_TRANSPOSED`` are merged into tests/naive_mistakes.py's tables.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from convcore.mistakes import Subject

__all__ = ["CORRECT_TRANSPOSED", "NAIVE_TRANSPOSED", "TransposedCorrelation"]


def _pair(value: Any) -> tuple[int, int]:
    return (int(value), int(value)) if np.ndim(value) == 0 else (int(value[0]), int(value[1]))


class TransposedCorrelation:
    """A correct naive ConvTranspose2d: x (N, C_in, H, W), w (C_in, C_out/groups, KH, KW)."""

    # -- steps ------------------------------------------------------------------------

    def out_size(self, size: int, kernel: int, s: int, p: int, op: int, d: int) -> int:
        return (size - 1) * s - 2 * p + d * (kernel - 1) + op + 1

    def spaced(self, i: int, s: int) -> int:
        """Where input row i sits among the stride-dilated rows."""
        return i * s

    def rotated(self, w: np.ndarray) -> np.ndarray:
        """The kernel the correlation view reads: w turned 180°."""
        return w[:, :, ::-1, ::-1]

    # -- the functions ----------------------------------------------------------------

    def conv_transpose2d_forward(self, x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
        (sh, sw), (ph, pw), (oh, ow), (dh, dw) = (_pair(v) for v in (stride, padding, output_padding, dilation))
        n, c_in, h, wd = x.shape
        per_group, kh, kw = w.shape[1:]
        ho, wo = self.out_size(h, kh, sh, ph, oh, dh), self.out_size(wd, kw, sw, pw, ow, dw)
        fh, fw = dh * (kh - 1), dw * (kw - 1)  # the frame of zeros
        z = np.zeros((n, c_in, (h - 1) * sh + 1 + 2 * fh, (wd - 1) * sw + 1 + 2 * fw))
        for i in range(h):
            for j in range(wd):
                z[:, :, fh + self.spaced(i, sh), fw + self.spaced(j, sw)] = x[:, :, i, j]
        stamped_h, stamped_w = z.shape[2] - fh, z.shape[3] - fw
        wr = self.rotated(w)
        cg = c_in // groups
        full = np.zeros((n, per_group * groups, ho + 2 * ph, wo + 2 * pw))  # the correlation, before the crop
        for o in range(per_group * groups):
            g = o // per_group
            cs = slice(g * cg, (g + 1) * cg)
            for row in range(min(full.shape[2], stamped_h)):  # (the rows below: output_padding, no stamp)
                for col in range(min(full.shape[3], stamped_w)):
                    window = z[:, cs, row : row + fh + 1 : dh, col : col + fw + 1 : dw]
                    full[:, o, row, col] = np.einsum("nckl,ckl->n", window, wr[cs, o - g * per_group])
        out = full[:, :, ph : ph + ho, pw : pw + wo]
        return out if b is None else out + b.reshape(1, -1, 1, 1)

    def conv_transpose2d_backward(
        self, dout, x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
    ):
        (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
        n, c_out, ho, wo = dout.shape
        c_in, per_group, kh, kw = w.shape
        full = np.zeros((n, c_out, ho + 2 * ph, wo + 2 * pw))
        full[:, :, ph : ph + ho, pw : pw + wo] = dout
        dx, dweights = np.zeros(x.shape), np.zeros(w.shape)
        cg = c_in // groups
        for c in range(c_in):
            g = c // cg
            outs = slice(g * per_group, (g + 1) * per_group)
            for i in range(x.shape[2]):
                for j in range(x.shape[3]):
                    r, q = self.spaced(i, sh), self.spaced(j, sw)
                    reached = full[:, outs, r : r + dh * (kh - 1) + 1 : dh, q : q + dw * (kw - 1) + 1 : dw]
                    dx[:, c, i, j] = np.einsum("nokl,okl->n", reached, w[c])
                    dweights[c] += np.einsum("n,nokl->okl", x[:, c, i, j], reached)
        return dx, dweights, dout.sum(axis=(0, 2, 3))


class OutputPaddingIgnored(TransposedCorrelation):
    def out_size(self, size, kernel, s, p, op, d):
        return (size - 1) * s - 2 * p + d * (kernel - 1) + 1  # the mistake: no output_padding


class KernelNotRotated(TransposedCorrelation):
    def rotated(self, w):
        return w  # the mistake: the correlation reads the kernel as it is


class StrideNotApplied(TransposedCorrelation):
    def spaced(self, i, s):
        return i  # the mistake: no zeros between the input's cells (stamps at i, not i·stride)


def _subject(cls: type) -> Subject:
    code = cls()
    return Subject(forward=code.conv_transpose2d_forward, backward=code.conv_transpose2d_backward)


CORRECT_TRANSPOSED = _subject(TransposedCorrelation)
NAIVE_TRANSPOSED = {
    "output_padding_ignored": _subject(OutputPaddingIgnored),
    "kernel_not_rotated": _subject(KernelNotRotated),
    "stride_not_applied": _subject(StrideNotApplied),
}
