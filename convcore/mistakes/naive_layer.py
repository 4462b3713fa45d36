"""A naive NHWC conv layer in seed 001's convention, and the mistakes of its variants.

``LayerConv`` is a correct loop implementation of the layer class (``forward(X)``,
``backward(dLdY)``, ``parameters``, ``gradients``) with one method per step: output
rows and columns, the gradient through the activation, the input gradient, the crop.
Each mistake is a subclass that replaces exactly one step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..activations import get_activation
from ..compat.layer import pad2d
from .case import Case
from .catalogue import Condition, Mistake, register, where_windows_read_x
from .conventions import Subject
from .layer_conditions import backward_raises, dz_conditions, size_conditions, sizes_differ

__all__ = ["LayerConv"]

SEED_001 = "001_407a2acd4b9f5102.txt (NHWC Conv2D layer variants)"
ELSEWHERE = "common in public course code (issue 12's list of mistakes found elsewhere)"


class LayerConv:
    """A correct NHWC conv layer followed by an activation.

    Parameters: ``W: (KH, KW, C, F)``, ``b: (1, F)``; ``forward(X: (N, H, W, C)) -> Y:
    (N, Ho, Wo, F)``; ``backward(dLdY: (N, Ho, Wo, F)) -> dX: (N, H, W, C)`` and
    ``gradients = {"W": (KH, KW, C, F), "b": (1, F)}``.
    """

    def __init__(
        self, n_out: int, kernel_shape: Sequence[int], stride: int = 1, pad: Any = 0, activation: Any = "identity"
    ):
        self.n_out, self.kernel_shape, self.stride, self.pad = n_out, tuple(kernel_shape), stride, pad
        self.activation = get_activation(activation)
        self.n_in = None
        self.parameters: dict[str, Any] = {"W": None, "b": None}
        self.gradients: dict[str, Any] = {"W": None, "b": None}
        self.cache: dict[str, Any] = {}

    # -- steps ------------------------------------------------------------------------

    def out_rows(self, in_rows: int, kh: int, kw: int, p: tuple) -> int:
        """Output rows from the input rows, the kernel and p = (top, bottom, left, right)."""
        return 1 + (in_rows + p[0] + p[1] - kh) // self.stride

    def out_cols(self, in_cols: int, kh: int, kw: int, p: tuple) -> int:
        """Output columns from the input columns, the kernel and p."""
        return 1 + (in_cols + p[2] + p[3] - kw) // self.stride

    def activation_gradient(self, Z: np.ndarray, Y: np.ndarray, dLdY: np.ndarray) -> np.ndarray:
        """dL/dZ = dL/dY · f'(Z); Z, Y = f(Z) and dL/dY: (N, Ho, Wo, F)."""
        return self.activation.backward(Z, dLdY)

    def input_gradient(self, dZ: np.ndarray, W: np.ndarray, padded_shape: tuple, rows: int, cols: int) -> np.ndarray:
        """dXp: (N, Hp, Wp, C), each of the rows × cols windows sending W · dZ back;
        dZ: (N, Ho, Wo, F), W: (KH, KW, C, F), padded_shape (N, Hp, Wp, C)."""
        kh, kw = W.shape[:2]
        dXp = np.zeros(padded_shape)
        for n in range(dZ.shape[0]):
            for r in range(rows):
                for c in range(cols):
                    rs, cs = r * self.stride, c * self.stride
                    dXp[n, rs : rs + kh, cs : cs + kw, :] += W @ dZ[n, r, c]
        return dXp

    def crop(self, dXp: np.ndarray, p: tuple, in_rows: int, in_cols: int) -> np.ndarray:
        """dXp: (N, Hp, Wp, C) -> dX: (N, rows, cols, C)."""
        return dXp[:, p[0] : p[0] + in_rows, p[2] : p[2] + in_cols, :]

    # -- the layer --------------------------------------------------------------------

    def forward(self, X: np.ndarray) -> np.ndarray:
        W, b = self.parameters["W"], self.parameters["b"]
        kh, kw, _, n_filters = W.shape
        n_images, in_rows, in_cols, _ = X.shape
        Xp, p = pad2d(X, self.pad, (kh, kw), self.stride)
        rows, cols = self.out_rows(in_rows, kh, kw, p), self.out_cols(in_cols, kh, kw, p)
        Z = np.zeros((n_images, rows, cols, n_filters))
        for n in range(n_images):
            for r in range(rows):
                for c in range(cols):
                    rs, cs = r * self.stride, c * self.stride
                    window = Xp[n, rs : rs + kh, cs : cs + kw, :]
                    for f in range(n_filters):
                        Z[n, r, c, f] = np.sum(window * W[:, :, :, f]) + b[0, f]
        Y = self.activation(Z)
        self.cache = {"X": X, "Z": Z, "Y": Y}
        return Y

    def backward(self, dLdY: np.ndarray) -> np.ndarray:
        X, Z, Y = self.cache["X"], self.cache["Z"], self.cache["Y"]
        W = self.parameters["W"]
        kh, kw = W.shape[:2]
        n_images, in_rows, in_cols, _ = X.shape
        Xp, p = pad2d(X, self.pad, (kh, kw), self.stride)
        rows, cols = self.out_rows(in_rows, kh, kw, p), self.out_cols(in_cols, kh, kw, p)
        dZ = self.activation_gradient(Z, Y, dLdY)
        dW = np.zeros_like(W)
        for n in range(n_images):
            for r in range(rows):
                for c in range(cols):
                    rs, cs = r * self.stride, c * self.stride
                    dW += Xp[n, rs : rs + kh, cs : cs + kw, :, None] * dZ[n, r, c]
        dXp = self.input_gradient(dZ, W, Xp.shape, rows, cols)
        self.gradients = {"W": dW, "b": dZ.sum(axis=(0, 1, 2)).reshape(1, -1)}
        return self.crop(dXp, p, in_rows, in_cols)


