"""ConvTranspose2d as a layer, traced: each input cell stamps ``x·w`` onto the output.

PyTorch's ``ConvTranspose2d`` (``convcore.conv_transpose2d_forward``): input
``x: (N, C_in, H, W)``, weight ``w: (C_in, C_out/groups, KH, KW)``, bias ``(C_out,)``,
output ``y: (N, C_out, H_out, W_out)`` with

    H_out = (H − 1)·stride − 2·padding + dilation·(KH − 1) + output_padding + 1.

The layer's forward is, number for number, a Conv2d's backward to its input: the Conv2d
that maps a ``(N, C_out, H_out, W_out)`` input with the same weight, stride, padding,
dilation and groups to a ``(N, C_in, H, W)`` output (``conv_spec``; it exists when
``output_padding`` is smaller than the stride on both axes). So the trace reuses the
Conv2d engine's steps under the layer's own names (``aliases.trace_names``, engine name
-> trace name, ``aliases.TRANSPOSE_NAMES``):

forward
  ``stamp``  one event per input cell (n, c, i, j) in ``loop_order`` (letters n, f, i,
             j: f is the input channel c, whose filter slice w[c] it stamps): reads
             x[n,c,i,j] and w[c], adds ``x·w[c]`` into the window of ``yp`` (the stamps
             before the crop: rows ``i·stride + k·dilation``); a zero stamps nothing
  ``crop``   (with padding) y = yp without ``padding`` rows and columns on each side:
             the output-size rule, numbers put in, is the step's text
  ``bias``   (with a bias) one event per output row: y[n,c,h] += b[c]
backward
  ``pad``    (with padding) dyp = dy framed by ``padding`` zeros: the crop's backward
  ``db``     (with a bias) one event per output channel: db[c] = Σ dy[:, c]
  ``dw``     one event per input cell: dw[c] += x[n,c,i,j]·dyp[window]
  ``dx``     one event per input cell: dx[n,c,i,j] = Σ dyp[window]·w[c], a Conv2d's
             forward step: the transposed layer's gradient is a convolution

The header carries the layer's tensors under their names, with roles and titles that
say which is the layer's input and output (x, w, b, y; dy, dx, dw, db), the stamps
``yp`` and ``dyp``, and ``overlaps``: how many stamps land on each cell of yp (the
checkerboard of a stride smaller than the kernel), a figure no event writes.
NCHW, window granularity, the identity activation, zero padding; the direct view only.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ..functional import backward_padded, crop_padding, forward_padded, pad_input
from ..spec import ConvSpec, ConvSpecError
from ..transpose_spec import TransposeSpec
from . import format as fmt
from .direct_window import DW_ONLY, DX_ONLY, backward_window
from .drawing import tensor_drawing
from .events import TraceContext
from .forward_window import forward_window
from .model import Event, make_event
from .phases import crop_phase, db_phase, pad_phase
from .transposed import dilated_gradient, gather_phases, rotated_kernel
from .views import Phase

__all__ = [
    "conv_spec",
    "overlap_counts",
    "transposed_phases",
    "transposed_reference",
    "tensor_facts",
    "transposed_formulas",
    "transposed_settings_error",
    "transposed_spec",
    "transposed_torch_setup",
]


# what a transposed-layer trace takes of the Conv2d settings: the values each may have
# (the view: "direct" stamps, "transposed" gathers the stamps as a correlation)
TAKEN_SETTINGS = {
    "layout": ("NCHW",),
    "activation": ("identity",),
    "view": ("direct", "transposed"),
    "granularity": ("window",),
    "backward": ("fused",),
    "padding_mode": ("zeros",),
    "flip": (False,),
}
# the gather view's phases (transposed.gather_phases) under the layer's names
GATHER_NAMES = {"dilate": "dilate x", "rotate": "rotate w", "gather": "gather", "source": "x"}


def transposed_settings_error(settings: dict[str, Any]) -> tuple[str, str] | None:
    """(field, message) for the first setting a transposed-layer trace does not take
    (``settings``: the resolved value of each TAKEN_SETTINGS key), or None."""
    for key, values in TAKEN_SETTINGS.items():
        if settings[key] not in values:
            allowed = " or ".join(repr(v) for v in values)
            return key, (
                f"layer 'conv_transpose2d' is traced with {key} {allowed} (its steps are the stamps of "
                f"PyTorch's NCHW layer, one input cell at a time); got {settings[key]!r} (leave {key} out)"
            )
    return None


def conv_spec(tspec: TransposeSpec) -> ConvSpec:
    """The Conv2d whose backward to its input is the layer's forward: input (N, C_out,
    H_out, W_out), the same weight, stride, padding, dilation and groups, output
    (N, C_in, H, W). ConvSpecError at ``output_padding`` when it is not smaller than the
    stride (PyTorch allows it below the dilation; that Conv2d would have one more output
    row than the layer has input rows)."""
    for axis, what in enumerate(("rows", "columns")):
        if tspec.output_padding[axis] >= tspec.stride[axis]:
            raise ConvSpecError(
                f"the trace of conv_transpose2d takes output_padding smaller than the stride: on the {what} "
                f"output_padding {tspec.output_padding[axis]}, stride {tspec.stride[axis]} (PyTorch also allows "
                f"it below the dilation, {tspec.dilation[axis]}; the core computes that layer)",
                "output_padding",
            )
    (ph, pw) = tspec.padding
    spec = ConvSpec.create(
        (tspec.N, tspec.C_out, *tspec.out_hw),
        tspec.w_shape,
        tspec.stride,
        (ph, ph, pw, pw),
        tspec.dilation,
        tspec.groups,
    )
    assert spec.out_shape == tspec.x_shape, (spec, tspec)
    return spec


def overlap_counts(spec: ConvSpec) -> np.ndarray:
    """(Hp, Wp) float64 of whole numbers: how many stamps land on each cell of yp (one
    input channel and one image; every channel of a group alike)."""
    kernel = (1, 1, spec.KH, spec.KW)
    single = ConvSpec.create((1, 1, *spec.x_shape[2:]), kernel, spec.stride, spec.padding, spec.dilation)
    counts, _, _ = backward_padded(single, np.ones(single.out_shape), np.zeros(single.padded_shape), np.ones(kernel))
    return counts[0, 0]


def transposed_reference(rc: Any) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Every tensor of the trace (engine names, NCHW) and its role, from the vectorised
    core: the stamps through the Conv2d backward of ``rc.spec``, the gradients through
    its forward and weight gradient."""
    spec = rc.spec
    ref: dict[str, np.ndarray] = {}
    roles: dict[str, str] = {}

    def put(name: str, arr: np.ndarray, role: str) -> None:
        ref[name], roles[name] = arr, role

    fwd = "intermediate" if rc.forward_included else "input"
    dyp = pad_input(spec, rc.dout)
    stamps, dw, _ = backward_padded(spec, rc.x, dyp, rc.w)
    y = crop_padding(spec, stamps) + (rc.b[None, :, None, None] if rc.b is not None else 0.0)
    put("dz", rc.x, "input")  # the layer's x
    put("w", rc.w, "input")
    if rc.b is not None:
        put("b", rc.b, "input")
    put("overlaps", overlap_counts(spec), "input")
    if rc.view == "transposed" and rc.forward_included:  # the stamps gathered: x dilated, w turned
        put("dz_dilated", dilated_gradient(spec, rc.x), "intermediate")  # x_dilated
        put("w_rot", rotated_kernel(rc.w), "intermediate")
    put("dxp", stamps, fwd)  # yp
    put("dx", y, "result" if rc.forward_included else "input")  # y
    if rc.backward_included:
        put("x", rc.dout, "input")  # dy
        put("xp", dyp, "intermediate")  # dyp
        if rc.b is not None:
            put("db", rc.dout.sum(axis=(0, 2, 3)), "result")
        put("dw", dw, "result")
        put("z", forward_padded(spec, dyp, rc.w, None), "result")  # dx
    else:
        ref["xp"] = dyp  # (no event reads it: the windows' geometry, for the stamps' texts)
    return ref, roles


