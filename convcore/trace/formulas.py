"""A cell's closed form and the PyTorch expression that computes it: the header's
``formula`` and ``torch`` facts, per tensor, and ``torch_setup``.

``formula``: the tensor's cell in closed form, in the header's axis letters and axis
order, with the spec's numbers put in (stride, dilation, padding, groups): for stride 2,
``dw[f,c,kh,kw] = Σ_{n,h,w} dz[n,f,h,w] · xp[n,c,2h+kh,2w+kw]``.

``torch``: a Python expression that computes the cell with PyTorch, with ``{axis}``
placeholders for the cell's index along each of the header's axes of that tensor
(``out[{n}, {f}, {h}, {w}]``). It runs after the header's ``torch_setup`` lines, with
``import torch``, ``import torch.nn.functional as F`` and the request's ``x``, ``w``,
``b`` and ``dout`` as float64 tensors in the request's layout that require grad
(tests/test_trace_formulas.py runs every one against the header's numbers).

Only the direct computation's tensors have them (x, xp, w, b, z, out, dout, dz, db, dw,
dxp, dx, and with ``flip`` wf and dwf); a tensor standing for another (the header's
``aliases``) is not in the header.
"""

from __future__ import annotations

from typing import Any

from ..activations import Activation, get_activation
from .aliases import FLIP_RENAMES
from .axes import kind_of
from .padding_phases import source_rows_and_columns

__all__ = [
    "TORCH_ACTIVATIONS",
    "activation_formulas",
    "cell_ref",
    "flip_formulas",
    "formula_facts",
    "joined_sum",
    "scaled",
    "shifted",
    "tensor_formulas",
    "torch_setup",
]

# each activation as PyTorch writes it ("{}": its argument)
TORCH_ACTIVATIONS = {
    "identity": "{}",
    "relu": "torch.relu({})",
    "leaky_relu": "F.leaky_relu({}, 0.01)",
    "sigmoid": "torch.sigmoid({})",
    "tanh": "torch.tanh({})",
}


def scaled(scale: int, letter: str) -> str:
    return letter if scale == 1 else f"{scale}{letter}"


def joined_sum(*parts: str) -> str:
    return "+".join(p for p in parts if p) or "0"


def shifted(letter: str, k: int) -> str:
    """``h+1``, ``h−1`` or ``h``."""
    return letter if k == 0 else f"{letter}+{k}" if k > 0 else f"{letter}−{-k}"


def cell_ref(name: str, layout: str, at: dict[str, str]) -> str:
    """``name[...]`` with the index expression of each internal axis ``at`` gives, in the
    layout's axis order."""
    return f"{name}[{','.join(at[a] for a in kind_of(name).axes_in(layout))}]"


def activation_formulas(
    layout: str, output: dict[str, str], conv: str, act: Activation, has_z: bool, dz: str
) -> dict[str, str]:
    """z's, out's and dz's formulas, as a Conv2d's and a Conv1d's trace give them:
    ``output`` an output cell's index by axis, ``conv`` the sum z is, ``dz`` dz's cell;
    without a z (``has_z`` False) out is the sum itself."""
    z, out = cell_ref("z", layout, output), cell_ref("out", layout, output)
    return {
        "z": f"{z} = {conv}",
        "out": f"{out} = {act.name}({z})" if has_z else f"{out} = {conv}",
        "dz": f"{dz} = {cell_ref('dout', layout, output)} · {act.name}'({z})",
    }


def flip_formulas(layout: str, kernel: dict[str, str], turned: dict[str, str]) -> dict[str, str]:
    """With ``flip``: the turned kernel wf and the gradient of the given w, ``kernel`` a
    kernel cell's index by axis and ``turned`` the one turned 180°."""
    return {
        "w": f"{cell_ref('wf', layout, kernel)} = {cell_ref('w', layout, turned)}",
        "dw_given": f"{cell_ref('dw', layout, kernel)} = {cell_ref('dwf', layout, turned)}",
    }