def _mistake(cls: type, **entry: Any) -> type:
    register(Mistake(convention="layer", implementation=Subject(layer=cls), **entry))
    return cls


# -- the mistakes -------------------------------------------------------------------


class InputSizeLoops(LayerConv):
    def out_rows(self, in_rows, kh, kw, p):
        return in_rows  # the mistake: loops over the input's rows

    def out_cols(self, in_cols, kh, kw, p):
        return in_cols  # ... and its columns


_input_size, _input_size_grad = size_conditions(
    InputSizeLoops, "when the output is not as large as the input (only 'same' padding with stride 1 hides it)"
)
_mistake(
    InputSizeLoops,
    id="input_size_loops",
    title="Loops over the input size instead of the output size",
    wrong="The loops (and Z) run over the input's rows and columns, which is right only when the output "
    "has the input's size.",
    should="Loop over out_rows = 1 + (rows + top + bottom − KH) // stride (and the columns alike).",
    source=f"seed {SEED_001}: for d1 in range(in_rows) ... Z = np.zeros((n, X.shape[1], X.shape[2], F))",
    conditions={
        "out": _input_size,
        "dx": _input_size_grad,
        "dw": _input_size_grad,
        "db": backward_raises(InputSizeLoops),
    },
    setup=Case(h=2, w=1, kh=2, kw=1),
)


class KernelHeightForWidth(LayerConv):
    def out_cols(self, in_cols, kh, kw, p):
        return 1 + (in_cols + p[2] + p[3] - kh) // self.stride  # the mistake: kh, not kw


_kh_words = (
    "when KH ≠ KW changes the output width: (W + left + right − KH) // stride differs from "
    "(W + left + right − KW) // stride"
)
_kh, _kh_grad = size_conditions(KernelHeightForWidth, _kh_words)
_mistake(
    KernelHeightForWidth,
    id="kernel_height_for_width",
    title="The kernel height used for the width",
    wrong="The output width is computed with the kernel's height: 1 + (cols + pads − KH) // stride.",
    should="Use the kernel's width: 1 + (cols + left + right − KW) // stride.",
    source=f"seed {SEED_001}: out_cols = 1 + (in_cols + p[0] + p[1] - kernel_height) // self.stride",
    conditions={"out": _kh, "dx": _kh_grad, "dw": _kh_grad, "db": backward_raises(KernelHeightForWidth)},
    setup=Case(h=1, w=2, kh=1, kw=2),
)


