"""Seed 001's conventions: an NHWC ``Conv2D`` layer in the style of numpy-ml.

- ``X: (N, H, W, C)``, ``W: (KH, KW, C, F)``, ``b: (1, F)``, output ``(N, Ho, Wo, F)``;
- ``pad``: an int p -> (p, p, p, p); a pair (ph, pw) -> (ph, ph, pw, pw); a 4-tuple
  (top, bottom, left, right) as given; "valid" -> no padding; "same" -> numpy-ml's
  "same", which keeps the output as large as the input for ANY stride (unlike
  TensorFlow's and ConvSpec's "same", whose output is ceil(H / stride));
- ``dilation``: numpy-ml's count of zeros inserted between kernel cells, so 0 means
  none (PyTorch's dilation is this plus one).

The layer converts layouts with ``convcore.layout`` and computes with the core, passing
the resolved (top, bottom, left, right) padding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..activations import get_activation
from ..functional import conv2d_backward, conv2d_forward
from ..layout import hwio_to_oihw, nchw_to_nhwc, nhwc_to_nchw, oihw_to_hwio
from ..spec import ConvSpecError, resolve_padding4, resolve_pair
from ..tensor_input import to_array
from ..values import is_int

__all__ = ["Conv2D", "pad2d", "resolve_pad"]

Pad4 = tuple[int, int, int, int]


def _extent(kernel: int, dilation: int) -> int:
    """Cells one kernel axis spans with numpy-ml's dilation d: K·(d + 1) − d."""
    return kernel * (dilation + 1) - dilation


def resolve_pad(
    pad: int | str | Sequence[int],
    in_hw: Sequence[int],
    kernel_shape: Sequence[int] | None = None,
    stride: int | Sequence[int] | None = None,
    dilation: int = 0,
) -> Pad4:
    """The (top, bottom, left, right) padding numpy-ml's ``pad2d`` applies.

    ``in_hw`` is the input's (H, W). For "same", per axis:
    ``total = stride·(H − 1) + extent − H``, ``top = total // 2``, ``bottom = total − top``
    (so the output is H rows for any stride), where ``extent = K·(d + 1) − d``.
    """
    if isinstance(pad, str):
        if pad == "valid":
            return (0, 0, 0, 0)
        if pad != "same":
            raise ConvSpecError(
                f"pad must be an int, (ph, pw), (top, bottom, left, right), 'same' or 'valid'; got {pad!r}",
                "pad",
            )
        if kernel_shape is None or stride is None:
            raise ConvSpecError("pad 'same' needs the kernel_shape and the stride", "pad")
        if not is_int(dilation) or dilation < 0:
            raise ConvSpecError(
                f"dilation must be an integer of at least 0 (0 means none), got {dilation!r}",
                "dilation",
            )
        kh, kw = resolve_pair(kernel_shape, "kernel_shape")
        sh, sw = resolve_pair(stride, "stride")
        if min(sh, sw) < 1:
            raise ConvSpecError(f"stride must be at least 1, got {stride!r}", "stride")
        pads: list[int] = []
        for size, kernel, step in ((in_hw[0], kh, sh), (in_hw[1], kw, sw)):
            total = step * (size - 1) + _extent(kernel, dilation) - size
            before = total // 2
            pads += [before, total - before]
        return tuple(pads)  # type: ignore[return-value]
    return resolve_padding4(pad, "pad")


def pad2d(
    X: np.ndarray,
    pad: int | str | Sequence[int],
    kernel_shape: Sequence[int] | None = None,
    stride: int | Sequence[int] | None = None,
    dilation: int = 0,
) -> tuple[np.ndarray, Pad4]:
    """Zero-pad an NHWC batch as numpy-ml's ``pad2d`` does.

    Parameters
    ----------
    X : (N, H, W, C)
    pad : int, (ph, pw), (top, bottom, left, right), "same" or "valid"
    kernel_shape : (KH, KW), needed for "same"
    stride : int or (sh, sw), needed for "same"
    dilation : numpy-ml's dilation (0 = none)

    Returns
    -------
    X_padded : (N, H + top + bottom, W + left + right, C)
    p : (top, bottom, left, right)
    """
    x = to_array(X, "X", ndim=4, axes="(N, H, W, C)")
    top, bottom, left, right = resolve_pad(pad, x.shape[1:3], kernel_shape, stride, dilation)
    padded = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), mode="constant")
    return padded, (top, bottom, left, right)