def _bias_events(ctx: TraceContext) -> Iterator[Event]:
    """Phase "bias": per output row (n, c, h), y[n,c,h] += b[c]."""
    n_, c_, h_, w_ = ctx.spec.x_shape  # the Conv2d's input: the layer's output y
    bias = ctx.ref["b"]
    y = "dx" if any(ctx.spec.padding) else "dxp"  # (without a crop the stamps wrote y itself)
    for n in range(n_):
        for c in range(c_):
            for h in range(h_):
                start, stop = (n, c, h, 0), (n + 1, c + 1, h + 1, w_)
                write = ctx.write(y, start, stop, None, bias[c])
                yield make_event(
                    "bias",
                    {"n": n, "c": c, "h": h},
                    [ctx.box("b", (c,), (c + 1,))],
                    [write],
                    f"{ctx.text(y, start, stop)} += b[{c}] = {fmt.number(float(bias[c]))}",
                )


SIZE_RULE = "(H−1)·stride − 2·padding + dilation·(KH−1) + output_padding + 1"


def _size_numbers(rc: Any) -> str:
    """The output-size rule's numbers, per axis (``H_out = W_out = …`` when alike):
    ``H_out = (3−1)·2 − 2·1 + 1·(3−1) + 1 + 1 = 6``."""
    t = rc.transpose_spec
    sums = [
        f"({t.x_shape[2 + a]}−1)·{t.stride[a]} − 2·{t.padding[a]} + {t.dilation[a]}·({t.w_shape[2 + a]}−1) + "
        f"{t.output_padding[a]} + 1 = {t.out_hw[a]}"
        for a in (0, 1)
    ]
    return f"H_out = W_out = {sums[0]}" if sums[0] == sums[1] else f"H_out = {sums[0]}; W_out = {sums[1]}"


