"""Each catalogued mistake written apart from convcore's loops: the independent oracle
of ``convcore.mistakes`` (whose mistakes are the plain loops of
``convcore.mistakes.plain_loops`` with one step changed).

Per convention a correct window-at-a-time implementation in that convention's own
calling form, with one method per step (``Cs231nConv``, ``LayerConv``, ``TorchConv``:
plain NumPy on the convention's own arrays, NHWC for the layer, no trace), and per
mistake a subclass that replaces exactly one step (the ConvTranspose2d's in
tests/naive_transposed.py). ``NAIVE[mistake_id]`` is that
mistake's code as a Subject of its convention; ``CORRECT[convention]`` the correct one
(which tests/test_mistakes.py holds to PyTorch).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from naive_transposed import CORRECT_TRANSPOSED, NAIVE_TRANSPOSED

from convcore.compat.layer import pad2d
from convcore.mistakes import Subject
from convcore.mistakes.code import LayerShell

__all__ = ["CORRECT", "NAIVE"]


# -- cs231n ----------------------------------------------------------------------


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

    def column_origin(self, j: int, stride: int) -> int:
        """Column on xp where output column j's window starts."""
        return self.origin(j, stride)

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
                        r, c = self.origin(i, s), self.column_origin(j, s)
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
                    r, c = self.origin(i, s), self.column_origin(j, s)
                    window = (n, slice(None), slice(r, r + hh), slice(c, c + ww))
                    self.write_dx(dxp, window, np.tensordot(dout[n, :, i, j], w, axes=1))
                    for f in range(filters):
                        self.write_dw(dw, f, xp[window] * dout[n, f, i, j])
        return self.crop(dxp, p, h, wd), self.returned_dw(dw), db

    def returned_dw(self, dw: np.ndarray) -> np.ndarray | None:
        """What conv_backward_naive returns as dw: (F, C, HH, WW)."""
        return dw


class PadHardCodedOne(Cs231nConv):
    def pad(self, x, pad):
        return np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="constant")  # the mistake: 1, not pad


class StrideOneIndexGrid(Cs231nConv):
    def origin(self, i, stride):
        return i  # the mistake: the index grid steps by 1 whatever the stride


class OutputSizeParentheses(Cs231nConv):
    def out_size(self, size, kernel, pad, stride):
        return int((size - kernel) + (2 * pad) / stride) + 1  # the mistake: (H−K) + 2p/s + 1


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


class BiasNotAdded(Cs231nConv):
    def window_value(self, window, kernel, bias):
        return np.sum(window * kernel)  # the mistake: + bias forgotten


class EmptyCrop(Cs231nConv):
    def crop(self, dxp, pad, h, w):
        return dxp[:, :, pad:-pad, pad:-pad]  # the mistake: empty when pad == 0


class CropHardCodedOne(Cs231nConv):
    def crop(self, dxp, pad, h, w):
        return dxp[:, :, 1:-1, 1:-1]  # the mistake: one cell, whatever the padding


class PadOnlyIfPad(Cs231nConv):
    def pad(self, x, pad):
        if pad:  # the mistake: the padded input is defined only when there is padding
            xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), mode="constant")
        return xp  # noqa: F821 - UnboundLocalError when pad is 0, as in the students' code


class AssignDx(Cs231nConv):
    def write_dx(self, dxp, where, value):
        dxp[where] = value  # the mistake: = where windows overlap, not +=


class AssignDw(Cs231nConv):
    def write_dw(self, dw, f, value):
        dw[f] = value  # the mistake: = , so only the last window counts


class KernelHardCodedThree(Cs231nConv):
    def window_value(self, window, kernel, bias):
        total = 0.0
        for c in range(kernel.shape[0]):  # the mistake: every channel's kernel taken as 3×3
            total += np.sum(window[c] * kernel[c].reshape(3, 3))
        return total + bias


class ColumnStrideMissing(Cs231nConv):
    def column_origin(self, j, stride):
        return j  # the mistake: the rows step by the stride, the columns by 1


class DxUnfinished(Cs231nConv):
    def write_dx(self, dxp, where, value):
        pass  # the mistake: the dx loop was never written; dx_pad stays zeros


class DwUnfinished(Cs231nConv):
    def returned_dw(self, dw):
        return None  # the mistake: dw left as the starter's None


# -- layer ----------------------------------------------------------------------


class LayerConv(LayerShell):
    """A correct NHWC conv layer followed by an activation (its constructor and state
    ``convcore.mistakes.code.LayerShell``'s, the calling form: nothing of it computes).

    Parameters: ``W: (KH, KW, C, F)``, ``b: (1, F)``; ``forward(X: (N, H, W, C)) -> Y:
    (N, Ho, Wo, F)``; ``backward(dLdY: (N, Ho, Wo, F)) -> dX: (N, H, W, C)`` and
    ``gradients = {"W": (KH, KW, C, F), "b": (1, F)}``.
    """

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


class InputSizeLoops(LayerConv):
    def out_rows(self, in_rows, kh, kw, p):
        return in_rows  # the mistake: loops over the input's rows

    def out_cols(self, in_cols, kh, kw, p):
        return in_cols  # ... and its columns