class RowPaddingForColumns(LayerConv):
    def out_cols(self, in_cols, kh, kw, p):
        return 1 + (in_cols + p[0] + p[1] - kw) // self.stride  # the mistake: top + bottom


_rows_for_cols, _rows_for_cols_grad = size_conditions(
    RowPaddingForColumns, "when top + bottom ≠ left + right changes the output width"
)
_mistake(
    RowPaddingForColumns,
    id="row_padding_for_columns",
    title="The row padding used for the columns",
    wrong="The output width adds the top and bottom padding p[0] + p[1] instead of the left and right.",
    should="Use p[2] + p[3] for the columns.",
    source=f"seed {SEED_001}: out_cols = 1 + (in_cols + p[0] + p[1] - kernel_height) // self.stride",
    conditions={
        "out": _rows_for_cols,
        "dx": _rows_for_cols_grad,
        "dw": _rows_for_cols_grad,
        "db": backward_raises(RowPaddingForColumns),
    },
    setup=Case(h=1, w=1, kh=1, kw=1, padding=(1, 0, 0, 0)),
)


class CropBottomPlusRows(LayerConv):
    def crop(self, dXp, p, in_rows, in_cols):
        return dXp[:, p[0] : p[1] + in_rows, p[2] : p[3] + in_cols, :]  # the mistake: p[1], p[3] as the ends' base


_mistake(
    CropBottomPlusRows,
    id="crop_p0_p1_plus_rows",
    title="The crop p[0]:p[1] + rows",
    wrong="dX is cropped from p[0] to p[1] + rows (and p[2] to p[3] + cols): the wrong size when the "
    "padding is not symmetric.",
    should="Crop p[0]:p[0] + rows and p[2]:p[2] + cols.",
    source=f"seed {SEED_001}: dX = der_new_x[:, p[0]:p[1] + in_rows, p[2]:p[3] + in_cols, :]",
    conditions={
        "dx": Condition(
            lambda c: c.padding[0] != c.padding[1] or c.padding[2] != c.padding[3], "when top ≠ bottom or left ≠ right"
        )
    },
    setup=Case(h=1, w=1, kh=1, kw=1, padding=(1, 0, 0, 0)),
)


class SymmetricFromFourTuple(LayerConv):
    def out_rows(self, in_rows, kh, kw, p):
        _, pad_h, pad_w, _ = p  # the mistake: bottom and left taken as symmetric paddings
        return 1 + (in_rows + 2 * pad_h - kh) // self.stride

    def out_cols(self, in_cols, kh, kw, p):
        _, pad_h, pad_w, _ = p
        return 1 + (in_cols + 2 * pad_w - kw) // self.stride

    def crop(self, dXp, p, in_rows, in_cols):
        _, pad_h, pad_w, _ = p
        return dXp[:, pad_h : pad_h + in_rows, pad_w : pad_w + in_cols, :]


_symmetric_sizes = sizes_differ(SymmetricFromFourTuple)
_mistake(
    SymmetricFromFourTuple,
    id="symmetric_pad_from_4tuple",
    title="Symmetric padding assumed from a 4-tuple",
    wrong="_, padH, padW, _ = p takes the bottom and the left padding as if every side were padded alike.",
    should="Unpack top, bottom, left, right = p and use each where it belongs.",
    source=f"seed {SEED_001}: _, padH, padW, _ = p; Hout = int(1 + (H + 2 * padH - HH) / self.stride)",
    conditions={
        "out": Condition(
            _symmetric_sizes, "when 2·bottom ≠ top + bottom or 2·left ≠ left + right changes the output size"
        ),
        "dx": where_windows_read_x(
            lambda c: _symmetric_sizes(c) or c.padding[0] != c.padding[1],
            "when top ≠ bottom (the crop starts at the bottom padding) or the output size changes",
            gradient=True,
        ),
        "dw": where_windows_read_x(_symmetric_sizes, "when the output size changes", gradient=True),
        "db": backward_raises(SymmetricFromFourTuple),
    },
    setup=Case(h=1, w=1, kh=1, kw=1, padding=(1, 0, 0, 0)),
)