def _size_rule(rc: Any) -> str:
    """The output-size rule, then its numbers."""
    return f"H_out = {SIZE_RULE} (W_out alike): {_size_numbers(rc)}"


def transposed_phases(rc: Any) -> list[Phase]:
    """The phases of a transposed-layer trace, in order, with their exact counts."""
    spec = rc.spec
    inputs = spec.F * spec.N * spec.out_hw[0] * spec.out_hw[1]  # the layer's input cells (N·C_in·H·W)
    padded = any(spec.padding)
    n, c_out, h_out, _ = spec.x_shape
    phases: list[Phase] = []
    if rc.forward_included:
        if rc.view == "transposed":  # the stamps gathered: x dilated under the turned kernel
            phases += gather_phases(rc, GATHER_NAMES)
        else:
            stamps = lambda ctx: backward_window(  # noqa: E731
                ctx, "stamp", rc.loop_order, writes=DX_ONLY, dead="a zero stamps nothing"
            )
            phases.append(Phase("stamp", inputs, stamps))
        if padded:
            phases.append(crop_phase(rc, note=f"; padding trims the border: {_size_numbers(rc)}"))
        if rc.b is not None:
            phases.append(Phase("bias", n * c_out * h_out, _bias_events, "nch"))
    if rc.backward_included:
        if padded:
            phases.append(pad_phase(rc, note="; the cropped border's gradient is 0: dy framed by zeros"))
        if rc.b is not None:
            phases.append(db_phase(rc, source="x", letter="c"))  # db[c] = Σ dy[:, c]
        phases.append(Phase("dw", inputs, lambda ctx: backward_window(ctx, "dw", rc.loop_order, writes=DW_ONLY)))
        phases.append(Phase("dx", inputs, lambda ctx: forward_window(ctx, phase="dx", with_bias=False)))
    return phases