def _cell(name: str, layout: str) -> str:
    """The torch index of a cell: ``[{n}, {f}, {h}, {w}]`` in the layout's axis order."""
    return "[" + ", ".join(f"{{{a}}}" for a in kind_of(name).axes_in(layout)) + "]"


def _pad_line(spec: Any, nhwc: bool, padding_mode: str) -> str:
    """``xp = F.pad(x, …)`` (``xp = x`` without padding)."""
    t, bo, le, r = spec.padding
    if not any(spec.padding):
        return "xp = x"
    if padding_mode == "zeros":
        return f"xp = F.pad(x, (0, 0, {le}, {r}, {t}, {bo}))" if nhwc else f"xp = F.pad(x, ({le}, {r}, {t}, {bo}))"
    # F.pad's modes that copy pad the last two axes: NHWC goes through NCHW and back
    padded = f"F.pad({'x.permute(0, 3, 1, 2)' if nhwc else 'x'}, ({le}, {r}, {t}, {bo}), mode={padding_mode!r})"
    return f"xp = {padded}{'.permute(0, 2, 3, 1)' if nhwc else ''}"


def torch_setup(
    spec: Any, layout: str, activation: str, bias: bool, padding_mode: str = "zeros", flip: bool = False
) -> list[str]:
    """The lines that define xp, z and out (and wf with ``flip``) from x, w and b (see
    the module's doc)."""
    (sh, sw), (dh, dw), g = spec.stride, spec.dilation, spec.groups
    nhwc = layout == "NHWC"
    kernel = "wf" if flip else "w"
    xp = "xp.permute(0, 3, 1, 2)" if nhwc else "xp"
    w = f"{kernel}.permute(3, 2, 0, 1)" if nhwc else kernel
    conv = f"F.conv2d({xp}, {w}, {'b' if bias else 'None'}, stride=({sh}, {sw}), dilation=({dh}, {dw}), groups={g})"
    act = TORCH_ACTIVATIONS[get_activation(activation).name]
    turn = [f"wf = torch.flip(w, {(0, 1) if nhwc else (2, 3)})"] if flip else []
    return [
        *turn,
        _pad_line(spec, nhwc, padding_mode),
        f"z = {conv}{'.permute(0, 2, 3, 1)' if nhwc else ''}",
        f"out = {act.format('z')}",
    ]


