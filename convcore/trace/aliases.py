"""Which tensors are the same tensor in one trace: only steps that compute.

A phase whose every step would copy values unchanged is not in the trace:

- no padding (all four paddings 0): no ``pad`` phase and no ``crop`` phase; the padded
  input ``xp`` is ``x`` and its gradient ``dxp`` is ``dx``, so the events read ``x``
  and write ``dx`` directly;
- the identity activation: no ``activation`` and no ``activation grad`` phase; the
  pre-activation ``z`` is ``out`` and its gradient ``dz`` is ``dout``, so the forward
  writes ``out`` and the backward reads ``dout``.

``trace_aliases(rc)`` names each such tensor and the tensor that stands for it
(``{"xp": "x", "dxp": "dx", "z": "out", "dz": "dout"}``, or the part of it that
applies). The header publishes it as ``aliases``; the aliased names are absent from its
``tensors``, and no Box names them. Generators keep working with the engine's names
(``xp``, ``z``, …): ``TraceContext.name`` maps them to the trace's names at the edge.

Renames. With ``flip`` (a true convolution) the steps slide the rotated filters, so the
views' ``w`` and ``dw`` are the rotated filters ``wf`` and their gradient ``dwf`` in the
trace, while the filters as given and their gradient, the engine's ``w_given`` and
``dw_given``, are the trace's ``w`` and ``dw`` (written by the ``flip`` and ``flip
back`` phases). ``trace_renames(rc)`` gives that table; unlike an alias, a renamed
tensor is a tensor of its own in the header, under its new name.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "FLIP_RENAMES",
    "IDENTITY_ALIASES",
    "PADDING_ALIASES",
    "TRANSPOSE_NAMES",
    "UNPADDED_TRANSPOSE_NAMES",
    "copies_padding",
    "has_padding",
    "is_identity",
    "trace_aliases",
    "trace_names",
    "trace_renames",
]

PADDING_ALIASES = {"xp": "x", "dxp": "dx"}  # without padding
IDENTITY_ALIASES = {"z": "out", "dz": "dout"}  # with the identity activation
FLIP_RENAMES = {"w": "wf", "dw": "dwf", "w_given": "w", "dw_given": "dw"}  # with flip
# a transposed layer's tensors (transpose_layer.py): its forward is the Conv2d's backward
# to the input (dz is the layer's x, dxp the stamps yp, dx the output y), its backward the
# Conv2d's forward over dy (x is dy, xp dy framed by the cropped border, z is dx)
TRANSPOSE_NAMES = {"dz": "x", "dxp": "yp", "dx": "y", "x": "dy", "xp": "dyp", "z": "dx", "dz_dilated": "x_dilated"}
UNPADDED_TRANSPOSE_NAMES = {"dxp": "y", "xp": "dy"}  # without padding: yp is y, dyp is dy


def has_padding(rc: Any) -> bool:
    """True when any of the four paddings is not 0 (then pad and crop teach something)."""
    return any(rc.spec.padding)


def copies_padding(rc: Any) -> bool:
    """True when the padding copies input cells (a mode other than zeros, with padding):
    then the pad phase writes xp's padding and the backward folds its gradient back."""
    return has_padding(rc) and rc.padding_mode != "zeros"


def is_identity(rc: Any) -> bool:
    """True for the identity activation (then out = z and dz = dout: nothing to show)."""
    return rc.activation.name == "identity"


def trace_aliases(rc: Any) -> dict[str, str]:
    """{engine name: the trace's tensor that stands for it} for the ResolvedConfig ``rc``
    (a transposed layer's: without padding its stamps yp are y, dy framed is dy)."""
    if getattr(rc, "layer", "conv2d") == "conv_transpose2d":
        return {} if has_padding(rc) else dict(UNPADDED_TRANSPOSE_NAMES)
    aliases: dict[str, str] = {}
    if not has_padding(rc):
        aliases.update(PADDING_ALIASES)
    if is_identity(rc):
        aliases.update(IDENTITY_ALIASES)
    return aliases


def trace_renames(rc: Any) -> dict[str, str]:
    """{engine name: the trace's name} of the tensors that are renamed, not aliased (the
    flipped kernel's; every tensor of a transposed layer: ``transpose_layer``)."""
    if getattr(rc, "layer", "conv2d") == "conv_transpose2d":
        return dict(TRANSPOSE_NAMES)
    return dict(FLIP_RENAMES) if rc.flip else {}


def trace_names(rc: Any) -> dict[str, str]:
    """{engine name: the trace's name} for every tensor not under its own name: the
    aliases and the renames (what ``TraceContext.name`` maps)."""
    return {**trace_renames(rc), **trace_aliases(rc)}