# how the page draws each tensor: trace name -> (title, group, detail), in drawing order
DRAWINGS: dict[str, tuple[str, str, str]] = {
    "x": ("layer input x", "inputs", "ConvTranspose2d's input (N, C_in, H, W): each cell stamps x·w[c] on y"),
    "w": ("filters (C_in, C_out/groups, KH, KW)", "inputs", "w[c] is the stamp input channel c leaves on y"),
    "b": ("bias", "inputs", ""),
    "overlaps": (
        "stamps per cell",
        "forward",
        "how many stamps land on each cell of yp: uneven counts (a stride smaller than the kernel) "
        "are the checkerboard a transposed convolution leaves",
    ),
    "x_dilated": (
        "x dilated: stride−1 zeros between cells, framed for a full correlation",
        "forward",
        "the gather view: sliding the turned kernel over x dilated gives the same stamps "
        "(hatched cells are inserted zeros)",
    ),
    "w_rot": ("w rotated 180°", "forward", "each kernel slice turned by 180°: w_rot[f,c,k,l] = w[f,c,KH−1−k,KW−1−l]"),
    "yp": ("stamps before the crop", "forward", "each input cell adds x·w[c] here; padding trims the border"),
    "y": ("layer output y", "forward", ""),
    "dy": ("upstream gradient dy", "backward", ""),
    "dyp": ("dy framed by zeros", "backward", "the crop's backward: the trimmed border gets no gradient"),
    "db": ("bias gradient", "backward", ""),
    "dw": ("filter gradient", "backward", ""),
    "dx": ("input gradient dx", "backward", "a Conv2d of dyp with w: the layer's gradient is a convolution"),
}
GRADIENT_OF = {"dy": "y", "dyp": "yp", "db": "b", "dw": "w", "dx": "x"}
LOOP_WORDS = {
    "n": "image",
    "f": "input channel (the filter slice w[f] it stamps)",
    "i": "input row",
    "j": "input column",
    "c": "output channel",
    "h": "output row",
    "y": "row of the stamps yp",
    "x": "column of the stamps yp",
}


def _marks(name: str, spec: ConvSpec, overlaps: np.ndarray) -> list[str] | None:
    """yp: ``k`` the border padding crops away, ``o`` a cell no stamp reaches; y: ``o``;
    dyp: ``p`` the zero border. One string per row of the grid."""
    top, bottom, left, right = spec.padding
    hp, wp = overlaps.shape
    border = np.ones((hp, wp), dtype=bool)
    border[top : hp - bottom, left : wp - right] = False
    marks = np.full((hp, wp), ".", dtype="<U1")
    if name == "yp":
        marks[overlaps == 0] = "o"
        marks[border] = "k"
    elif name == "dyp":
        marks[border] = "p"
    elif name == "x_dilated":  # (the inserted zeros, as the Conv2d's dz_dilated)
        return tensor_drawing("dz_dilated", spec)["marks"]
    elif name == "y":
        marks[overlaps == 0] = "o"
        marks = marks[top : hp - bottom, left : wp - right]
        if not (marks == "o").any():
            return None
    else:
        return None
    return ["".join(row) for row in marks]


def tensor_facts(name: str, spec: ConvSpec, overlaps: np.ndarray) -> dict[str, Any]:
    """The drawing facts of the trace's tensor ``name`` (as ``drawing.tensor_drawing``)."""
    title, group, detail = DRAWINGS[name]
    facts: dict[str, Any] = {"title": title, "group": group, "order": list(DRAWINGS).index(name)}
    if detail:
        facts["detail"] = detail
    if name in GRADIENT_OF:
        facts["gradient_of"] = GRADIENT_OF[name]
    if name == "b":
        facts["added"] = True
    marks = _marks(name, spec, overlaps)
    if marks is not None:
        facts["marks"] = marks
    return facts