def tensor_formulas(
    spec: Any,
    layout: str,
    activation: str,
    names: set[str],
    inputs: set[str],
    aliases: dict[str, str],
    padding_mode: str = "zeros",
    flip: bool = False,
) -> dict[str, dict[str, str]]:
    """{tensor: {"formula": text, "torch": expression template}} for the header's tensors
    ``names`` that are not ``inputs`` (see the module's doc); ``aliases``: the header's,
    {engine name: the tensor standing for it}; ``padding_mode`` and ``flip`` as the
    trace config's."""
    act = get_activation(activation)
    (sh, sw), (dh, dw), g = spec.stride, spec.dilation, spec.groups
    t, _, le, _ = spec.padding
    cg, fg = spec.channels_per_group, spec.filters_per_group
    renames = FLIP_RENAMES if flip else {}
    engine_names = {**aliases, **renames}
    shown = lambda engine: engine_names.get(engine, engine)  # noqa: E731 (the name the header uses)
    row = lambda out, k: joined_sum(scaled(sh, out), scaled(dh, k))  # noqa: E731
    col = lambda out, k: joined_sum(scaled(sw, out), scaled(dw, k))  # noqa: E731
    group_channel = "c" if g == 1 else f"{cg}f+c" if fg == 1 else f"{cg}·(f//{fg})+c"
    window = cell_ref(shown("xp"), layout, {"n": "n", "c": group_channel, "h": row("h", "kh"), "w": col("w", "kw")})
    bias = " + b[f]" if "b" in names else ""
    kernel = {"f": "f", "c": "c", "kh": "kh", "kw": "kw"}
    turned = {"f": "f", "c": "c", "kh": f"{spec.KH - 1}−kh", "kw": f"{spec.KW - 1}−kw"}
    conv = f"Σ_{{c,kh,kw}} {window} · {cell_ref(shown('w'), layout, kernel)}{bias}"
    image = {"n": "n", "c": "c", "h": "h", "w": "w"}
    output = {"n": "n", "f": "f", "h": "h", "w": "w"}
    dz = cell_ref(shown("dz"), layout, output)
    formulas = {
        "xp": f"{cell_ref('xp', layout, image)} = {cell_ref('x', layout, {**image, 'h': shifted('h', -t), 'w': shifted('w', -le)})} inside x, 0 on the padding",
        **activation_formulas(layout, output, conv, act, "z" in names, dz),
        "db": f"db[f] = Σ_{{n,h,w}} {dz}",
        "dw": f"{cell_ref(shown('dw'), layout, kernel)} = Σ_{{n,h,w}} {dz} · {window}",
        "dxp": (
            f"{cell_ref(shown('dxp'), layout, image)} = Σ over f{' in the group of c' if g > 1 else ''} and (kh, kw, i, j) "
            f"with {row('i', 'kh')} = h, {col('j', 'kw')} = w: "
            f"{cell_ref(shown('dz'), layout, {'n': 'n', 'f': 'f', 'h': 'i', 'w': 'j'})} · "
            f"{cell_ref(shown('w'), layout, {**kernel, 'c': 'c' if g == 1 else f'c mod {cg}'})}"
        ),
        "dx": f"{cell_ref('dx', layout, image)} = {cell_ref('dxp', layout, {**image, 'h': shifted('h', t), 'w': shifted('w', le)})}",
    }
    if padding_mode != "zeros":
        rows, cols = source_rows_and_columns(spec, padding_mode)
        copied = cell_ref("x", layout, {**image, "h": "r[h]", "w": "q[w]"})
        folded = cell_ref("dxp", layout, {**image, "h": "h′", "w": "w′"})
        formulas["xp"] = f"{cell_ref('xp', layout, image)} = {copied} with r = {rows}, q = {cols} ({padding_mode})"
        formulas["dx"] = (
            f"{cell_ref('dx', layout, image)} = Σ over h′, w′ with r[h′] = h, q[w′] = w: {folded}, "
            f"r = {rows}, q = {cols} ({padding_mode})"
        )
    if flip:
        formulas.update(flip_formulas(layout, kernel, turned))
    return formula_facts(formulas, names - inputs, aliases, engine_names, layout)


def formula_facts(
    formulas: dict[str, str], names: set[str], aliases: dict[str, str], engine_names: dict[str, str], layout: str
) -> dict[str, dict[str, str]]:
    """{tensor: {"formula", "torch"}} for the header's tensors ``names`` from the
    engine's ``formulas`` (by engine name): a tensor standing for an engine tensor (dx
    for dxp without padding) takes its formula; ``engine_names``: {engine name: the
    header's name} (the aliases and renames)."""
    grad = {"dz": "z", "db": "b", "dw": "w", "dwf": "wf", "dxp": "xp", "dx": "x"}
    out: dict[str, dict[str, str]] = {}
    for name in sorted(names):
        engine = next((e for e, a in engine_names.items() if a == name and e in formulas), name)
        if name not in formulas and engine == name:
            continue
        formula = formulas[engine] if engine != name else formulas[name]
        if engine in aliases:
            formula = formula.replace(f"{engine}[", f"{name}[", 1)
        of = grad.get(name) or grad.get(engine)
        if of:
            expr = f"torch.autograd.grad(out, {of}, dout, retain_graph=True)[0]{_cell(name, layout)}"
        else:  # (xp, z, out, wf: torch_setup defines each)
            expr = f"{name}{_cell(name, layout)}"
        out[name] = {"formula": formula, "torch": expr}
    return out
