"""The mistakes students make in CS231n's ``conv_forward_naive(x, w, b, conv_param)`` /
``conv_backward_naive(dout, cache)``: each written once, as the plain loops
(``convcore.mistakes.plain_loops.PlainLoops``) with the one step it gets wrong
overridden, and catalogued with when it shows; ``convcore.mistakes.code.Cs231nCode``
calls it in CS231n's form.
"""

from __future__ import annotations

import numpy as np

from .case import Case
from .catalogue import ELSEWHERE, Condition, catalogue_in, where_windows_read_x
from .geometry import every_window_reads_x, windows_reading_x
from .plain_loops import PlainLoops
from .plain_steps import clamped

__all__ = [
    "AssignDw",
    "AssignDx",
    "BiasNotAdded",
    "ColumnStrideMissing",
    "CropHardCodedOne",
    "DwUnfinished",
    "DxUnfinished",
    "EmptyCrop",
    "KernelHardCodedThree",
    "OutputSizeParentheses",
    "PadHardCodedOne",
    "PadOnlyIfPad",
    "SqueezeOneImage",
    "StrideOneIndexGrid",
]

SEED_000 = "000_308cced3efe7b080.txt (im2col convolution)"
# what was read for the mistakes issue 27 added (cited, not copied)
STARTER = (
    "CS231n assignment 2's starter cs231n/layers.py: conv_backward_naive begins with "
    "`dx, dw, db = None, None, None` above its TODO (as handed in: DameDollaForThree/CS231n-assignment2, "
    "cs231n/layers.py, whose unfinished functions still return the starter's None)"
)

_mistake = catalogue_in("cs231n")


# -- the mistakes -------------------------------------------------------------------


def _pad(case: Case) -> int:
    return case.padding[0]


def _out(case: Case) -> tuple[int, int]:
    return case.spec.out_hw


class PadHardCodedOne(PlainLoops):
    listing_change = (("(pad, pad), (pad, pad)", "(1, 1), (1, 1)"),)  # both passes' np.pad

    def pads(self):
        return (1, 1, 1, 1)  # the mistake: 1, not conv_param['pad']


_pad_not_one = where_windows_read_x(lambda c: _pad(c) != 1, "whenever the padding is not 1")


def _past_pad_one(case: Case) -> bool:
    """A window runs past the input padded by 1, so that the backward pass raises."""
    reach_h, reach_w = case.spec.reached_hw
    return reach_h > case.h + 2 or reach_w > case.w + 2


# dx is built from w · dout alone, so only the buffer's size matters: it is wrong when a
# window or the crop runs past a buffer padded by 1
_mistake(
    PadHardCodedOne,
    id="pad_hardcoded_1",
    title="Padding hard-coded to 1",
    wrong="np.pad pads every input with one zero on each side, whatever conv_param['pad'] says.",
    should="Pad with conv_param['pad'] zeros: np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad))).",
    source=f"seed {SEED_000}: np.pad(img, ((0,0),(0,0),(1,1),(1,1)))",
    conditions={
        "out": _pad_not_one,
        "dw": _pad_not_one,
        "dx": Condition(
            lambda c: _past_pad_one(c) or _pad(c) > 2,
            "when a window or the crop runs past the input padded by 1 "
            "(padding 2 with windows reaching the last padded row, or padding 3 or more)",
        ),
        "db": Condition(
            _past_pad_one, "when a window runs past the input padded by 1, so that conv_backward_naive raises"
        ),
    },
    setup=Case(h=1, w=1, kh=1, kw=1),
)


class StrideOneIndexGrid(PlainLoops):
    listing_change = (("i * s : i * s + HH, j * s : j * s + WW", "i : i + HH, j : j + WW"),)

    def origin(self, i, stride):
        return i  # the mistake: the index grid steps by 1 whatever the stride


def _stride_shows(case: Case) -> bool:
    ho, wo = _out(case)
    return case.stride[0] > 1 and (ho > 1 or wo > 1)


