"""The plain loops in each convention's calling form: what a student's code looks like
from outside, so that the grader, the catalogue and the lab call a mistake's loops
(``convcore.mistakes.plain_loops.PlainLoops`` or a subclass) as they call a
submission (``convcore.mistakes.conventions``).

- ``Cs231nCode(loops)``: ``conv_forward_naive(x, w, b, conv_param) -> (out, cache)`` and
  ``conv_backward_naive(dout, cache) -> (dx, dw, db)``;
- ``layer_code(loops)``: an NHWC layer class, ``Cls(n_out, kernel_shape, stride=, pad=,
  activation=)`` with ``parameters``, ``forward(X)``, ``backward(dLdY)``, ``gradients``
  (its constructor and state ``LayerShell``'s);
- ``TorchCode(loops)``: ``conv2d_forward(x, w, b, stride=, padding=, dilation=,
  groups=)`` and ``conv2d_backward(dout, x, w, ...) -> (dx, dw, db)``.

Each call runs the loops' forward or backward pass and returns their numbers in the
convention's layout; a step that raises raises from the call, as the code would.
``code_subject(loops, convention)`` is the Subject the catalogue grades (for
``torch-transposed``, ``convcore.mistakes.transposed_loops``' functions).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..activations import get_activation
from ..compat.layer import pad2d
from ..layout import hwio_to_oihw, nchw_to_nhwc, nhwc_to_nchw, oihw_to_hwio
from ..spec import ConvSpec
from .conventions import Subject
from .plain_loops import PlainLoops, Run
from .plain_steps import LoopInputs
from .transposed_loops import transposed_subject

__all__ = ["Cs231nCode", "LayerCode", "LayerShell", "TorchCode", "code_subject", "layer_code"]


def _numbers(run: Run, passed: str, *names: str) -> tuple[np.ndarray | None, ...]:
    """The tensors ``names`` the run wrote (None for those the code leaves None); the
    exception of pass ``passed`` if it raised."""
    if passed in run.raised:
        raise run.raised[passed][0]
    return tuple(None if name in run.left_none else run.tensors[name] for name in names)


class Cs231nCode:
    """CS231n's ``conv_forward_naive`` / ``conv_backward_naive`` computed by ``loops``
    (a PlainLoops class), NCHW."""

    def __init__(self, loops: type[PlainLoops]):
        self.loops = loops

    def _run(self, x, w, b, dout, conv_param: dict, passes: tuple[str, ...]) -> Run:
        """x: (N, C, H, W), w: (F, C, HH, WW), b: (F,), dout: (N, F, H', W') or None ->
        the run of ``passes``."""
        spec = ConvSpec.create(x.shape, w.shape, stride=conv_param["stride"], padding=conv_param["pad"])
        return self.loops(LoopInputs(spec, x, w, b, dout), "cs231n").run(passes)

    def conv_forward_naive(self, x: np.ndarray, w: np.ndarray, b: np.ndarray, conv_param: dict) -> tuple:
        """x: (N, C, H, W), w: (F, C, HH, WW), b: (F,) -> out: (N, F, H', W'), cache."""
        (out,) = _numbers(self._run(x, w, b, None, conv_param, ("forward",)), "forward", "out")
        return out, (x, w, b, conv_param)

    def conv_backward_naive(self, dout: np.ndarray, cache: tuple) -> tuple:
        """dout: (N, F, H', W'), cache (x, w, b, conv_param) -> dx, dw, db."""
        x, w, b, conv_param = cache
        return _numbers(self._run(x, w, b, dout, conv_param, ("backward",)), "backward", "dx", "dw", "db")


class TorchCode:
    """PyTorch-named ``conv2d_forward`` / ``conv2d_backward`` computed by ``loops`` (a
    PlainLoops class), NCHW input, OIHW weights ``(F, C/groups, KH, KW)``."""

    def __init__(self, loops: type[PlainLoops]):
        self.loops = loops

    def _run(self, x, w, b, dout, stride, padding, dilation, groups, passes: tuple[str, ...]) -> Run:
        """x: (N, C, H, W), w: (F, C/groups, KH, KW), b: (F,) or None, dout: (N, F, Ho,
        Wo) or None -> the run of ``passes``."""
        spec = ConvSpec.create(x.shape, w.shape, stride=stride, padding=padding, dilation=dilation, groups=groups)
        return self.loops(LoopInputs(spec, x, w, b, dout), "torch").run(passes)

    def conv2d_forward(self, x, w, b=None, stride=1, padding=0, dilation=1, groups=1) -> np.ndarray:
        """x: (N, C, H, W), w: (F, C/groups, KH, KW), b: (F,) or None -> out: (N, F, Ho, Wo)."""
        run = self._run(x, w, b, None, stride, padding, dilation, groups, ("forward",))
        return _numbers(run, "forward", "out")[0]

    def conv2d_backward(self, dout, x, w, stride=1, padding=0, dilation=1, groups=1) -> tuple:
        """dout: (N, F, Ho, Wo), x: (N, C, H, W), w: (F, C/groups, KH, KW) -> dx, dw, db."""
        run = self._run(x, w, None, dout, stride, padding, dilation, groups, ("backward",))
        return _numbers(run, "backward", "dx", "dw", "db")


class LayerShell:
    """The outside of an NHWC conv layer class, with no passes: its constructor
    ``Cls(n_out, kernel_shape, stride=1, pad=0, activation="identity")`` and the state it
    keeps: ``n_in``, ``parameters`` and ``gradients`` (``{"W": (KH, KW, C, F), "b":
    (1, F)}``, None until set) and ``cache``."""

    def __init__(
        self, n_out: int, kernel_shape: Sequence[int], stride: int = 1, pad: Any = 0, activation: Any = "identity"
    ):
        self.n_out, self.kernel_shape, self.stride, self.pad = n_out, tuple(kernel_shape), stride, pad
        self.activation = get_activation(activation)
        self.n_in = None
        self.parameters: dict[str, Any] = {"W": None, "b": None}
        self.gradients: dict[str, Any] = {"W": None, "b": None}
        self.cache: dict[str, Any] = {}


class LayerCode(LayerShell):
    """An NHWC conv layer followed by an activation, computed by ``loops`` (a class
    attribute: ``layer_code`` makes the class of a PlainLoops class).

    Parameters: ``W: (KH, KW, C, F)``, ``b: (1, F)``; ``forward(X: (N, H, W, C)) -> Y:
    (N, Ho, Wo, F)``; ``backward(dLdY: (N, Ho, Wo, F)) -> dX: (N, H, W, C)`` and
    ``gradients = {"W": (KH, KW, C, F), "b": (1, F)}``.
    """

    loops: type[PlainLoops] = PlainLoops

    def forward(self, X: np.ndarray) -> np.ndarray:
        """X: (N, H, W, C) -> Y: (N, Ho, Wo, F)."""
        W, b = self.parameters["W"], self.parameters["b"]
        _, p = pad2d(X, self.pad, W.shape[:2], self.stride)
        x, w = nhwc_to_nchw(X, "X"), hwio_to_oihw(W, "W")
        spec = ConvSpec.create(x.shape, w.shape, stride=self.stride, padding=p)
        loops = self.loops(LoopInputs(spec, x, w, b.reshape(-1), None, self.activation), "layer")
        (out,) = _numbers(loops.run(("forward",)), "forward", "out")
        self.cache = {"X": X, "loops": loops}
        return nchw_to_nhwc(out, "Y")

    def backward(self, dLdY: np.ndarray) -> np.ndarray:
        """dLdY: (N, Ho, Wo, F) -> dX: (N, H, W, C); sets ``gradients``."""
        if "X" not in self.cache:  # no forward yet: the KeyError a layer's own code gives
            raise KeyError("X")
        loops = self.cache["loops"]
        loops.given_dout(nhwc_to_nchw(dLdY, "dLdY"))
        dx, dw, db = _numbers(loops.run(("backward",)), "backward", "dx", "dw", "db")
        self.gradients = {"W": oihw_to_hwio(dw, "dW"), "b": db.reshape(1, -1)}
        return nchw_to_nhwc(dx, "dX")


def layer_code(loops: type[PlainLoops]) -> type[LayerCode]:
    """The layer class whose passes ``loops`` computes."""
    return type(f"LayerCode[{loops.__name__}]", (LayerCode,), {"loops": loops, "__module__": __name__})


def code_subject(loops: type, convention: str) -> Subject:
    """``loops`` in ``convention``'s calling form, as the grader calls a submission (a
    TransposedLoops class for ``torch-transposed``, a PlainLoops class for the others)."""
    if convention == "torch-transposed":
        return transposed_subject(loops)
    if convention == "layer":
        return Subject(layer=layer_code(loops))
    if convention == "cs231n":
        code = Cs231nCode(loops)
        return Subject(forward=code.conv_forward_naive, backward=code.conv_backward_naive)
    torch = TorchCode(loops)
    return Subject(forward=torch.conv2d_forward, backward=torch.conv2d_backward)
