"""The plain loops of a transposed 2-D convolution: the one home of the naive
ConvTranspose2d code every transposed mistake (``convcore.mistakes.in_transposed``)
changes one step of, and those loops as the PyTorch-named functions a student writes
(``TransposedCode``; the ``torch-transposed`` convention calls them).

The forward is the scatter: every input cell ``x[n, c, i, j]`` stamps
``x[n, c, i, j] · w[c]`` onto the uncropped output, its tap (k, l) on row
``origin(i) + k·dilation`` and column ``origin(j) + l·dilation`` (``origin(i)`` is
``i·stride``), for the output channels of c's group; the uncropped output has
``out_size + 2·padding`` rows (the stamps, then the output_padding rows no stamp
reaches), ``padding`` rows are cropped from each side and the bias added. The backward
puts dout back on the uncropped output (zeros on the cropped padding) and reads, per
input cell, the area its stamp covered: ``dx[n, c, i, j] = Σ area · w[c]``,
``dw[c] += x[n, c, i, j] · area``; ``db`` sums dout over the batch and the positions.
Its sizes come from dout's shape, as a student's backward reads them.

These loops do not record a trace: the page and the mistakes lab know Conv2d only
(``Convention.on_the_page``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..spec import resolve_pair
from .conventions import Subject

__all__ = ["TransposedCode", "TransposedLoops", "transposed_subject"]


class TransposedLoops:
    """A correct naive ConvTranspose2d, one overridable method per step.

    Parameters
    ----------
    x : (N, C_in, H, W)
    w : (C_in, C_out/groups, KH, KW)
    b : (C_out,) or None
    stride, padding, output_padding, dilation : int or (h, w)
    groups : int dividing C_in
    """

    STEPS = ("out_size", "origin", "forward_kernel")  # the methods a mistake may override

    def __init__(self, x, w, b, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
        self.x, self.w = np.asarray(x, dtype=np.float64), np.asarray(w, dtype=np.float64)
        self.b = None if b is None else np.asarray(b, dtype=np.float64)
        self.stride, self.padding = resolve_pair(stride, "stride"), resolve_pair(padding, "padding")
        self.output_padding = resolve_pair(output_padding, "output_padding")
        self.dilation, self.groups = resolve_pair(dilation, "dilation"), int(groups)

    # -- steps ------------------------------------------------------------------------

    def out_size(self, size: int, kernel: int, axis: int) -> int:
        """The output's rows (``axis`` 0) or columns (1) from the input's ``size`` and the
        kernel's: (size − 1)·stride − 2·padding + dilation·(kernel − 1) + output_padding + 1."""
        s, p, op, d = (v[axis] for v in (self.stride, self.padding, self.output_padding, self.dilation))
        return (size - 1) * s - 2 * p + d * (kernel - 1) + op + 1

    def origin(self, i: int, stride: int) -> int:
        """Row (column) of the uncropped output where input row (column) i's stamp starts."""
        return i * stride

    def forward_kernel(self, c: int) -> np.ndarray:
        """The stamp the forward pass makes per unit of input channel c: w[c],
        (C_out/groups, KH, KW) (the backward reads w[c] as it is)."""
        return self.w[c]

    # -- the passes -------------------------------------------------------------------

    def _area(self, i: int, j: int) -> tuple[slice, slice]:
        """The rows and columns of the uncropped output that input cell (i, j)'s stamp covers."""
        (sh, sw), (dh, dw) = self.stride, self.dilation
        kh, kw = self.w.shape[2:]
        r, q = self.origin(i, sh), self.origin(j, sw)
        return slice(r, r + dh * (kh - 1) + 1, dh), slice(q, q + dw * (kw - 1) + 1, dw)

    def _channels(self, c: int) -> slice:
        """The output channels input channel c stamps onto: those of its group."""
        per_group = self.w.shape[1]
        group = c // (self.x.shape[1] // self.groups)
        return slice(group * per_group, (group + 1) * per_group)

    def _cells(self):
        n, c_in, h, w = self.x.shape
        for i in range(n):
            for c in range(c_in):
                for r in range(h):
                    for q in range(w):
                        yield i, c, r, q

    def forward(self) -> np.ndarray:
        """out: (N, C_out, H_out, W_out)."""
        n, _, h, w = self.x.shape
        kh, kw = self.w.shape[2:]
        ho, wo = self.out_size(h, kh, 0), self.out_size(w, kw, 1)
        (ph, pw), c_out = self.padding, self.w.shape[1] * self.groups
        full = np.zeros((n, c_out, ho + 2 * ph, wo + 2 * pw))
        for i, c, r, q in self._cells():
            rows, cols = self._area(r, q)
            full[i, self._channels(c), rows, cols] += self.x[i, c, r, q] * self.forward_kernel(c)
        out = full[:, :, ph : ph + ho, pw : pw + wo]
        return out + (0.0 if self.b is None else self.b.reshape(1, -1, 1, 1))

    def backward(self, dout: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """dout: (N, C_out, H_out, W_out) -> dx (N, C_in, H, W), dw (C_in, C_out/groups,
        KH, KW), db (C_out,)."""
        dout = np.asarray(dout, dtype=np.float64)
        n, c_out, ho, wo = dout.shape
        ph, pw = self.padding
        full = np.zeros((n, c_out, ho + 2 * ph, wo + 2 * pw))
        full[:, :, ph : ph + ho, pw : pw + wo] = dout
        dx, dw = np.zeros_like(self.x), np.zeros_like(self.w)
        for i, c, r, q in self._cells():
            rows, cols = self._area(r, q)
            area = full[i, self._channels(c), rows, cols]
            dx[i, c, r, q] = np.sum(area * self.w[c])
            dw[c] += self.x[i, c, r, q] * area
        return dx, dw, dout.sum(axis=(0, 2, 3))


class TransposedCode:
    """PyTorch-named ``conv_transpose2d_forward`` / ``conv_transpose2d_backward``
    computed by ``loops`` (TransposedLoops or a mistake's subclass)."""

    def __init__(self, loops: type[TransposedLoops]):
        self.loops = loops

    def conv_transpose2d_forward(self, x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
        """x: (N, C_in, H, W), w: (C_in, C_out/groups, KH, KW), b: (C_out,) or None ->
        out: (N, C_out, H_out, W_out)."""
        return self.loops(x, w, b, stride, padding, output_padding, groups, dilation).forward()

    def conv_transpose2d_backward(
        self, dout, x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
    ):
        """dout: (N, C_out, H_out, W_out), x: (N, C_in, H, W), w: (C_in, C_out/groups, KH,
        KW) -> dx, dw, db."""
        return self.loops(x, w, b, stride, padding, output_padding, groups, dilation).backward(dout)


def transposed_subject(loops: type[TransposedLoops]) -> Subject:
    """``loops`` as the functions the grader calls."""
    code = TransposedCode(loops)
    return Subject(forward=code.conv_transpose2d_forward, backward=code.conv_transpose2d_backward)