class Conv2D:
    """A 2-D convolution layer followed by an activation, NHWC, as in seed 001.

    Parameters
    ----------
    n_out : number of filters F
    kernel_shape : (KH, KW)
    stride : int or (sh, sw)
    pad : int, (ph, pw), (top, bottom, left, right), "same" or "valid"
    activation : "identity", "relu", "leaky_relu", "sigmoid" or "tanh"
    dilation : numpy-ml's dilation, 0 = none
    seed : seed of the Glorot-uniform initialisation of W (b starts at zero)

    Attributes
    ----------
    parameters : {"W": (KH, KW, C, F), "b": (1, F)}, created by the first ``forward``
        (or set with ``set_parameters``)
    gradients : {"W": (KH, KW, C, F), "b": (1, F)}, filled by ``backward``
    cache : {"X": (N, H, W, C), "Z": (N, Ho, Wo, F) pre-activation, "pad": (t, b, l, r)}
    """

    def __init__(
        self,
        n_out: int,
        kernel_shape: Sequence[int],
        stride: int | Sequence[int] = 1,
        pad: int | str | Sequence[int] = 0,
        activation: str = "identity",
        dilation: int = 0,
        seed: int | None = None,
    ):
        if not is_int(n_out) or n_out < 1:
            raise ConvSpecError(f"n_out must be an integer of at least 1, got {n_out!r}", "n_out")
        kh, kw = resolve_pair(kernel_shape, "kernel_shape")
        if min(kh, kw) < 1:
            raise ConvSpecError(f"kernel_shape must be at least 1, got {(kh, kw)}", "kernel_shape")
        if not is_int(dilation) or dilation < 0:
            raise ConvSpecError(
                f"dilation must be an integer of at least 0 (0 means none), got {dilation!r}",
                "dilation",
            )
        resolve_pad(pad, (1, 1), (kh, kw), stride, dilation)  # reject a bad pad now
        self.n_out = int(n_out)
        self.kernel_shape = (kh, kw)
        self.stride = stride
        self.pad = pad
        self.dilation = int(dilation)
        self.activation = get_activation(activation)
        self.seed = seed
        self.n_in: int | None = None
        self.parameters: dict[str, np.ndarray | None] = {"W": None, "b": None}
        self.gradients: dict[str, np.ndarray | None] = {"W": None, "b": None}
        self.cache: dict[str, Any] = {}

    def _init_parameters(self, x_shape: Sequence[int]) -> None:
        """Glorot-uniform W: (KH, KW, C, F) for ``x_shape = (N, H, W, C)``; zero b: (1, F)."""
        kh, kw = self.kernel_shape
        n_in = int(x_shape[3])
        fan_in, fan_out = kh * kw * n_in, kh * kw * self.n_out
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        rng = np.random.default_rng(self.seed)
        self.n_in = n_in
        self.parameters = {
            "W": rng.uniform(-limit, limit, size=(kh, kw, n_in, self.n_out)),
            "b": np.zeros((1, self.n_out)),
        }

    def set_parameters(self, W: Any, b: Any) -> None:
        """Use the given ``W: (KH, KW, C, F)`` and ``b: (1, F)`` (copied, as float64)."""
        w = to_array(W, "W", ndim=4, axes="(KH, KW, C, F)")
        bias = to_array(b, "b", ndim=2, axes="(1, F)")
        expected_w = (*self.kernel_shape, w.shape[2], self.n_out)
        if w.shape != expected_w:
            raise ConvSpecError(f"W has shape {w.shape}, expected {expected_w} (KH, KW, C, F)", "W")
        if bias.shape != (1, self.n_out):
            raise ConvSpecError(f"b has shape {bias.shape}, expected {(1, self.n_out)}", "b")
        self.n_in = w.shape[2]
        self.parameters = {"W": w, "b": bias}

    def forward(self, X: Any) -> np.ndarray:
        """``Y = activation(conv(X, W) + b)``.

        Parameters
        ----------
        X : (N, H, W, C)

        Returns
        -------
        Y : (N, Ho, Wo, F); caches X, the pre-activation Z and the resolved padding
        """
        x = to_array(X, "X", ndim=4, axes="(N, H, W, C)")
        if self.n_in is None:
            self._init_parameters(x.shape)
        if x.shape[3] != self.n_in:
            raise ConvSpecError(f"X has {x.shape[3]} channels (last axis), W expects {self.n_in}", "X")
        w, b = self.parameters["W"], self.parameters["b"]
        assert w is not None and b is not None
        pads = resolve_pad(self.pad, x.shape[1:3], self.kernel_shape, self.stride, self.dilation)
        z_nchw = conv2d_forward(
            nhwc_to_nchw(x, "X"),
            hwio_to_oihw(w, "W"),
            b.reshape(-1),
            stride=self.stride,
            padding=pads,
            dilation=self.dilation + 1,
        )
        z = nchw_to_nhwc(z_nchw, "Z")
        self.cache = {"X": x, "Z": z, "pad": pads}
        return self.activation.forward(z)

    def backward(self, dLdY: Any) -> np.ndarray:
        """Map ``dLdY`` through the activation's derivative, then through the convolution.

        Parameters
        ----------
        dLdY : (N, Ho, Wo, F), the gradient of the loss with respect to the output Y

        Returns
        -------
        dX : (N, H, W, C); fills ``gradients["W"]: (KH, KW, C, F)`` and
        ``gradients["b"]: (1, F)``
        """
        if "Z" not in self.cache:
            raise RuntimeError("Conv2D.backward needs the cache of a forward pass: call forward first")
        x, z, pads = self.cache["X"], self.cache["Z"], self.cache["pad"]
        dy = to_array(dLdY, "dLdY", ndim=4, axes="(N, Ho, Wo, F)")
        if dy.shape != z.shape:
            raise ConvSpecError(f"dLdY has shape {dy.shape}, expected the output's {z.shape}", "dLdY")
        dz = self.activation.backward(z, dy)
        w = self.parameters["W"]
        assert w is not None
        dx, dw, db = conv2d_backward(
            nhwc_to_nchw(dz, "dLdY"),
            nhwc_to_nchw(x, "X"),
            hwio_to_oihw(w, "W"),
            stride=self.stride,
            padding=pads,
            dilation=self.dilation + 1,
        )
        self.gradients = {"W": oihw_to_hwio(dw, "dW"), "b": db.reshape(1, -1)}
        return nchw_to_nhwc(dx, "dX")
