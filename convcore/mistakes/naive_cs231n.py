"""A naive conv layer in CS231n's convention, and the mistakes students make in it.

``Cs231nConv`` is a correct window-at-a-time implementation of
``conv_forward_naive(x, w, b, conv_param)`` / ``conv_backward_naive(dout, cache)``
with one method per step (pad, output size, window origin, window value, the dx and dw
writes, the crop). Each mistake is a subclass that replaces exactly one step, so its
code shows exactly the mistake and nothing else.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .case import Case
from .catalogue import Condition, Mistake, register, where_windows_read_x
from .conventions import Subject
from .geometry import every_window_reads_x

__all__ = ["Cs231nConv"]

SEED_000 = "000_308cced3efe7b080.txt (im2col convolution)"
ELSEWHERE = "common in public course code (issue 12's list of mistakes found elsewhere)"


class Cs231nConv:
    """A correct naive conv layer, CS231n's API, one overridable method per step."""

    # -- steps ------------------------------------------------------------------------

    def pad(self, x: np.ndarray, pad: int) -> np.ndarray:
        """x: (N, C, H, W) -> xp: (N, C, H + 2·pad, W + 2·pad), zeros around."""
        return np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), mode="constant")

    def out_size(self, size: int, kernel: int, pad: int, stride: int) -> int:
        """H' (or W') from H, HH, pad and stride."""
        return (size + 2 * pad - kernel) // stride + 1

    def origin(self, i: int, stride: int) -> int:
        """Row (column) on xp where output row (column) i's window starts."""
        return i * stride

    def window_value(self, window: np.ndarray, kernel: np.ndarray, bias: float) -> float:
        """window, kernel: (C, HH, WW) -> one output value."""
        return np.sum(window * kernel) + bias

    def write_dx(self, dxp: np.ndarray, where: tuple, value: np.ndarray) -> None:
        """dxp: (N, C, Hp, Wp) gets one window's gradient value: (C, HH, WW) at ``where``."""
        dxp[where] += value

    def write_dw(self, dw: np.ndarray, f: int, value: np.ndarray) -> None:
        """dw: (F, C, HH, WW) gets one window's contribution value: (C, HH, WW) to filter f."""
        dw[f] += value

    def crop(self, dxp: np.ndarray, pad: int, h: int, w: int) -> np.ndarray:
        """dxp: (N, C, H + 2·pad, W + 2·pad) -> dx: (N, C, H, W)."""
        return dxp[:, :, pad : pad + h, pad : pad + w]

    # -- the API ----------------------------------------------------------------------

    def conv_forward_naive(self, x: np.ndarray, w: np.ndarray, b: np.ndarray, conv_param: dict) -> tuple:
        """x: (N, C, H, W), w: (F, C, HH, WW), b: (F,) -> out: (N, F, H', W'), cache."""
        s, p = conv_param["stride"], conv_param["pad"]
        n_images, _, h, wd = x.shape
        filters, _, hh, ww = w.shape
        xp = self.pad(x, p)
        ho, wo = self.out_size(h, hh, p, s), self.out_size(wd, ww, p, s)
        out = np.zeros((n_images, filters, ho, wo))
        for n in range(n_images):
            for f in range(filters):
                for i in range(ho):
                    for j in range(wo):
                        r, c = self.origin(i, s), self.origin(j, s)
                        out[n, f, i, j] = self.window_value(xp[n, :, r : r + hh, c : c + ww], w[f], b[f])
        return out, (x, w, b, conv_param)

    def conv_backward_naive(self, dout: np.ndarray, cache: tuple) -> tuple:
        """dout: (N, F, H', W'), cache (x, w, b, conv_param) -> dx, dw, db."""
        x, w, _b, conv_param = cache
        s, p = conv_param["stride"], conv_param["pad"]
        n_images, _, h, wd = x.shape
        filters, _, hh, ww = w.shape
        _, _, ho, wo = dout.shape
        xp = self.pad(x, p)
        dxp, dw = np.zeros_like(xp), np.zeros_like(w)
        db = np.sum(dout, axis=(0, 2, 3))
        for n in range(n_images):
            for i in range(ho):
                for j in range(wo):
                    r, c = self.origin(i, s), self.origin(j, s)
                    window = (n, slice(None), slice(r, r + hh), slice(c, c + ww))
                    self.write_dx(dxp, window, np.tensordot(dout[n, :, i, j], w, axes=1))
                    for f in range(filters):
                        self.write_dw(dw, f, xp[window] * dout[n, f, i, j])
        return self.crop(dxp, p, h, wd), dw, db