_stride_cond = where_windows_read_x(
    _stride_shows, "when the stride is more than 1 and there are two windows or more in a row or column"
)
_mistake(
    StrideOneIndexGrid,
    id="stride_one_index_grid",
    title="Index grids that assume stride 1",
    wrong="The window of output (i, j) starts at (i, j) on the padded input, as if the stride were 1.",
    should="Start it at (stride·i, stride·j).",
    source=f"seed {SEED_000}: i1 = np.repeat(np.arange(img_h), img_h), with no stride",
    conditions={"out": _stride_cond, "dx": _stride_cond, "dw": _stride_cond},
    setup=Case(h=3, w=1, kh=1, kw=1, stride=(2, 2)),
)


class OutputSizeParentheses(PlainLoops):
    listing_change = (
        ("1 + (x.shape[2] + 2 * pad - HH) // s", "int((x.shape[2] - HH) + (2 * pad) / s) + 1"),
        ("1 + (x.shape[3] + 2 * pad - WW) // s", "int((x.shape[3] - WW) + (2 * pad) / s) + 1"),
    )

    def out_hw(self):
        s, pad = self.spec.stride[0], self.spec.padding[0]
        return (
            int((self.spec.H - self.spec.KH) + (2 * pad) / s) + 1,
            int((self.spec.W - self.spec.KW) + (2 * pad) / s) + 1,
        )


def _parentheses_shows(case: Case) -> bool:
    return OutputSizeParentheses.for_geometry(case.spec, "cs231n").out_hw() != _out(case)


_mistake(
    OutputSizeParentheses,
    id="output_size_parentheses",
    title="Output-size formula with its parentheses wrong",
    wrong="The output size is computed as (H − HH) + 2·pad/stride + 1, dividing only the padding by the stride.",
    should="Use 1 + (H + 2·pad − HH) // stride.",
    source=f"seed {SEED_000}: int((img_h-ker_h)+(2*pad)/stride) +1",
    conditions={
        "out": Condition(
            _parentheses_shows,
            "when int((H − HH) + 2·pad/stride) + 1 differs from "
            "(H + 2·pad − HH) // stride + 1 for the rows or the columns (stride > 1)",
        )
    },
    setup=Case(h=2, w=1, kh=1, kw=1, stride=(2, 2)),
)


class SqueezeOneImage(PlainLoops):
    listing_change = (  # image 0 only, its padded input squeezed to 2-D, channel 0 of the filter
        ("np.ndindex(N, F, H_out, W_out)", "np.ndindex(1, F, H_out, W_out)"),
        ("window = xp[n, :, ", "window = xp.squeeze()["),
        ("window * w[f]", "window * w[f, 0]"),
    )

    def images(self):
        return range(1)  # out[0, f, i, j]: only image 0 is written

    def forward_window(self, xp, n, f, r, c):
        """xp: (N, C, Hp, Wp) squeezed to (Hp, Wp) (when N = C = 1) -> its Box and cells (KH, KW)."""
        kh, kw = self.spec.KH, self.spec.KW
        cells = xp.squeeze()[r : r + kh, c : c + kw]  # raises when fewer than two axes are left
        kept = [axis for axis in range(4) if xp.shape[axis] != 1]
        start, stop = [0] * 4, list(xp.shape)
        for axis, sl in zip(kept[:2], (slice(r, r + kh), slice(c, c + kw))):
            start[axis], stop[axis], _ = clamped(sl, xp.shape[axis])
        return tuple(start), tuple(stop), (1, 1, 1, 1), cells

    def kernel(self, w, f):
        """w: (F, C, HH, WW) -> channel 0 of filter f: (HH, WW)."""
        return w[f, 0]

    def kernel_words(self, f):
        return f"w[{f},0]"


def _squeeze_hides(case: Case) -> bool:
    hp, wp = case.spec.padded_hw
    return case.n == 1 and case.c == 1 and hp > 1 and wp > 1


