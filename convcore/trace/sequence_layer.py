"""Conv1d as a layer, traced: a sequence, one row of cells, in NCL or NLC.

PyTorch's ``Conv1d`` (``convcore.conv1d_forward``): input ``x: (N, C, L)``, weight
``w: (F, C/groups, K)``, bias ``(F,)``, output ``(N, F, L_out)``; padding an int,
``(left, right)``, "valid", "same" or "causal" (``dilation·(K − 1)`` on the left only,
so that output ``t`` reads inputs ``≤ t``). NLC gives x as ``(N, L, C)``, w as
``(K, C/groups, F)`` and dout as ``(N, L_out, F)``.

The engine computes it as the one-row Conv2d ``convcore.conv1d.conv1d_spec`` describes,
(N, C, 1, L) with (F, C/groups, 1, K), through every view and granularity Conv2d has.
The layouts "NCL" and "NLC" (``axes.SEQUENCE_LAYOUTS``) leave the one-cell row axis out
of every index, shape and block the trace shows; this module keeps the rest of the
trace in a sequence's words: the loop letters without the row letters (``ROW_LETTERS``:
an output row i, a kernel row k, an input row h, a padded row y, each always 0), the
header's ``spec`` (lengths, (left, right) padding, "causal"), the cells' formulas and
the PyTorch lines that compute them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..activations import get_activation
from .axes import kind_of
from .formulas import (
    TORCH_ACTIVATIONS,
    activation_formulas,
    cell_ref,
    flip_formulas,
    formula_facts,
    joined_sum,
    scaled,
    shifted,
)
from .model import Event
from .padding_phases import source_rows_and_columns

__all__ = [
    "ROW_LETTERS",
    "SEQUENCE_AXES_WORDS",
    "SEQUENCE_DEFAULT_SHAPES",
    "engine_loop_order",
    "sequence_events",
    "sequence_formulas",
    "sequence_letters",
    "sequence_loop_words",
    "sequence_spec",
    "sequence_torch_setup",
]

ROW_LETTERS = "ikhy"  # the loops over a row axis: one pass each in a sequence

# the default x and w of a Conv1d trace, per layout (a sequence of 8, a kernel of 3)
SEQUENCE_DEFAULT_SHAPES = {
    "NCL": {"x": [1, 1, 8], "w": [1, 1, 3]},
    "NLC": {"x": [1, 8, 1], "w": [3, 1, 1]},
}

SEQUENCE_AXES_WORDS = {
    ("x", "NCL"): "(N, C, L)",
    ("x", "NLC"): "(N, L, C)",
    ("w", "NCL"): "(F, C/groups, K)",
    ("w", "NLC"): "(K, C/groups, F)",
    ("dout", "NCL"): "(N, F, L_out)",
    ("dout", "NLC"): "(N, L_out, F)",
}

# the loop letters of a sequence in words (the others as Conv2d's, loops.LOOP_WORDS)
_LOOP_WORDS = {"j": "output position", "l": "kernel tap", "x": "position in the padded input"}


def sequence_letters(letters: str) -> str:
    """A view's loop letters without the row letters: "nfij" -> "nfj"."""
    return "".join(c for c in letters if c not in ROW_LETTERS)


def engine_loop_order(order: str, letters: str) -> str:
    """A sequence's loop order (``sequence_letters(letters)`` permuted) as the engine's:
    the row letters of ``letters`` outermost (each loop has one pass)."""
    return "".join(c for c in letters if c in ROW_LETTERS) + order


def sequence_loop_words(names: Mapping[str, str]) -> dict[str, str]:
    """The header's ``loop_names`` of a sequence: Conv2d's without the row letters, the
    column letters in a sequence's words."""
    return {k: _LOOP_WORDS.get(k, v) for k, v in names.items() if k not in ROW_LETTERS}


def sequence_events(events: Iterator[Event]) -> Iterator[Event]:
    """The events with the row letters left out of each ``loop`` (their index is 0)."""
    for event in events:
        loop = event["loop"]
        if any(k in ROW_LETTERS for k in loop):
            event = {**event, "loop": {k: v for k, v in loop.items() if k not in ROW_LETTERS}}
        yield event


def _shown_shape(name: str, shape: tuple[int, ...], layout: str) -> list[int]:
    """The internal one-row ``shape`` of tensor ``name`` as ``layout`` shows it (its
    kind's permutation: (N, C, L) or (N, L, C); (F, C/g, K) or (K, C/g, F))."""
    return [shape[p] for p in kind_of(name).perm(layout)]


def sequence_spec(rc: Any) -> dict[str, Any]:
    """The header's ``spec`` of a Conv1d trace: the layer's geometry in a sequence's
    words, and the trace's settings (the keys of Conv2d's, one number per axis)."""
    spec = rc.spec
    _, _, left, right = spec.padding
    return {
        "layer": "conv1d",
        "x_shape": _shown_shape("x", spec.x_shape, rc.layout),
        "w_shape": _shown_shape("w", spec.w_shape, rc.layout),
        "out_shape": _shown_shape("out", spec.out_shape, rc.layout),
        "padded_shape": _shown_shape("xp", spec.padded_shape, rc.layout),
        "padding": [left, right],
        **({"causal": True} if rc.causal else {}),
        "stride": [spec.stride[1]],
        "dilation": [spec.dilation[1]],
        "groups": spec.groups,
        "kernel_extent": [spec.kernel_extent[1]],
        "reached": spec.reached_hw[1],
        **rc.header_settings(sequence_letters(rc.loop_order), sequence_letters(rc.dx_loop_order)),
    }


