"""The grader's search space per convention: the edge cases it always tries, and a
hypothesis strategy over the rest.

Sizes are small on purpose (N ≤ 2, C and F ≤ 3 (≤ 4 in two groups), H and W ≤ 7, kernels ≤ 3, stride ≤ 3,
padding ≤ 2, dilation ≤ 2, groups ≤ 2), so that every counterexample can be checked by
hand. The parameters a convention does not have stay at their neutral value: CS231n has
one stride and one padding for every side; the layer has one stride, four paddings and
an activation; the PyTorch-named functions have a stride, a padding and a dilation per
axis and groups. The layers beside Conv2d have theirs in ``convcore.grader.layer_space``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import strategies as st

from ..mistakes.case import ACTIVATION_ORDER, Case
from .layer_space import conv1d_cases, conv1d_edge_cases, transposed_cases, transposed_edge_cases

__all__ = ["cases", "edge_cases"]

MAX_N, MAX_CF, MAX_HW, MAX_K, MAX_STRIDE, MAX_PAD, MAX_DILATION, MAX_GROUPS = 2, 3, 7, 3, 3, 2, 2, 2


# the conventions of the other layers: their edge cases and their strategy
OTHER_LAYERS = {
    "torch-transposed": (transposed_edge_cases, transposed_cases),
    "torch-conv1d": (conv1d_edge_cases, conv1d_cases),
}


def edge_cases(convention: str) -> list[Any]:
    """The cases always tried first, small integer inputs: a plain one, then one per edge
    (padding 0, stride 2, H ≠ W, KH ≠ KW, N = 2, C = 2, F = 2, and the convention's own:
    dilation 2 and groups 2 for torch; uneven padding and each activation for the layer),
    then all of them at once, with integer and then with float inputs. The other layers'
    conventions have their own (``convcore.grader.layer_space``)."""
    if convention in OTHER_LAYERS:
        return OTHER_LAYERS[convention][0]()
    base = Case(h=4, w=4, kh=3, kw=3, padding=(1, 1, 1, 1))
    edges = [
        base,
        replace(base, padding=(0, 0, 0, 0)),
        replace(base, h=5, w=5, stride=(2, 2)),
        replace(base, w=6),
        replace(base, kw=2),
        replace(base, n=2),
        replace(base, cg=2),
        replace(base, fg=2),
    ]
    every = Case(n=2, cg=2, fg=2, h=5, w=6, kh=3, kw=2, stride=(2, 2), padding=(1, 1, 1, 1))
    if convention == "torch":
        edges += [replace(base, h=5, w=5, dilation=(2, 2)), replace(base, groups=2, cg=1, fg=1)]
        every = replace(every, dilation=(2, 1), padding=(1, 1, 2, 2), cg=1, fg=2, groups=2)
    if convention == "layer":
        edges += [replace(base, padding=(0, 1, 1, 0))]
        edges += [replace(base, activation=a) for a in ACTIVATION_ORDER[1:]]
        every = replace(every, padding=(1, 0, 0, 1), activation="tanh")
    return edges + [every, replace(every, values="float")]


def cases(convention: str) -> st.SearchStrategy[Any]:
    """Valid Cases of ``convention`` (a drawn geometry whose kernel does not fit is redrawn)."""
    if convention in OTHER_LAYERS:
        return OTHER_LAYERS[convention][1]()
    return _drawn_cases(convention).filter(lambda case: case.valid)


@st.composite
def _drawn_cases(draw, convention: str) -> Case:
    groups = draw(st.integers(1, MAX_GROUPS)) if convention == "torch" else 1
    per_group = MAX_CF if groups == 1 else 2  # C and F up to 3, or up to 4 in two groups
    stride = draw(st.integers(1, MAX_STRIDE))
    strides = (stride, draw(st.integers(1, MAX_STRIDE)) if convention == "torch" else stride)
    if convention == "cs231n":
        pad = draw(st.integers(0, MAX_PAD))
        padding = (pad,) * 4
    elif convention == "layer":
        padding = tuple(draw(st.integers(0, MAX_PAD)) for _ in range(4))
    else:
        ph, pw = draw(st.integers(0, MAX_PAD)), draw(st.integers(0, MAX_PAD))
        padding = (ph, ph, pw, pw)
    dilation = tuple(draw(st.integers(1, MAX_DILATION)) for _ in range(2)) if convention == "torch" else (1, 1)
    case = Case(
        n=draw(st.integers(1, MAX_N)),
        cg=draw(st.integers(1, per_group)),
        fg=draw(st.integers(1, per_group)),
        groups=groups,
        h=draw(st.integers(1, MAX_HW)),
        w=draw(st.integers(1, MAX_HW)),
        kh=draw(st.integers(1, MAX_K)),
        kw=draw(st.integers(1, MAX_K)),
        stride=strides,
        padding=padding,
        dilation=dilation,
        activation=draw(st.sampled_from(ACTIVATION_ORDER)) if convention == "layer" else "identity",
        values=draw(st.sampled_from(("int", "float"))),
        seed=draw(st.integers(0, 2**16)),
    )
    return case