def transposed_spec(rc: Any) -> dict[str, Any]:
    """The header's ``spec`` of a transposed-layer trace: the layer's geometry, its
    output-size rule with the numbers put in, and the trace's settings."""
    t = rc.transpose_spec
    return {
        "layer": "conv_transpose2d",
        "x_shape": list(t.x_shape),
        "w_shape": list(t.w_shape),
        "out_shape": list(t.out_shape),
        "stamped_shape": list(rc.spec.padded_shape),
        "stride": list(t.stride),
        "padding": list(t.padding),
        "output_padding": list(t.output_padding),
        "dilation": list(t.dilation),
        "groups": t.groups,
        "output_size": _size_rule(rc),
        "bias": rc.has_bias,
        "dout": "given" if rc.dout_given else "ones",
        "activation": "identity",
        "view": rc.view,
        "granularity": rc.granularity,
        "loop_order": rc.loop_order,
        "layout": rc.layout,
        "phases": rc.phases,
    }


def transposed_torch_setup(rc: Any) -> list[str]:
    """The PyTorch lines that compute the stamps yp and y from x, w and b (with
    ``import torch``, ``import torch.nn.functional as F``, the request's x, w, b and dy)."""
    t = rc.transpose_spec
    rest = f"output_padding={t.output_padding}, groups={t.groups}, dilation={t.dilation})"
    return [
        f"yp = F.conv_transpose2d(x, w, None, stride={t.stride}, padding=0, {rest}",
        f"y = F.conv_transpose2d(x, w, {'b' if rc.has_bias else 'None'}, stride={t.stride}, padding={t.padding}, {rest}",
    ]


def transposed_formulas(rc: Any, names: set[str]) -> dict[str, dict[str, str]]:
    """{tensor: {"formula", "torch"}} for the trace's tensors ``names`` that are not
    inputs, as ``formulas.tensor_formulas`` gives Conv2d's (after ``transposed_torch_setup``)."""
    t = rc.transpose_spec
    (sh, sw), (ph, pw), (dh, dw) = t.stride, t.padding, t.dilation
    grad = "torch.autograd.grad(y, {}, dy, retain_graph=True)[0]"
    group = "f" if t.groups == 1 else f"f in c's group (g = c // {t.out_per_group}), w's c mod {t.out_per_group}"

    def at(s: int, out: str, d: int, k: str) -> str:  # "2h+kh": a stamp's row (column)
        return f"{out if s == 1 else f'{s}{out}'}+{k if d == 1 else f'{d}{k}'}"

    stamps = f"Σ over {group}, i, j, kh, kw with {at(sh, 'i', dh, 'kh')} = h, {at(sw, 'j', dw, 'kw')} = w: "
    stamps += "x[n,f,i,j] · w[f,c,kh,kw]"
    window = f"dyp[n,c,{at(sh, 'h', dh, 'kh')},{at(sw, 'w', dw, 'kw')}]"
    table = {
        "yp": (f"yp[n,c,h,w] = {stamps}", "yp[{n}, {c}, {h}, {w}]"),
        "y": (
            f"y[n,c,h,w] = yp[n,c,h+{ph},w+{pw}]{' + b[c]' if rc.has_bias else ''}",
            "y[{n}, {c}, {h}, {w}]",
        ),
        "dyp": (
            f"dyp[n,c,h,w] = dy[n,c,h−{ph},w−{pw}] inside dy, 0 on the cropped border",
            f"F.pad(dy, ({pw}, {pw}, {ph}, {ph}))[{{n}}, {{c}}, {{h}}, {{w}}]",
        ),
        "db": ("db[c] = Σ_{n,h,w} dy[n,c,h,w]", grad.format("b") + "[{f}]"),
        "dw": (
            f"dw[f,c,kh,kw] = Σ_{{n,h,w}} x[n,f,h,w] · {window}",
            grad.format("w") + "[{f}, {c}, {kh}, {kw}]",
        ),
        "dx": (
            f"dx[n,f,h,w] = Σ_{{c,kh,kw}} {window} · w[f,c,kh,kw]",
            grad.format("x") + "[{n}, {f}, {h}, {w}]",
        ),
    }
    return {name: {"formula": f, "torch": e} for name, (f, e) in table.items() if name in names}
