"""Hypothesis strategies for conv specs, shared by the core and trace property tests."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from hypothesis import assume, settings
from hypothesis import strategies as st

from convcore import ConvSpec, ConvSpecError


def examples(n: int) -> int:
    """A property test's example count: ``n`` under the "ci" profile (hypothesis's 100
    examples by default, what make test and CI run), scaled down with the profile that
    conftest.py loaded (make check's "dev" has 25: a quarter, never fewer than 5)."""
    scale = settings.default.max_examples
    return n if scale >= 100 else max(5, n * scale // 100)


def randint(shape: list[int], low: int, high: int, seed: int) -> dict:
    """A randint fill spec (integers low … high)."""
    return {"fill": "randint", "shape": shape, "low": low, "high": high, "seed": seed}


def small_ints(x_shape: list[int], w_shape: list[int], dout_shape: list[int], seed: int) -> dict:
    """x, w and dout of a config as the default fills make them: x and dout in [−2, 2],
    w in [−1, 1], seeds ``seed``, ``seed + 1``, ``seed + 2``."""
    return {
        "x": randint(x_shape, -2, 2, seed),
        "w": randint(w_shape, -1, 1, seed + 1),
        "dout": randint(dout_shape, -2, 2, seed + 2),
    }


# every view x granularity x backward mode the trace engine has
TRACE_MODES = [
    ("direct", "window", "fused"),
    ("direct", "window", "separate"),
    ("direct", "mac", "fused"),
    ("direct", "mac", "separate"),
    ("im2col", "window", "fused"),
    ("transposed", "window", "fused"),
]


@dataclass(frozen=True)
class ConvCase:
    """A valid spec with the PyTorch-style arguments it was made from."""

    x_shape: tuple[int, int, int, int]
    w_shape: tuple[int, int, int, int]
    stride: object
    padding: object
    dilation: object
    groups: int
    bias: bool
    seed: int

    @property
    def spec(self) -> ConvSpec:
        return ConvSpec.create(self.x_shape, self.w_shape, self.stride, self.padding, self.dilation, self.groups)

    def kwargs(self) -> dict:
        return dict(stride=self.stride, padding=self.padding, dilation=self.dilation, groups=self.groups)

    def arrays(self):
        """x: (N, C, H, W), w: (F, C/g, KH, KW), b: (F,) or None, dout: (N, F, Ho, Wo); all random."""
        rng = np.random.default_rng(self.seed)
        x = rng.normal(size=self.x_shape)
        w = rng.normal(size=self.w_shape)
        b = rng.normal(size=self.w_shape[0]) if self.bias else None
        dout = rng.normal(size=self.spec.out_shape)
        return x, w, b, dout


def _pair(low: int, high: int):
    return st.one_of(st.integers(low, high), st.tuples(st.integers(low, high), st.integers(low, high)))


paddings = st.one_of(
    st.integers(0, 2),
    st.tuples(st.integers(0, 2), st.integers(0, 2)),
    st.tuples(*(st.integers(0, 3) for _ in range(4))),
    st.sampled_from(["same", "valid"]),
)


@st.composite
def conv_cases(draw, max_n=3, max_cf=4, max_hw=9, max_k=5, max_stride=3, max_dilation=3):
    """Valid conv specs over every parameter: batch, groups dividing C and F, non-square
    kernels, per-axis stride and dilation, every padding form, with and without bias."""
    groups = draw(st.integers(1, max_cf))
    c = groups * draw(st.integers(1, max(1, max_cf // groups)))
    f = groups * draw(st.integers(1, max(1, max_cf // groups)))
    x_shape = (draw(st.integers(1, max_n)), c, draw(st.integers(1, max_hw)), draw(st.integers(1, max_hw)))
    w_shape = (f, c // groups, draw(st.integers(1, max_k)), draw(st.integers(1, max_k)))
    case = ConvCase(
        x_shape,
        w_shape,
        draw(_pair(1, max_stride)),
        draw(paddings),
        draw(_pair(1, max_dilation)),
        groups,
        draw(st.booleans()),
        draw(st.integers(0, 2**32 - 1)),
    )
    try:
        case.spec  # noqa: B018 - making the spec is the check
    except ConvSpecError:
        assume(False)
    return case


@st.composite
def cs231n_cases(draw, max_n=3, max_cf=4, max_hw=9, max_k=5, max_stride=3, max_pad=2):
    """Valid specs in CS231n's conventions (seed 004): one stride, ``pad`` zeros on every
    side, no dilation, no groups, a bias; the kernel always fits the padded input."""
    pad, stride = draw(st.integers(0, max_pad)), draw(st.integers(1, max_stride))
    h, w = draw(st.integers(1, max_hw)), draw(st.integers(1, max_hw))
    kh, kw = draw(st.integers(1, min(max_k, h + 2 * pad))), draw(st.integers(1, min(max_k, w + 2 * pad)))
    c, f = draw(st.integers(1, max_cf)), draw(st.integers(1, max_cf))
    n, seed = draw(st.integers(1, max_n)), draw(st.integers(0, 2**32 - 1))
    return ConvCase((n, c, h, w), (f, c, kh, kw), stride, pad, 1, 1, True, seed)


def _symmetric(case: ConvCase) -> bool:
    top, bottom, left, right = case.spec.padding
    return top == bottom and left == right


def torch_style_cases(**limits):
    """``conv_cases`` in the PyTorch-style convention's reach (``conv2d_forward(x, w, b,
    stride, padding, dilation, groups)``): the padding the same on both sides of an
    axis; always a bias (its backward always returns db)."""
    return conv_cases(**limits).filter(_symmetric).map(lambda case: replace(case, bias=True))
