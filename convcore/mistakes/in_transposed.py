"""The mistakes students make in PyTorch-named ``conv_transpose2d_forward`` /
``conv_transpose2d_backward`` (ConvTranspose2d): each written once, as the plain loops
of ``convcore.mistakes.transposed_loops.TransposedLoops`` with the one step it gets
wrong overridden, and catalogued with when it shows (``torch-transposed`` convention).

The lab does not trace them (``catalogue.lab_mistakes``): the page knows Conv2d only.
"""

from __future__ import annotations

from . import layer_conventions as _layers  # noqa: F401  (registers the torch-transposed convention)
from .catalogue import Condition, catalogue_in
from .layer_cases import TransposedCase
from .transposed_loops import TransposedLoops

__all__ = ["KernelNotRotated", "OutputPaddingIgnored", "StrideNotApplied"]

ISSUE = (
    "issue 24's list of transposed-convolution mistakes (the confusions it cites: vdumoulin/conv_arithmetic "
    "#9, #30 and #35, which side is input and which output)"
)

_mistake = catalogue_in("torch-transposed")


class OutputPaddingIgnored(TransposedLoops):
    def out_size(self, size, kernel, axis):
        """The output size without its output_padding."""
        s, p, d = (v[axis] for v in (self.stride, self.padding, self.dilation))
        return (size - 1) * s - 2 * p + d * (kernel - 1) + 1  # the mistake: no + output_padding


_mistake(
    OutputPaddingIgnored,
    id="output_padding_ignored",
    title="The output size computed without output_padding",
    wrong="The forward pass sizes its output as (H − 1)·stride − 2·padding + dilation·(KH − 1) + 1, leaving "
    "out the output_padding rows and columns added below and on the right.",
    should="Add output_padding: H_out = (H − 1)·stride − 2·padding + dilation·(KH − 1) + output_padding + 1 "
    "(those rows get no stamp, only the bias).",
    source=ISSUE,
    conditions={
        "out": Condition(
            lambda c: any(c.output_padding),
            "whenever output_padding is not 0 (the output is too small; where its size without output_padding "
            "would be below 0, this code, which crops the stamps' buffer, returns an empty array, and code "
            "that allocates the output at that size raises ValueError)",
        )
    },
    setup=TransposedCase(h=1, w=1, kh=1, kw=1, stride=(1, 2), output_padding=(0, 1)),
)


class KernelNotRotated(TransposedLoops):
    def forward_kernel(self, c):
        """w[c] turned 180°: the stamps of a correlation with the unrotated kernel."""
        return self.w[c][:, ::-1, ::-1]  # the mistake: the correlation's kernel is not rotated


def _kernel_not_1x1(case: TransposedCase) -> bool:
    return case.kh > 1 or case.kw > 1


_mistake(
    KernelNotRotated,
    id="kernel_not_rotated",
    title="The kernel not rotated in the correlation view",
    wrong="The forward pass correlates the stride-dilated, zero-framed input with w as it is, which stamps "
    "every input cell with the kernel turned by 180°.",
    should="Correlate with the kernel rotated by 180° (w[c, :, ::-1, ::-1]), or stamp x[n, c, i, j]·w[c] "
    "from row i·stride without any rotation.",
    source=ISSUE + "; the correlation view is the one the transposed conv_arithmetic animations draw",
    conditions={
        "out": Condition(
            lambda c: _kernel_not_1x1(c) and not any(c.padding),
            "whenever the kernel is larger than 1×1 (exact without padding; with padding the cropped "
            "rows and columns can hide it, e.g. the centre tap of a 3-tap kernel over a one-cell input)",
            hides=lambda c: not _kernel_not_1x1(c),
        )
    },
    setup=TransposedCase(h=1, w=1, kh=2, kw=1),
)


class StrideNotApplied(TransposedLoops):
    def origin(self, i, stride):
        """Input row i's stamp starts at row i, as if the stride were 1."""
        return i  # the mistake: the stride is left out of the stamp's origin


def _strided_axis(case: TransposedCase) -> bool:
    """A stride of more than 1 on an axis with two input cells or more."""
    return (case.stride[0] > 1 and case.h > 1) or (case.stride[1] > 1 and case.w > 1)


_strided = Condition(
    lambda c: _strided_axis(c) and not any(c.padding),
    "when the stride is more than 1 on an axis with two input cells or more (exact without padding; "
    "with padding the stamps can land in the cropped rows alike)",
    hides=lambda c: not _strided_axis(c),
)
_mistake(
    StrideNotApplied,
    id="stride_not_applied",
    title="Stamps placed at i instead of i·stride",
    wrong="Input cell (i, j) stamps its x·w at row i and column j of the output, as if the stride "
    "were 1, so the stamps crowd into the top left corner and the last rows and columns get none.",
    should="Stamp at row i·stride + k·dilation and column j·stride + l·dilation (and read dout back "
    "there in the backward pass): the stride spaces the stamps on the output, not the input.",
    source=ISSUE,
    conditions={"out": _strided, "dx": _strided, "dw": _strided},
    setup=TransposedCase(h=2, w=1, kh=1, kw=1, stride=(2, 1)),
)
