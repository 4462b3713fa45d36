"""The mistakes students make in PyTorch-named ``conv2d_forward`` /
``conv2d_backward`` (stride, padding, dilation, groups): each written once, as the plain
loops (``convcore.mistakes.plain_loops.PlainLoops``) with the one step it gets wrong
overridden, and catalogued with when it shows; ``convcore.mistakes.code.TorchCode``
calls it in that form.
"""

from __future__ import annotations

from .case import Case
from .catalogue import ELSEWHERE, Condition, catalogue_in, where_windows_read_x
from .plain_loops import PlainLoops

__all__ = [
    "DbAveraged",
    "DbWrongAxes",
    "DilationIgnoredBackward",
    "DwRotated",
    "FlippedKernelForward",
    "GroupsIgnored",
]


_mistake = catalogue_in("torch")


def _kernel_not_1x1(case: Case) -> bool:
    return case.kh > 1 or case.kw > 1


_not_1x1 = Condition(
    lambda c: _kernel_not_1x1(c) and not any(c.padding),
    "whenever the kernel is larger than 1×1 (exact without padding; with padding the taps that read "
    "only zeros can hide it, e.g. the centre tap of a 3-tap kernel over a one-cell input)",
    hides=lambda c: not _kernel_not_1x1(c),
)


class FlippedKernelForward(PlainLoops):
    listing_change = (("window * w[f]", "window * w[f, :, ::-1, ::-1]"),)  # the mistake: a true convolution

    def forward_kernel(self, kernel):
        """kernel: (C/groups, KH, KW) turned 180°."""
        return kernel[:, ::-1, ::-1]  # the mistake: a true convolution

    def kernel_words(self, f):
        return f"w[{f}] turned 180°"


_mistake(
    FlippedKernelForward,
    id="flipped_kernel_forward",
    title="The kernel flipped in the forward pass",
    wrong="The forward pass turns the kernel by 180° (a true convolution), while every framework computes "
    "a cross-correlation.",
    should="Multiply each window with w[f] as it is; the rotation belongs only to the transposed view of dX.",
    source=ELSEWHERE,
    conditions={"out": _not_1x1},
    setup=Case(h=2, w=1, kh=2, kw=1),
)


class DwRotated(PlainLoops):
    listing_change = (
        ("xp[n, c0 : c0 + Cg, rows, cols] * dout", "xp[n, c0 : c0 + Cg, rows, cols][:, ::-1, ::-1] * dout"),
    )
    dw_words = " turned 180°"

    def dw_window(self, window):
        """window: (C/groups, KH, KW) turned 180°."""
        return window[:, ::-1, ::-1]  # the mistake: the arguments reversed


_mistake(
    DwRotated,
    id="dw_rotated",
    title="dw computed with its arguments reversed (rotated 180°)",
    wrong="dw is the correlation of dout with the input taken the other way round, which is the true dw "
    "turned by 180°.",
    should="dw[f, c, k, l] = Σ x_padded[n, c, s·i + d·k, s·j + d·l] · dout[n, f, i, j].",
    source=ELSEWHERE,
    conditions={"dw": _not_1x1},
    setup=Case(h=2, w=1, kh=2, kw=1),
)


class DbWrongAxes(PlainLoops):
    listing_change = (("db = np.sum(dout, axis=(0, 2, 3))", "db = np.sum(dout, axis=(0, 1, 2))"),)
    db_words = "Σ dz over axes 0, 1, 2 (n, f, i)"

    def db(self, dz):
        """dz: (N, F, Ho, Wo) -> (Wo,)."""
        return dz.sum(axis=(0, 1, 2))  # the mistake: NHWC's axes on an NCHW dz


_mistake(
    DbWrongAxes,
    id="db_wrong_axes",
    title="db summed over the wrong axes",
    wrong="db sums dout over axes (0, 1, 2), NHWC's batch, rows and columns, which on an NCHW dout are the "
    "batch, the filters and the rows.",
    should="Sum over the batch and the positions: dout.sum(axis=(0, 2, 3)).",
    source=ELSEWHERE,
    conditions={
        "db": Condition(lambda c: c.f > 1 or c.spec.out_hw[1] > 1, "unless F = 1 and the output is one column wide")
    },
    setup=Case(h=1, w=2, kh=1, kw=1),
)


class DbAveraged(PlainLoops):
    listing_change = (("db = np.sum(dout, axis=(0, 2, 3))", "db = np.mean(dout, axis=(0, 2, 3))"),)
    db_words = "the mean of dz over n, i, j"

    def db(self, dz):
        """dz: (N, F, Ho, Wo) -> (F,)."""
        return dz.mean(axis=(0, 2, 3))  # the mistake: the mean, not the sum


def _positions(case: Case) -> int:
    ho, wo = case.spec.out_hw
    return case.n * ho * wo


_mistake(
    DbAveraged,
    id="db_averaged",
    title="db averaged instead of summed",
    wrong="db is the mean of dout over the batch and the positions instead of their sum.",
    should="Sum: every output position adds its whole dout to the bias gradient.",
    source=ELSEWHERE,
    conditions={
        "db": Condition(lambda c: _positions(c) > 1, "when there is more than one output position (N·Ho·Wo > 1)")
    },
    setup=Case(h=2, w=1, kh=1, kw=1),
)


class DilationIgnoredBackward(PlainLoops):
    listing_change = (
        ("i * sh + dil_h * (KH - 1) + 1, dil_h)", "i * sh + KH)"),
        ("j * sw + dil_w * (KW - 1) + 1, dil_w)", "j * sw + KW)"),
    )

    def backward_dilation(self):
        return (1, 1)  # the mistake: the backward pass forgets the dilation


_mistake(
    DilationIgnoredBackward,
    id="dilation_ignored_backward",
    title="Dilation ignored in the backward pass",
    wrong="The backward pass reads and writes contiguous windows, as if the dilation were 1, although the "
    "forward pass spaced the kernel cells.",
    should="Use the same dilated windows in the backward pass: rows s·i + d·k.",
    source=ELSEWHERE,
    conditions={
        name: where_windows_read_x(
            lambda c: (c.dilation[0] > 1 and c.kh > 1) or (c.dilation[1] > 1 and c.kw > 1),
            "when a dilation of more than 1 meets a kernel axis of more than one cell",
        )
        for name in ("dx", "dw")
    },
    setup=Case(h=3, w=1, kh=2, kw=1, dilation=(2, 1)),
)


class GroupsIgnored(PlainLoops):
    listing_change = (("f // (F // groups) * Cg", "0"),)  # the mistake: every filter reads the first channels

    def channels(self, f):
        return slice(0, self.spec.channels_per_group)  # the mistake: every filter reads the first channels


_groups = where_windows_read_x(lambda c: c.groups > 1, "when groups > 1")
_mistake(
    GroupsIgnored,
    id="groups_ignored",
    title="Groups ignored (every filter reads the first channels)",
    wrong="Every filter reads input channels 0 … C/groups − 1, as if there were one group, instead of its own group's.",
    should="Filter f reads the channels of its group g = f // (F/groups): g·C/groups … (g + 1)·C/groups − 1.",
    source=ELSEWHERE,
    conditions={"out": _groups, "dx": _groups, "dw": _groups},
    setup=Case(groups=2, h=1, w=1, kh=1, kw=1),
)