def _squeeze_shows(case: Case) -> bool:
    # image 1 is never written (its outputs stay 0 instead of holding at least the bias);
    # a padded input one cell high or wide raises IndexError; the other channels are
    # read in the wrong places, which a window over padding alone can hide
    hp, wp = case.spec.padded_hw
    return case.n > 1 or hp == 1 or wp == 1 or (case.c > 1 and every_window_reads_x(case))


_mistake(
    SqueezeOneImage,
    id="squeeze_one_image",
    title=".squeeze() breaks batch and channels > 1",
    wrong="The padded input is .squeeze()d to one 2-D image, so a batch of more than one image or more "
    "than one channel (or a padded input one cell high or wide) is read wrongly or raises.",
    should="Keep the (N, C, H, W) axes and loop over the images and channels.",
    source=f"seed {SEED_000}: pad_img[:,:,self.i,self.j].squeeze()",
    conditions={
        "out": Condition(
            _squeeze_shows,
            "when N > 1, or the padded input is one row or one column, or "
            "C > 1 (exact when every window reads some cell of x)",
            hides=_squeeze_hides,
        )
    },
    setup=Case(h=1, w=1, kh=1, kw=1),
)


class BiasNotAdded(PlainLoops):
    listing_change = ((") + b[f]  # step", ")  # step"),)

    def bias(self, b, f):
        return 0.0  # the mistake: + b[f] forgotten

    def bias_words(self, f):
        return ""


_mistake(
    BiasNotAdded,
    id="bias_not_added",
    title="Bias computed in db but never added",
    wrong="The forward pass leaves out + b[f], although the backward pass computes db.",
    should="Add b[f] to every output of filter f.",
    source=f"seed {SEED_000}: the forward returns weights.T @ cols with no bias",
    conditions={"out": Condition(lambda c: bool(np.any(c.arrays.b != 0)), "whenever the bias is not zero")},
    setup=Case(h=1, w=1, kh=1, kw=1),
)


class EmptyCrop(PlainLoops):
    listing_change = (("pad : pad + x.shape[2], pad : pad + x.shape[3]", "pad:-pad, pad:-pad"),)

    def crop(self, h, w):
        pad = self.spec.padding[0]
        return slice(pad, -pad), slice(pad, -pad)  # the mistake: empty when pad == 0


_mistake(
    EmptyCrop,
    id="empty_crop",
    title="The crop [pad:-pad] is empty when the padding is 0",
    wrong="dx is cropped as dxp[:, :, pad:-pad, pad:-pad], which is an empty array when pad is 0 (-0 is 0).",
    should="Crop dxp[:, :, pad:pad + H, pad:pad + W] (or skip the crop when pad is 0, as seed 004 does).",
    source=f"seed {SEED_000}: padded[:,:,self.pad:-self.pad, self.pad:-self.pad]; also seed 001",
    conditions={"dx": Condition(lambda c: _pad(c) == 0, "when the padding is 0")},
    setup=Case(h=1, w=1, kh=1, kw=1),
)


class CropHardCodedOne(PlainLoops):
    listing_change = (("pad : pad + x.shape[2], pad : pad + x.shape[3]", "1:-1, 1:-1"),)

    def crop(self, h, w):
        return slice(1, -1), slice(1, -1)  # the mistake: one cell, whatever the padding


_mistake(
    CropHardCodedOne,
    id="crop_hardcoded_1",
    title="The crop hard-coded to one cell: [1:-1]",
    wrong="dx is cropped as dxp[:, :, 1:-1, 1:-1], right for padding 1 only (empty for padding 0, too big for 2).",
    should="Crop by the padding: dxp[:, :, pad:pad + H, pad:pad + W].",
    source="common in student code: the crop written for the assignment's pad = 1 and never generalised",
    conditions={"dx": Condition(lambda c: _pad(c) != 1, "whenever the padding is not 1")},
    setup=Case(h=1, w=1, kh=1, kw=1),
)


