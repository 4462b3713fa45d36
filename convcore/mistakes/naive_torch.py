"""A naive conv layer with PyTorch's names (stride, padding, dilation, groups), and the
mistakes students make in it.

``TorchConv`` is a correct window-at-a-time ``conv2d_forward`` / ``conv2d_backward`` in
the signature of ``convcore.functional``; one method per step (the channels a filter
reads, the kernel the forward applies, the window dw sees, the backward's dilation, db).
Each mistake is a subclass that replaces exactly one step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .case import Case
from .catalogue import Condition, Mistake, register, where_windows_read_x
from .conventions import Subject

__all__ = ["TorchConv"]

ELSEWHERE = "common in public course code (issue 12's list of mistakes found elsewhere)"


def _pair(value: Any) -> tuple[int, int]:
    return (value, value) if np.ndim(value) == 0 else (int(value[0]), int(value[1]))


class TorchConv:
    """A correct naive conv2d, NCHW input, OIHW weights ``(F, C/groups, KH, KW)``."""

    # -- steps ------------------------------------------------------------------------

    def channels(self, f: int, filters_per_group: int, channels_per_group: int) -> slice:
        """The input channels filter f reads: those of its group."""
        g = f // filters_per_group
        return slice(g * channels_per_group, (g + 1) * channels_per_group)

    def forward_kernel(self, kernel: np.ndarray) -> np.ndarray:
        """The kernel (C/groups, KH, KW) the forward pass multiplies a window with."""
        return kernel

    def dw_window(self, window: np.ndarray) -> np.ndarray:
        """The window (C/groups, KH, KW) that dout[n, f, i, j] scales into dw[f]."""
        return window

    def backward_dilation(self, dilation: tuple[int, int]) -> tuple[int, int]:
        return dilation

    def bias_gradient(self, dout: np.ndarray) -> np.ndarray:
        """dout: (N, F, Ho, Wo) -> db: (F,)."""
        return dout.sum(axis=(0, 2, 3))

    # -- the functions ----------------------------------------------------------------

    @staticmethod
    def _geometry(x, w, stride, padding, dilation, groups):
        (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
        _, _, h, wd = x.shape
        filters, cg, kh, kw = w.shape
        ho = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
        wo = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
        xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
        return xp, (sh, sw), (ph, pw), (dh, dw), (ho, wo), filters // groups, cg

    def conv2d_forward(self, x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
        """x: (N, C, H, W), w: (F, C/groups, KH, KW), b: (F,) or None -> out: (N, F, Ho, Wo)."""
        xp, (sh, sw), _, (dh, dw), (ho, wo), fg, cg = self._geometry(x, w, stride, padding, dilation, groups)
        filters, _, kh, kw = w.shape
        out = np.zeros((x.shape[0], filters, ho, wo))
        for n in range(x.shape[0]):
            for f in range(filters):
                cs = self.channels(f, fg, cg)
                for i in range(ho):
                    for j in range(wo):
                        window = xp[
                            n, cs, i * sh : i * sh + dh * (kh - 1) + 1 : dh, j * sw : j * sw + dw * (kw - 1) + 1 : dw
                        ]
                        out[n, f, i, j] = np.sum(window * self.forward_kernel(w[f])) + (0.0 if b is None else b[f])
        return out

    def conv2d_backward(self, dout, x, w, stride=1, padding=0, dilation=1, groups=1):
        """dout: (N, F, Ho, Wo), x: (N, C, H, W), w: (F, C/groups, KH, KW) -> dx, dw, db."""
        xp, (sh, sw), (ph, pw), dil, _, fg, cg = self._geometry(x, w, stride, padding, dilation, groups)
        dh, dw = self.backward_dilation(dil)
        filters, _, kh, kw = w.shape
        n_images, _, ho, wo = dout.shape
        dxp, dweights = np.zeros_like(xp), np.zeros_like(w)
        for n in range(n_images):
            for f in range(filters):
                cs = self.channels(f, fg, cg)
                for i in range(ho):
                    for j in range(wo):
                        rows = slice(i * sh, i * sh + dh * (kh - 1) + 1, dh)
                        cols = slice(j * sw, j * sw + dw * (kw - 1) + 1, dw)
                        dxp[n, cs, rows, cols] += w[f] * dout[n, f, i, j]
                        dweights[f] += self.dw_window(xp[n, cs, rows, cols]) * dout[n, f, i, j]
        dx = dxp[:, :, ph : ph + x.shape[2], pw : pw + x.shape[3]]
        return dx, dweights, self.bias_gradient(dout)


def _mistake(cls: type, **entry: Any) -> type:
    conv = cls()
    register(
        Mistake(
            convention="torch",
            implementation=Subject(forward=conv.conv2d_forward, backward=conv.conv2d_backward),
            **entry,
        )
    )
    return cls


def _kernel_not_1x1(case: Case) -> bool:
    return case.kh > 1 or case.kw > 1


_not_1x1 = Condition(
    lambda c: _kernel_not_1x1(c) and not any(c.padding),
    "whenever the kernel is larger than 1×1 (exact without padding; with padding the taps that read "
    "only zeros can hide it, e.g. the centre tap of a 3-tap kernel over a one-cell input)",
    hides=lambda c: not _kernel_not_1x1(c),
)


class FlippedKernelForward(TorchConv):
    def forward_kernel(self, kernel):
        return kernel[:, ::-1, ::-1]  # the mistake: a true convolution, the kernel flipped


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


class DwRotated(TorchConv):
    def dw_window(self, window):
        return window[:, ::-1, ::-1]  # the mistake: arguments reversed, dw comes out rotated by 180°


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


class DbWrongAxes(TorchConv):
    def bias_gradient(self, dout):
        return dout.sum(axis=(0, 1, 2))  # the mistake: NHWC's axes on an NCHW dout


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


class DbAveraged(TorchConv):
    def bias_gradient(self, dout):
        return dout.mean(axis=(0, 2, 3))  # the mistake: the mean, not the sum


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


class DilationIgnoredBackward(TorchConv):
    def backward_dilation(self, dilation):
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


class GroupsIgnored(TorchConv):
    def channels(self, f, filters_per_group, channels_per_group):
        return slice(0, channels_per_group)  # the mistake: every filter reads the first channels


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
