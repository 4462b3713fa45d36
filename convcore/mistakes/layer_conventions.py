"""The PyTorch-named functions of the layers beside Conv2d, as grader conventions.

- ``torch-transposed``: ``conv_transpose2d_forward(x, w, b, stride=, padding=,
  output_padding=, groups=, dilation=) -> out`` and ``conv_transpose2d_backward(dout, x,
  w, b, ...) -> (dx, dw, db)``, as ``convcore.conv_transpose``'s: x (N, C_in, H, W), w
  (C_in, C_out/groups, KH, KW), b (C_out,), out (N, C_out, H_out, W_out); stride,
  padding, output_padding and dilation an int or an (h, w) pair.
- ``torch-conv1d``: ``conv1d_forward(x, w, b, stride=, padding=, dilation=, groups=) ->
  out`` and ``conv1d_backward(dout, x, w, b, ...) -> (dx, dw, db)``, as
  ``convcore.conv1d``'s: x (N, C, L), w (F, C/groups, K), b (F,), out (N, F, L_out);
  padding an int or ``"causal"``.

``--convention torch`` is the family: a file is graded in the convention of the
functions it defines (``torch_layer_of``), so that ``convscope check f.py --convention
torch`` grades a ConvTranspose2d or a Conv1d as it grades a Conv2d. The mistakes lab,
the lesson files and the traces of your code are Conv2d's (``on_the_page`` is False);
the page traces a ConvTranspose2d's counterexample (``page_config``), not a Conv1d's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .conventions import CONVENTIONS, NamedFunctions, _int_or_pair, register_convention
from .layer_cases import Conv1dCase, TransposedCase

__all__ = ["TORCH_FAMILY", "TorchConv1d", "TorchTransposed", "torch_layer_of"]


class _LayerBesideConv2d(NamedFunctions):
    """What the conventions here share: the backward takes b after w, and the lab, the
    lesson files and the traces of your code are Conv2d's (``on_the_page`` is False)."""

    backward_takes_bias = True
    on_the_page = False


class TorchTransposed(_LayerBesideConv2d):
    name = "torch-transposed"
    title = "PyTorch-named conv_transpose2d_forward / conv_transpose2d_backward"
    layer = "ConvTranspose2d"
    case_type = TransposedCase
    functions = ("conv_transpose2d_forward", "conv_transpose2d_backward")
    knobs = TransposedCase.KNOBS
    traced_names = {"out": "y"}

    def page_config(self, case: TransposedCase) -> dict[str, Any] | None:
        """The trace of the case with ``"layer": "conv_transpose2d"`` (none when its
        output_padding is not below the stride): the page traces its cases."""
        return case.trace_config()

    def keywords(self, case: TransposedCase) -> dict[str, Any]:
        return {
            "stride": _int_or_pair(case.stride),
            "padding": _int_or_pair(case.padding),
            "output_padding": _int_or_pair(case.output_padding),
            "groups": case.groups,
            "dilation": _int_or_pair(case.dilation),
        }


class TorchConv1d(_LayerBesideConv2d):
    name = "torch-conv1d"
    title = "PyTorch-named conv1d_forward / conv1d_backward"
    layout = "NCL"
    layer = "Conv1d"
    case_type = Conv1dCase
    functions = ("conv1d_forward", "conv1d_backward")
    knobs = Conv1dCase.KNOBS

    def keywords(self, case: Conv1dCase) -> dict[str, Any]:
        return case.keywords()


register_convention(TorchTransposed())
register_convention(TorchConv1d())

# what --convention torch grades: the first of these whose functions the file defines
TORCH_FAMILY = ("torch", "torch-transposed", "torch-conv1d")


def torch_layer_of(names: Iterable[str]) -> str:
    """The convention of the PyTorch-named functions among ``names`` (a file's, or the
    functions handed to ``check``): ``torch-transposed`` when they include
    ``conv_transpose2d_forward`` or ``_backward``, ``torch-conv1d`` for ``conv1d_*``,
    else ``torch`` (Conv2d's, the default). A file defining Conv2d's functions beside
    another layer's (a helper its transposed backward calls) is graded as the other
    layer: Conv2d's are the ones a helper would be."""
    defined = set(names)
    for name in TORCH_FAMILY[1:]:
        if defined & set(CONVENTIONS[name].functions):
            return name
    return "torch"