class PadOnlyIfPad(PlainLoops):
    listing_change = (("(pad, pad), (pad, pad)))", "(pad, pad), (pad, pad))) if pad else xp"),)  # no else: unbound

    def pads(self):
        if self.spec.padding[0] == 0:
            raise UnboundLocalError("cannot access local variable 'xp' where it is not associated with a value")
        return tuple(self.spec.padding)


_no_pad = Condition(lambda c: _pad(c) == 0, "when the padding is 0 (UnboundLocalError)")
_mistake(
    PadOnlyIfPad,
    id="pad_only_if_pad",
    title="The padded input defined only inside if pad:",
    wrong="x_pad is assigned inside `if pad:`, so with padding 0 the code reads a variable never set "
    "(UnboundLocalError), in the forward and the backward pass.",
    should="Pad unconditionally (np.pad with 0 is a copy), or set x_pad = x in an else branch.",
    source="common in student code: `if pad > 0: x_pad = np.pad(...)` with no else",
    conditions={"out": _no_pad, "dx": _no_pad, "dw": _no_pad, "db": _no_pad},
    setup=Case(h=1, w=1, kh=1, kw=1),
)


class AssignDx(PlainLoops):
    listing_change = (("] += np.tensordot(", "] = np.tensordot("),)  # the mistake: = instead of +=
    assign_dx = True


def _windows_overlap(case: Case) -> bool:
    ho, wo = _out(case)
    s = case.stride[0]
    return (ho > 1 and case.kh > s) or (wo > 1 and case.kw > s)


_mistake(
    AssignDx,
    id="assign_dx",
    title="dx written with = instead of +=",
    wrong="Each window's gradient is assigned to dx, so where windows overlap the last one overwrites the others.",
    should="Accumulate: dx[window] += w · dout[n, f, i, j].",
    source=ELSEWHERE,
    conditions={
        "dx": where_windows_read_x(
            _windows_overlap,
            "when windows overlap: two or more windows in a row (column) and a kernel taller (wider) than the stride",
        )
    },
    setup=Case(h=3, w=1, kh=2, kw=1),
)


class AssignDw(PlainLoops):
    listing_change = (("dw[f] += ", "dw[f] = "),)  # the mistake: = instead of +=
    assign_dw = True


_mistake(
    AssignDw,
    id="assign_dw",
    title="dw written with = instead of +=",
    wrong="Each window's contribution is assigned to dw[f], so only the last image and window count.",
    should="Accumulate over every image and window: dw[f] += window · dout[n, f, i, j].",
    source=ELSEWHERE,
    conditions={
        "dw": where_windows_read_x(
            lambda c: c.n * _out(c)[0] * _out(c)[1] > 1, "when there is more than one window in all (N·H'·W' > 1)"
        )
    },
    setup=Case(h=2, w=1, kh=1, kw=1),
)


class KernelHardCodedThree(PlainLoops):
    listing_change = (("window * w[f]", "window * np.stack([w[f, c].reshape(3, 3) for c in range(w.shape[1])])"),)

    def kernel(self, w, f):
        """w: (F, C, HH, WW) -> filter f as the code reshapes it, channel by channel: (C, 3, 3)."""
        return np.stack([w[f, c].reshape(3, 3) for c in range(w.shape[1])])  # the mistake: 3×3 whatever HH, WW

    def kernel_words(self, f):
        return f"w[{f},c].reshape(3, 3)"


_mistake(
    KernelHardCodedThree,
    id="kernel_hardcoded_3",
    title="The kernel size hard-coded to 3×3",
    wrong="Each channel of the filter is reshaped to (3, 3), so any kernel but 3×3 raises ValueError "
    "(cannot reshape, or cannot broadcast with the window).",
    should="Use the kernel's own size: HH, WW = w.shape[2:], and multiply the window by w[f] as it is.",
    source="issue 27's real CS231n submissions: `ValueError: cannot reshape array of size 1 into shape (3,3)` "
    "on the 1×1 case (the assignment's own check uses 3×3 filters)",
    conditions={
        "out": Condition(
            lambda c: (c.kh, c.kw) != (3, 3), "whenever the kernel is not 3×3 (ValueError in conv_forward_naive)"
        )
    },
    setup=Case(h=1, w=1, kh=1, kw=1),
)


