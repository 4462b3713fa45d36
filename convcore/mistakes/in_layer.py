"""The mistakes of seed 001's NHWC conv layer class and its variants (``forward(X)``,
``backward(dLdY)``, ``parameters``, ``gradients``): each written once, as the plain
loops (``convcore.mistakes.plain_loops.PlainLoops``) with the one step it gets wrong
overridden, and catalogued with when it shows; ``convcore.mistakes.code.layer_code``
makes it a layer class.
"""

from __future__ import annotations

import numpy as np

from .case import Case
from .catalogue import ELSEWHERE, Condition, catalogue_in, where_windows_read_x
from .layer_conditions import backward_raises, dz_conditions, size_mistake_conditions, sizes_differ
from .plain_loops import PlainLoops

__all__ = [
    "CropBottomPlusRows",
    "DerivativeOfOutput",
    "DerivativeSkipped",
    "InputSizeLoops",
    "KernelHeightForWidth",
    "RotatedKernelNoStride",
    "RowPaddingForColumns",
    "SymmetricFromFourTuple",
]

SEED_001 = "001_407a2acd4b9f5102.txt (NHWC Conv2D layer variants)"

_mistake = catalogue_in("layer")


def _cols(spec, pad_sum: int, kernel: int) -> int:
    """Output columns from a padding sum and a kernel extent (the wrong ones the mistakes take)."""
    return 1 + (spec.W + pad_sum - kernel) // spec.stride[0]


# -- the mistakes -------------------------------------------------------------------


class InputSizeLoops(PlainLoops):
    # the output size in the forward and in the backward (the layer counts its positions again)
    listing_change = (
        (
            "H_out, W_out = 1 + (xp.shape[1] - KH) // sh, 1 + (xp.shape[2] - KW) // sw",
            "H_out, W_out = x.shape[1], x.shape[2]",
        ),
        ("1 + (x.shape[1] + top + bottom - KH) // sh", "x.shape[1]"),
        ("1 + (x.shape[2] + left + right - KW) // sw", "x.shape[2]"),
    )

    def out_hw(self):
        return (self.spec.H, self.spec.W)  # the mistake: the input's rows and columns


_mistake(
    InputSizeLoops,
    id="input_size_loops",
    title="Loops over the input size instead of the output size",
    wrong="The loops (and Z) run over the input's rows and columns, which is right only when the output "
    "has the input's size.",
    should="Loop over out_rows = 1 + (rows + top + bottom − KH) // stride (and the columns alike).",
    source=f"seed {SEED_001}: for d1 in range(in_rows) ... Z = np.zeros((n, X.shape[1], X.shape[2], F))",
    conditions=size_mistake_conditions(
        InputSizeLoops, "when the output is not as large as the input (only 'same' padding with stride 1 hides it)"
    ),
    setup=Case(h=2, w=1, kh=2, kw=1),
)


class KernelHeightForWidth(PlainLoops):
    listing_change = (
        ("1 + (xp.shape[2] - KW) // sw", "1 + (xp.shape[2] - KH) // sw"),
        ("left + right - KW) // sw", "left + right - KH) // sw"),
    )

    def out_hw(self):
        top, bottom, left, right = self.spec.padding
        return (self.spec.out_hw[0], _cols(self.spec, left + right, self.spec.KH))


_kh_words = (
    "when KH ≠ KW changes the output width: (W + left + right − KH) // stride differs from "
    "(W + left + right − KW) // stride"
)
_mistake(
    KernelHeightForWidth,
    id="kernel_height_for_width",
    title="The kernel height used for the width",
    wrong="The output width is computed with the kernel's height: 1 + (cols + pads − KH) // stride.",
    should="Use the kernel's width: 1 + (cols + left + right − KW) // stride.",
    source=f"seed {SEED_001}: out_cols = 1 + (in_cols + p[0] + p[1] - kernel_height) // self.stride",
    conditions=size_mistake_conditions(KernelHeightForWidth, _kh_words),
    setup=Case(h=1, w=2, kh=1, kw=2),
)


class RowPaddingForColumns(PlainLoops):
    listing_change = (  # p[0] + p[1] for the columns, in both passes
        ("1 + (xp.shape[2] - KW) // sw", "1 + (x.shape[2] + top + bottom - KW) // sw"),
        ("x.shape[2] + left + right - KW", "x.shape[2] + top + bottom - KW"),
    )

    def out_hw(self):
        top, bottom, left, right = self.spec.padding
        return (self.spec.out_hw[0], _cols(self.spec, top + bottom, self.spec.KW))