class KernelHeightForWidth(LayerConv):
    def out_cols(self, in_cols, kh, kw, p):
        return 1 + (in_cols + p[2] + p[3] - kh) // self.stride  # the mistake: kh, not kw


class RowPaddingForColumns(LayerConv):
    def out_cols(self, in_cols, kh, kw, p):
        return 1 + (in_cols + p[0] + p[1] - kw) // self.stride  # the mistake: top + bottom


class CropBottomPlusRows(LayerConv):
    def crop(self, dXp, p, in_rows, in_cols):
        return dXp[:, p[0] : p[1] + in_rows, p[2] : p[3] + in_cols, :]  # the mistake: p[1], p[3] as the ends' base


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


class DerivativeSkipped(LayerConv):
    def activation_gradient(self, Z, Y, dLdY):
        return dLdY  # the mistake: the activation's derivative is left out


class DerivativeOfOutput(LayerConv):
    def activation_gradient(self, Z, Y, dLdY):
        return self.activation.backward(Y, dLdY)  # the mistake: f'(Y), not f'(Z)


# -- torch ----------------------------------------------------------------------


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


class FlippedKernelForward(TorchConv):
    def forward_kernel(self, kernel):
        return kernel[:, ::-1, ::-1]  # the mistake: a true convolution, the kernel flipped


class DwRotated(TorchConv):
    def dw_window(self, window):
        return window[:, ::-1, ::-1]  # the mistake: arguments reversed, dw comes out rotated by 180°


class DbWrongAxes(TorchConv):
    def bias_gradient(self, dout):
        return dout.sum(axis=(0, 1, 2))  # the mistake: NHWC's axes on an NCHW dout


class DbAveraged(TorchConv):
    def bias_gradient(self, dout):
        return dout.mean(axis=(0, 2, 3))  # the mistake: the mean, not the sum


class DilationIgnoredBackward(TorchConv):
    def backward_dilation(self, dilation):
        return (1, 1)  # the mistake: the backward pass forgets the dilation


class GroupsIgnored(TorchConv):
    def channels(self, f, filters_per_group, channels_per_group):
        return slice(0, channels_per_group)  # the mistake: every filter reads the first channels


def _subject(cls: type, convention: str) -> Subject:
    if convention == "layer":
        return Subject(layer=cls)
    conv = cls()
    if convention == "cs231n":
        return Subject(forward=conv.conv_forward_naive, backward=conv.conv_backward_naive)
    return Subject(forward=conv.conv2d_forward, backward=conv.conv2d_backward)


CORRECT = {
    convention: _subject(cls, convention)
    for convention, cls in (("cs231n", Cs231nConv), ("layer", LayerConv), ("torch", TorchConv))
}
CORRECT["torch-transposed"] = CORRECT_TRANSPOSED
NAIVE = {
    "pad_hardcoded_1": _subject(PadHardCodedOne, "cs231n"),
    "stride_one_index_grid": _subject(StrideOneIndexGrid, "cs231n"),
    "output_size_parentheses": _subject(OutputSizeParentheses, "cs231n"),
    "squeeze_one_image": _subject(SqueezeOneImage, "cs231n"),
    "bias_not_added": _subject(BiasNotAdded, "cs231n"),
    "empty_crop": _subject(EmptyCrop, "cs231n"),
    "crop_hardcoded_1": _subject(CropHardCodedOne, "cs231n"),
    "pad_only_if_pad": _subject(PadOnlyIfPad, "cs231n"),
    "assign_dx": _subject(AssignDx, "cs231n"),
    "assign_dw": _subject(AssignDw, "cs231n"),
    "kernel_hardcoded_3": _subject(KernelHardCodedThree, "cs231n"),
    "column_stride_missing": _subject(ColumnStrideMissing, "cs231n"),
    "dx_unfinished": _subject(DxUnfinished, "cs231n"),
    "dw_unfinished": _subject(DwUnfinished, "cs231n"),
    "input_size_loops": _subject(InputSizeLoops, "layer"),
    "kernel_height_for_width": _subject(KernelHeightForWidth, "layer"),
    "row_padding_for_columns": _subject(RowPaddingForColumns, "layer"),
    "crop_p0_p1_plus_rows": _subject(CropBottomPlusRows, "layer"),
    "symmetric_pad_from_4tuple": _subject(SymmetricFromFourTuple, "layer"),
    "rotated_kernel_ignores_stride": _subject(RotatedKernelNoStride, "layer"),
    "activation_derivative_skipped": _subject(DerivativeSkipped, "layer"),
    "activation_derivative_of_output": _subject(DerivativeOfOutput, "layer"),
    "flipped_kernel_forward": _subject(FlippedKernelForward, "torch"),
    "dw_rotated": _subject(DwRotated, "torch"),
    "db_wrong_axes": _subject(DbWrongAxes, "torch"),
    "db_averaged": _subject(DbAveraged, "torch"),
    "dilation_ignored_backward": _subject(DilationIgnoredBackward, "torch"),
    "groups_ignored": _subject(GroupsIgnored, "torch"),
    **NAIVE_TRANSPOSED,  # (tests/naive_transposed.py: the ConvTranspose2d mistakes)
}
