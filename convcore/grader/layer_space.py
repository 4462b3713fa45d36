"""The grader's search space for the layers beside Conv2d (``convcore.grader.space``
has Conv2d's): the edge cases always tried, and a hypothesis strategy over the rest.

Sizes stay small, so that a counterexample can be checked by hand: a ConvTranspose2d
with H, W ≤ 4 (its output is larger than its input), kernels ≤ 3, stride ≤ 3, padding
≤ 2, output_padding below the stride or the dilation, dilation ≤ 2, groups ≤ 2; a
Conv1d with L ≤ 9, K ≤ 3, stride ≤ 3, padding ≤ 2 or causal, dilation ≤ 2, groups ≤ 2.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from ..mistakes.layer_cases import Conv1dCase, TransposedCase

__all__ = ["conv1d_cases", "conv1d_edge_cases", "transposed_cases", "transposed_edge_cases"]

MAX_N, MAX_PER_GROUP, MAX_HW, MAX_L, MAX_K, MAX_STRIDE, MAX_PAD, MAX_DILATION, MAX_GROUPS = 2, 3, 4, 9, 3, 3, 2, 2, 2


def transposed_edge_cases() -> list[TransposedCase]:
    """A plain 3×3 input with a 3×3 kernel and padding 1, then one case per edge
    (padding 0, stride 2 with and without output_padding, H ≠ W, KH ≠ KW, N, C_in and
    C_out 2, dilation 2, groups 2), then all at once, integer then float inputs."""
    base = TransposedCase(h=3, w=3, kh=3, kw=3, padding=(1, 1))
    edges = [
        base,
        replace(base, padding=(0, 0)),
        replace(base, stride=(2, 2), output_padding=(1, 1)),
        replace(base, stride=(2, 2)),
        replace(base, w=4),
        replace(base, kw=2),
        replace(base, n=2),
        replace(base, cg=2),
        replace(base, fg=2),
        replace(base, dilation=(2, 2)),
        replace(base, groups=2),
    ]
    every = TransposedCase(
        n=2,
        fg=2,
        groups=2,
        h=3,
        w=4,
        kh=3,
        kw=2,
        stride=(2, 3),
        padding=(1, 0),
        output_padding=(1, 2),
        dilation=(2, 1),
    )
    return edges + [every, replace(every, values="float")]


def conv1d_edge_cases() -> list[Conv1dCase]:
    """A plain length-5 input with a 3-tap kernel and padding 1, then one case per edge
    (padding 0, stride 2, causal, causal with dilation 2, dilation 2, N, C and F 2,
    groups 2), then all at once (causal, stride 2, dilation 2, two groups), integer then
    float inputs."""
    base = Conv1dCase(length=5, k=3, padding=1)
    edges = [
        base,
        replace(base, padding=0),
        replace(base, length=6, stride=2),
        replace(base, padding="causal"),
        replace(base, padding="causal", dilation=2),
        replace(base, dilation=2),
        replace(base, n=2),
        replace(base, cg=2),
        replace(base, fg=2),
        replace(base, groups=2),
    ]
    every = Conv1dCase(n=2, fg=2, groups=2, length=7, k=3, stride=2, padding="causal", dilation=2)
    return edges + [every, replace(every, values="float")]


def _batch_groups_values(draw) -> dict:
    """The fields both layers draw alike: N, groups, channels per group (C and F up to
    3, or up to 4 in two groups), the kind of inputs and their seed."""
    groups = draw(st.integers(1, MAX_GROUPS))
    per_group = MAX_PER_GROUP if groups == 1 else 2
    return {
        "n": draw(st.integers(1, MAX_N)),
        "cg": draw(st.integers(1, per_group)),
        "fg": draw(st.integers(1, per_group)),
        "groups": groups,
        "values": draw(st.sampled_from(("int", "float"))),
        "seed": draw(st.integers(0, 2**16)),
    }


@st.composite
def _drawn_transposed(draw) -> TransposedCase:
    stride = tuple(draw(st.integers(1, MAX_STRIDE)) for _ in range(2))
    dilation = tuple(draw(st.integers(1, MAX_DILATION)) for _ in range(2))
    return TransposedCase(
        h=draw(st.integers(1, MAX_HW)),
        w=draw(st.integers(1, MAX_HW)),
        kh=draw(st.integers(1, MAX_K)),
        kw=draw(st.integers(1, MAX_K)),
        stride=stride,
        padding=tuple(draw(st.integers(0, MAX_PAD)) for _ in range(2)),
        output_padding=tuple(draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dilation)),
        dilation=dilation,
        **_batch_groups_values(draw),
    )


@st.composite
def _drawn_conv1d(draw) -> Conv1dCase:
    return Conv1dCase(
        length=draw(st.integers(1, MAX_L)),
        k=draw(st.integers(1, MAX_K)),
        stride=draw(st.integers(1, MAX_STRIDE)),
        padding=draw(st.sampled_from((0, 1, 2, "causal"))),
        dilation=draw(st.integers(1, MAX_DILATION)),
        **_batch_groups_values(draw),
    )


def transposed_cases() -> st.SearchStrategy[TransposedCase]:
    """Valid TransposedCases (a drawn geometry whose output would be empty is redrawn)."""
    return _drawn_transposed().filter(lambda case: case.valid)


def conv1d_cases() -> st.SearchStrategy[Conv1dCase]:
    """Valid Conv1dCases (a drawn geometry whose kernel does not fit is redrawn)."""
    return _drawn_conv1d().filter(lambda case: case.valid)