class ColumnStrideMissing(PlainLoops):
    listing_change = (("j * s : j * s + WW", "j : j + WW"),)

    def column_origin(self, j, stride):
        return j  # the mistake: x_pad[..., i*stride:i*stride+HH, j:j+WW], the columns step by 1


_columns_stride = where_windows_read_x(
    lambda c: c.stride[1] > 1 and _out(c)[1] > 1,
    "when the stride is more than 1 and there are two windows or more in a row",
)
_mistake(
    ColumnStrideMissing,
    id="column_stride_missing",
    title="The stride applied to the rows only",
    wrong="The window of output (i, j) is x_pad[..., i*stride:i*stride+HH, j:j+WW]: the rows step by the stride, "
    "the columns by 1.",
    should="Stride both axes: x_pad[..., i*stride:i*stride+HH, j*stride:j*stride+WW].",
    source="the window slice of a naive CS231n layer strides both axes (as in Clarence-G/learngit, "
    "cs231n/assignment2/conv1.py); written from the rows' slice, the columns' stride is dropped",
    conditions={"out": _columns_stride, "dx": _columns_stride, "dw": _columns_stride},
    setup=Case(h=1, w=3, kh=1, kw=1, stride=(2, 2)),
)


class DxUnfinished(PlainLoops):
    listing_change = (
        (
            "dxp[n, :, i * s : i * s + HH, j * s : j * s + WW] += np.tensordot(dout[n, :, i, j], w, axes=1)  # step: backward",
            "pass  # TODO: dx",
        ),
    )
    unwritten = ("dx",)  # the mistake: dx = np.zeros_like(x), and the loop that fills it never written


def _some_window_reads_x(case: Case) -> bool:
    """Some window covers a cell of x: its gradient is then not zero (in general position)."""
    return bool(np.any(windows_reading_x(case)))


_mistake(
    DxUnfinished,
    id="dx_unfinished",
    title="dx returned unfinished: all zeros",
    wrong="dx is allocated as zeros and returned, but the loop that adds w · dout into it was never written.",
    should="In the loop over n, i, j (and f), add w[f] · dout[n, f, i, j] into the window of dx_pad, then crop it.",
    source=f"{STARTER}; dx = np.zeros_like(x) written, the dx part of the TODO left",
    conditions={
        "dx": Condition(_some_window_reads_x, "whenever a window reads a cell of x (that cell's gradient is not 0)")
    },
    setup=Case(h=1, w=1, kh=1, kw=1),
)


class DwUnfinished(PlainLoops):
    listing_change = (
        ("dxp, dw = np.zeros(xp.shape), np.zeros(w.shape)", "dxp, dw = np.zeros(xp.shape), None"),
        ("dw[f] += xp[n, :, i * s : i * s + HH, j * s : j * s + WW] * dout[n, f, i, j]  # step: backward", "pass"),
    )
    unwritten = ("dw",)  # the mistake: the dw loop never written ...
    left_none = ("dw",)  # ... and dw left as the starter's None


_mistake(
    DwUnfinished,
    id="dw_unfinished",
    title="dw returned unfinished: None",
    wrong="dw is returned as the starter code's None: the loop that accumulates window · dout into it was "
    "never written.",
    should="Set dw = np.zeros_like(w) and, in the loop over n, f, i, j, add window · dout[n, f, i, j] to dw[f].",
    source=f"{STARTER}; dx and db written, dw left as None",
    conditions={"dw": Condition(lambda c: True, "always (dw is None)")},
    setup=Case(h=1, w=1, kh=1, kw=1),
)
