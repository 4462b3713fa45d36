"""Each catalogued mistake as a change of one step of the plain trace generator
(``convcore.mistakes.plain_trace.PlainLoops``): a wrong parameter in one phase, ``=``
instead of ``+=``, a flipped kernel, a skipped derivative.

These are written apart from the catalogue's implementations (``naive_*.py``), which
are their oracle: on every Case of a mistake's convention, the tensors its trace
writes equal what its implementation returns (``tests/test_mistake_traces.py``).
``TRACED[mistake_id]`` is the subclass; ``CONVENTION_STEPS`` the unchanged loops.
"""

from __future__ import annotations

import numpy as np

from .plain_steps import clamped
from .plain_trace import PlainLoops

__all__ = ["TRACED", "traced_loops"]

TRACED: dict[str, type[PlainLoops]] = {}


def _traces(mistake_id: str):
    def register(cls: type[PlainLoops]) -> type[PlainLoops]:
        TRACED[mistake_id] = cls
        return cls

    return register


def traced_loops(mistake_id: str | None) -> type[PlainLoops]:
    """The loops of ``mistake_id`` (None: the correct ones); KeyError if unknown."""
    return PlainLoops if mistake_id is None else TRACED[mistake_id]


# -- cs231n ---------------------------------------------------------------------------


@_traces("pad_hardcoded_1")
class PadOne(PlainLoops):
    def pads(self):
        return (1, 1, 1, 1)


@_traces("stride_one_index_grid")
class StrideOne(PlainLoops):
    def origin(self, i, stride):
        return i


@_traces("output_size_parentheses")
class SizeParentheses(PlainLoops):
    def out_hw(self):
        s, pad = self.spec.stride[0], self.spec.padding[0]
        return (
            int((self.spec.H - self.spec.KH) + (2 * pad) / s) + 1,
            int((self.spec.W - self.spec.KW) + (2 * pad) / s) + 1,
        )


@_traces("squeeze_one_image")
class Squeezed(PlainLoops):
    def images(self):
        return range(1)  # out[0, f, i, j]: only image 0 is written

    def forward_window(self, xp, n, f, r, c):
        kh, kw = self.spec.KH, self.spec.KW
        cells = xp.squeeze()[r : r + kh, c : c + kw]  # raises when fewer than two axes are left
        kept = [axis for axis in range(4) if xp.shape[axis] != 1]
        start, stop = [0] * 4, list(xp.shape)
        for axis, sl in zip(kept[:2], (slice(r, r + kh), slice(c, c + kw))):
            start[axis], stop[axis], _ = clamped(sl, xp.shape[axis])
        return tuple(start), tuple(stop), (1, 1, 1, 1), cells

    def kernel(self, w, f):
        return w[f, 0]

    def kernel_words(self, f):
        return f"w[{f},0]"


@_traces("bias_not_added")
class NoBias(PlainLoops):
    def bias(self, b, f):
        return 0.0

    def bias_words(self, f):
        return ""


@_traces("empty_crop")
class EmptyCrop(PlainLoops):
    def crop(self, h, w):
        pad = self.spec.padding[0]
        return slice(pad, -pad), slice(pad, -pad)


@_traces("crop_hardcoded_1")
class CropOne(PlainLoops):
    def crop(self, h, w):
        return slice(1, -1), slice(1, -1)


@_traces("pad_only_if_pad")
class PadOnlyIfPad(PlainLoops):
    def pads(self):
        if self.spec.padding[0] == 0:
            raise UnboundLocalError("cannot access local variable 'xp' where it is not associated with a value")
        return tuple(self.spec.padding)


@_traces("assign_dx")
class AssignDx(PlainLoops):
    assign_dx = True


@_traces("assign_dw")
class AssignDw(PlainLoops):
    assign_dw = True


# -- layer ------------------------------------------------------------------------------


def _cols(spec, pad_sum: int, kernel: int) -> int:
    return 1 + (spec.W + pad_sum - kernel) // spec.stride[0]


@_traces("input_size_loops")
class InputSize(PlainLoops):
    def out_hw(self):
        return (self.spec.H, self.spec.W)


@_traces("kernel_height_for_width")
class HeightForWidth(PlainLoops):
    def out_hw(self):
        top, bottom, left, right = self.spec.padding
        return (self.spec.out_hw[0], _cols(self.spec, left + right, self.spec.KH))


@_traces("row_padding_for_columns")
class RowPadForColumns(PlainLoops):
    def out_hw(self):
        top, bottom, left, right = self.spec.padding
        return (self.spec.out_hw[0], _cols(self.spec, top + bottom, self.spec.KW))


@_traces("crop_p0_p1_plus_rows")
class CropFromBottom(PlainLoops):
    def crop(self, h, w):
        top, bottom, left, right = self.spec.padding
        return slice(top, bottom + h), slice(left, right + w)


@_traces("symmetric_pad_from_4tuple")
class SymmetricPad(PlainLoops):
    def out_hw(self):
        spec, (_, bottom, left, _) = self.spec, self.spec.padding
        s = spec.stride[0]
        return (1 + (spec.H + 2 * bottom - spec.KH) // s, 1 + (spec.W + 2 * left - spec.KW) // s)

    def crop(self, h, w):
        _, bottom, left, _ = self.spec.padding
        return slice(bottom, bottom + h), slice(left, left + w)


@_traces("rotated_kernel_ignores_stride")
class RotatedNoStride(PlainLoops):
    dx_by_rotation = True

    def full_dz(self, dz):
        kh, kw = self.spec.KH, self.spec.KW
        return np.pad(dz, ((0, 0), (0, 0), (kh - 1, kh - 1), (kw - 1, kw - 1)))  # no zeros between cells


@_traces("activation_derivative_skipped")
class DerivativeSkipped(PlainLoops):
    dz_words = "dout (f′(z) left out)"

    def dz(self, z, out, dout):
        return np.array(dout, dtype=np.float64)


@_traces("activation_derivative_of_output")
class DerivativeOfOutput(PlainLoops):
    dz_words = "dout·f′(out)"

    def dz(self, z, out, dout):
        return self.rc.activation.backward(out, dout)


# -- torch ------------------------------------------------------------------------------


@_traces("flipped_kernel_forward")
class FlippedKernel(PlainLoops):
    def forward_kernel(self, kernel):
        return kernel[:, ::-1, ::-1]

    def kernel_words(self, f):
        return f"w[{f}] turned 180°"


@_traces("dw_rotated")
class DwRotated(PlainLoops):
    dw_words = " turned 180°"

    def dw_window(self, window):
        return window[:, ::-1, ::-1]


@_traces("db_wrong_axes")
class DbWrongAxes(PlainLoops):
    db_words = "Σ dz over axes 0, 1, 2 (n, f, i)"

    def db(self, dz):
        return dz.sum(axis=(0, 1, 2))


@_traces("db_averaged")
class DbAveraged(PlainLoops):
    db_words = "the mean of dz over n, i, j"

    def db(self, dz):
        return dz.mean(axis=(0, 2, 3))


@_traces("dilation_ignored_backward")
class DilationIgnored(PlainLoops):
    def backward_dilation(self):
        return (1, 1)


@_traces("groups_ignored")
class GroupsIgnored(PlainLoops):
    def channels(self, f):
        return slice(0, self.spec.channels_per_group)