def _subject(conv: Cs231nConv) -> Subject:
    return Subject(forward=conv.conv_forward_naive, backward=conv.conv_backward_naive)


def _mistake(cls: type, **entry: Any) -> type:
    register(Mistake(convention="cs231n", implementation=_subject(cls()), **entry))
    return cls


# -- the mistakes -------------------------------------------------------------------


def _pad(case: Case) -> int:
    return case.padding[0]


def _out(case: Case) -> tuple[int, int]:
    return case.spec.out_hw


class PadHardCodedOne(Cs231nConv):
    def pad(self, x, pad):
        return np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="constant")  # the mistake: 1, not pad


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


class StrideOneIndexGrid(Cs231nConv):
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


class OutputSizeParentheses(Cs231nConv):
    def out_size(self, size, kernel, pad, stride):
        return int((size - kernel) + (2 * pad) / stride) + 1  # the mistake: (H−K) + 2p/s + 1


def _parentheses_shows(case: Case) -> bool:
    wrong = OutputSizeParentheses().out_size
    p, s = _pad(case), case.stride[0]
    return (wrong(case.h, case.kh, p, s), wrong(case.w, case.kw, p, s)) != _out(case)


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


class SqueezeOneImage(Cs231nConv):
    def conv_forward_naive(self, x, w, b, conv_param):
        s, p = conv_param["stride"], conv_param["pad"]
        n_images, _, h, wd = x.shape
        filters, _, hh, ww = w.shape
        img = self.pad(x, p).squeeze()  # the mistake: pictures one image with one channel, (Hp, Wp)
        ho, wo = self.out_size(h, hh, p, s), self.out_size(wd, ww, p, s)
        out = np.zeros((n_images, filters, ho, wo))
        for f in range(filters):
            for i in range(ho):
                for j in range(wo):
                    r, c = self.origin(i, s), self.origin(j, s)
                    out[0, f, i, j] = np.sum(img[r : r + hh, c : c + ww] * w[f, 0]) + b[f]
        return out, (x, w, b, conv_param)


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


class BiasNotAdded(Cs231nConv):
    def window_value(self, window, kernel, bias):
        return np.sum(window * kernel)  # the mistake: + bias forgotten


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


class EmptyCrop(Cs231nConv):
    def crop(self, dxp, pad, h, w):
        return dxp[:, :, pad:-pad, pad:-pad]  # the mistake: empty when pad == 0


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


class CropHardCodedOne(Cs231nConv):
    def crop(self, dxp, pad, h, w):
        return dxp[:, :, 1:-1, 1:-1]  # the mistake: one cell, whatever the padding


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


class PadOnlyIfPad(Cs231nConv):
    def pad(self, x, pad):
        if pad:  # the mistake: the padded input is defined only when there is padding
            xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), mode="constant")
        return xp  # noqa: F821 - UnboundLocalError when pad is 0, as in the students' code


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


class AssignDx(Cs231nConv):
    def write_dx(self, dxp, where, value):
        dxp[where] = value  # the mistake: = where windows overlap, not +=


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


class AssignDw(Cs231nConv):
    def write_dw(self, dw, f, value):
        dw[f] = value  # the mistake: = , so only the last window counts


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