def sequence_torch_setup(rc: Any) -> list[str]:
    """The lines that define xp, z and out (and wf with ``flip``) from the request's x,
    w and b (NLC through NCL and back, as F.conv1d takes NCL)."""
    spec, nlc = rc.spec, rc.layout == "NLC"
    _, _, left, right = spec.padding
    kernel = "wf" if rc.flip else "w"
    x = "x.permute(0, 2, 1)" if nlc else "x"
    w = f"{kernel}.permute(2, 1, 0)" if nlc else kernel
    mode = "" if rc.padding_mode == "zeros" else f", mode={rc.padding_mode!r}"
    padded = f"F.pad({x}, ({left}, {right}){mode})"
    back = ".permute(0, 2, 1)" if nlc else ""
    bias = "b" if rc.has_bias else "None"
    conv = f"F.conv1d(xp{'.permute(0, 2, 1)' if nlc else ''}, {w}, {bias}, stride={spec.stride[1]}, "
    conv += f"dilation={spec.dilation[1]}, groups={spec.groups})"
    act = TORCH_ACTIVATIONS[get_activation(rc.activation.name).name]
    return [
        *([f"wf = torch.flip(w, ({0 if nlc else 2},))"] if rc.flip else []),
        f"xp = {padded}{back}" if any(spec.padding) else "xp = x",
        f"z = {conv}{back}",
        f"out = {act.format('z')}",
    ]


def sequence_formulas(
    rc: Any, names: set[str], inputs: set[str], aliases: dict[str, str], renames: dict[str, str]
) -> dict[str, dict[str, str]]:
    """{tensor: {"formula", "torch"}} of a Conv1d trace's tensors ``names`` that are not
    ``inputs`` (as ``formulas.tensor_formulas`` gives Conv2d's, in a sequence's letters:
    l a position, k a kernel tap)."""
    spec, layout = rc.spec, rc.layout
    act = get_activation(rc.activation.name)
    s, d, g = spec.stride[1], spec.dilation[1], spec.groups
    left = spec.padding[2]
    cg, fg = spec.channels_per_group, spec.filters_per_group
    engine_names = {**aliases, **renames}
    shown = lambda engine: engine_names.get(engine, engine)  # noqa: E731
    at = lambda out, k: joined_sum(scaled(s, out), scaled(d, k))  # noqa: E731
    group_channel = "c" if g == 1 else f"{cg}f+c" if fg == 1 else f"{cg}·(f//{fg})+c"
    window = cell_ref(shown("xp"), layout, {"n": "n", "c": group_channel, "l": at("l", "k")})
    kernel = {"f": "f", "c": "c", "k": "k"}
    bias = " + b[f]" if "b" in names else ""
    conv = f"Σ_{{c,k}} {window} · {cell_ref(shown('w'), layout, kernel)}{bias}"
    image, output = {"n": "n", "c": "c", "l": "l"}, {"n": "n", "f": "f", "l": "l"}
    dz = cell_ref(shown("dz"), layout, output)
    formulas = {
        "xp": f"{cell_ref('xp', layout, image)} = {cell_ref('x', layout, {**image, 'l': shifted('l', -left)})} inside x, "
        "0 on the padding",
        **activation_formulas(layout, output, conv, act, "z" in names, dz),
        "db": f"db[f] = Σ_{{n,l}} {dz}",
        "dw": f"{cell_ref(shown('dw'), layout, kernel)} = Σ_{{n,l}} {dz} · {window}",
        "dxp": (
            f"{cell_ref(shown('dxp'), layout, image)} = Σ over f{' in the group of c' if g > 1 else ''} and (k, t) "
            f"with {at('t', 'k')} = l: {cell_ref(shown('dz'), layout, {'n': 'n', 'f': 'f', 'l': 't'})} · "
            f"{cell_ref(shown('w'), layout, {**kernel, 'c': 'c' if g == 1 else f'c mod {cg}'})}"
        ),
        "dx": f"{cell_ref('dx', layout, image)} = {cell_ref('dxp', layout, {**image, 'l': shifted('l', left)})}",
    }
    if rc.padding_mode != "zeros":
        _, cols = source_rows_and_columns(spec, rc.padding_mode)
        formulas["xp"] = (
            f"{cell_ref('xp', layout, image)} = {cell_ref('x', layout, {**image, 'l': 'q[l]'})} with q = {cols}"
        )
        formulas["xp"] += f" ({rc.padding_mode})"
        folded = cell_ref("dxp", layout, {**image, "l": "l′"})
        formulas["dx"] = (
            f"{cell_ref('dx', layout, image)} = Σ over l′ with q[l′] = l: {folded}, q = {cols} ({rc.padding_mode})"
        )
    if rc.flip:
        turned = {**kernel, "k": f"{spec.KW - 1}−k"}
        formulas.update(flip_formulas(layout, kernel, turned))
    return formula_facts(formulas, names - inputs, aliases, engine_names, layout)