class RotatedKernelNoStride(LayerConv):
    def input_gradient(self, dZ, W, padded_shape, rows, cols):
        kh, kw = W.shape[:2]
        full = np.pad(dZ, ((0, 0), (kh - 1, kh - 1), (kw - 1, kw - 1), (0, 0)))  # the mistake: no zeros between cells
        rotated = W[::-1, ::-1]  # the kernel turned by 180°: (KH, KW, C, F)
        dXp = np.zeros(padded_shape)
        for n in range(dZ.shape[0]):
            for r in range(min(padded_shape[1], full.shape[1] - kh + 1)):
                for c in range(min(padded_shape[2], full.shape[2] - kw + 1)):
                    dXp[n, r, c, :] = np.tensordot(
                        full[n, r : r + kh, c : c + kw, :], rotated, axes=([0, 1, 2], [0, 1, 3])
                    )
        return dXp


def _rot_shows(case: Case) -> bool:
    ho, wo = case.spec.out_hw
    return case.stride[0] > 1 and (ho > 1 or wo > 1)


_mistake(
    RotatedKernelNoStride,
    id="rotated_kernel_ignores_stride",
    title="Rotated-kernel backward that ignores the stride",
    wrong="dX is computed as a full correlation of dZ with the 180°-rotated kernel without first putting "
    "stride − 1 zeros between the cells of dZ.",
    should="Dilate dZ with stride − 1 zeros between its cells (or scatter each window's W · dZ back).",
    source=f"seed {SEED_001}: the np.rot90(..., 2) backward over the un-dilated dLdZ",
    conditions={
        "dx": where_windows_read_x(
            _rot_shows,
            "when the stride is more than 1 and there are two windows or more in a row or column",
            gradient=True,
        )
    },
    setup=Case(h=3, w=1, kh=1, kw=1, stride=(2, 2)),
)


class DerivativeSkipped(LayerConv):
    def activation_gradient(self, Z, Y, dLdY):
        return dLdY  # the mistake: the activation's derivative is left out


_skip_words = "when f'(Z) ≠ 1 somewhere (relu: some Z ≤ 0; tanh: some Z ≠ 0)"
_mistake(
    DerivativeSkipped,
    id="activation_derivative_skipped",
    title="The activation's derivative skipped",
    wrong="backward passes dL/dY straight to the convolution, as if dL/dZ were dL/dY.",
    should="First map it through the activation: dL/dZ = dL/dY · f'(Z).",
    source=ELSEWHERE,
    conditions=dz_conditions(lambda act, z, out: np.ones_like(z), _skip_words),
    setup=Case(h=1, w=1, kh=1, kw=1, activation="tanh"),
)


class DerivativeOfOutput(LayerConv):
    def activation_gradient(self, Z, Y, dLdY):
        return self.activation.backward(Y, dLdY)  # the mistake: f'(Y), not f'(Z)


_out_words = "when f'(Y) ≠ f'(Z) somewhere: tanh (or sigmoid) with some Z ≠ 0; never relu or identity"
_mistake(
    DerivativeOfOutput,
    id="activation_derivative_of_output",
    title="The activation's derivative applied to the output",
    wrong="backward computes f'(Y) at the activation's output Y instead of f'(Z) at its input Z.",
    should="Use the cached pre-activation: dL/dZ = dL/dY · f'(Z).",
    source=ELSEWHERE,
    conditions=dz_conditions(lambda act, z, out: act.derivative(out), _out_words),
    setup=Case(h=1, w=1, kh=1, kw=1, activation="tanh"),
)