_mistake(
    RowPaddingForColumns,
    id="row_padding_for_columns",
    title="The row padding used for the columns",
    wrong="The output width adds the top and bottom padding p[0] + p[1] instead of the left and right.",
    should="Use p[2] + p[3] for the columns.",
    source=f"seed {SEED_001}: out_cols = 1 + (in_cols + p[0] + p[1] - kernel_height) // self.stride",
    conditions=size_mistake_conditions(
        RowPaddingForColumns, "when top + bottom ≠ left + right changes the output width"
    ),
    setup=Case(h=1, w=1, kh=1, kw=1, padding=(1, 0, 0, 0)),
)


class CropBottomPlusRows(PlainLoops):
    listing_change = (
        ("top : top + x.shape[1], left : left + x.shape[2]", "top : bottom + x.shape[1], left : right + x.shape[2]"),
    )

    def crop(self, h, w):
        top, bottom, left, right = self.spec.padding
        return slice(top, bottom + h), slice(left, right + w)


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


class SymmetricFromFourTuple(PlainLoops):
    listing_change = (  # the sizes from 2·bottom and 2·left in both passes, the crop from the bottom padding
        ("1 + (xp.shape[1] - KH) // sh", "1 + (x.shape[1] + 2 * bottom - KH) // sh"),
        ("1 + (xp.shape[2] - KW) // sw", "1 + (x.shape[2] + 2 * left - KW) // sw"),
        ("x.shape[1] + top + bottom - KH", "x.shape[1] + 2 * bottom - KH"),
        ("x.shape[2] + left + right - KW", "x.shape[2] + 2 * left - KW"),
        ("top : top + x.shape[1]", "bottom : bottom + x.shape[1]"),
    )

    def out_hw(self):
        spec, (_, bottom, left, _) = self.spec, self.spec.padding
        s = spec.stride[0]
        return (1 + (spec.H + 2 * bottom - spec.KH) // s, 1 + (spec.W + 2 * left - spec.KW) // s)

    def crop(self, h, w):
        _, bottom, left, _ = self.spec.padding
        return slice(bottom, bottom + h), slice(left, left + w)


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


class RotatedKernelNoStride(PlainLoops):
    dx_by_rotation = True
    # no dX in the loop; after it, dX gathered as the full correlation of dz with the
    # rotated kernel, dz framed by KH − 1 (KW − 1) zeros but with none between its cells
    listing_change = (
        (
            "dxp[n, rows, cols] += np.tensordot(w, dz[n, i, j], axes=1)  # step: backward",
            "# (no dX in this loop: it is gathered below, from the rotated kernel)",
        ),
        (
            "dx = dxp[:, top : top + x.shape[1], left : left + x.shape[2], :]  # step: crop",
            "H, W = x.shape[1], x.shape[2]  # (the gather's loop names its column x)\n"
            "dz_full = np.pad(dz, ((0, 0), (KH - 1, KH - 1), (KW - 1, KW - 1), (0, 0)))  # no zeros between cells\n"
            "w_rot = w[::-1, ::-1]  # each kernel turned 180°\n"
            "for n, y, x in np.ndindex(N, min(xp.shape[1], H_out + KH - 1), min(xp.shape[2], W_out + KW - 1)):\n"
            "    window = dz_full[n, y : y + KH, x : x + KW]  # (KH, KW, F)\n"
            "    dxp[n, y, x] = np.tensordot(window, w_rot, axes=([0, 1, 2], [0, 1, 3]))  # step: dx\n"
            "dx = dxp[:, top : top + H, left : left + W, :]  # step: crop",
        ),
    )

    def full_dz(self, dz):
        """dz: (N, F, Ho, Wo) framed by KH − 1 (KW − 1) zeros."""
        kh, kw = self.spec.KH, self.spec.KW
        return np.pad(dz, ((0, 0), (0, 0), (kh - 1, kh - 1), (kw - 1, kw - 1)))  # no zeros between cells


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


class DerivativeSkipped(PlainLoops):
    listing_change = (("dLdY if self.activation is None else self.activation.backward(z, dLdY)", "dLdY"),)

    dz_words = "dout (f′(z) left out)"

    def dz(self, z, out, dout):
        """z, out, dout: (N, F, Ho, Wo) -> dz: dout itself."""
        return np.array(dout, dtype=np.float64)  # the mistake: f'(z) left out


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


class DerivativeOfOutput(PlainLoops):
    # the layer's output again: f'(out), not f'(z)
    listing_change = (
        ("self.activation.backward(z, dLdY)", "self.activation.backward(self.activation.forward(z), dLdY)"),
    )

    dz_words = "dout·f′(out)"

    def dz(self, z, out, dout):
        """z, out, dout: (N, F, Ho, Wo) -> dz: dout·f'(out)."""
        return self.rc.activation.backward(out, dout)  # the mistake: f'(out), not f'(z)


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
