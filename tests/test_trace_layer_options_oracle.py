"""Property: traces with a padding mode or a flipped kernel replay to what PyTorch computes.

Over 300 hypothesis specs each (every geometry conv2d takes, tests/strategies.py), with
a random view, granularity, backward mode, copies, activation and layout: the trace is
built, its events replayed from zero (``convcore.trace.replay``), and the replayed out,
dx, dw and db are held to PyTorch's ``F.conv2d`` of ``F.pad(x, padding, mode)`` (of
``torch.flip(w, (2, 3))`` with flip) and its autograd, float64, a random upstream
gradient, relative error ≤ 1e-10 (tests/layer_oracle.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from layer_oracle import PROPERTY, assert_all_close, fitting_mode, torch_conv2d, torch_grads
from oracle import TORCH_ACTIVATIONS, require_torch
from strategies import conv_cases
from trace_checks import case_config, to_internal

from convcore.padding_modes import PADDING_MODES
from convcore.trace import build_trace, replay
from convcore.trace.views import get_view, view_names

pytestmark = pytest.mark.oracle

CASES = conv_cases(max_n=2, max_cf=3, max_hw=6, max_k=3, max_stride=3, max_dilation=2)


@st.composite
def trace_settings(draw) -> dict:
    """A view with one of its granularities, a backward mode, copies and an activation."""
    view = draw(st.sampled_from(view_names()))
    return {
        "view": view,
        "granularity": draw(st.sampled_from(get_view(view).granularities)),
        "backward": draw(st.sampled_from(["fused", "separate"])),
        "copies": draw(st.sampled_from(["one", "each"])),
        "activation": draw(st.sampled_from(sorted(TORCH_ACTIVATIONS))),
    }


def _check_trace_against_torch(case, padding_mode: str, flip: bool, settings: dict, nhwc: bool) -> None:
    torch = require_torch()
    assume(fitting_mode(case.spec, padding_mode))
    x, w, b, dout = case.arrays()
    activation, conv = TORCH_ACTIVATIONS[settings["activation"]], torch_conv2d(case.spec, padding_mode, flip)
    layer = lambda xt, wt, bt: activation(torch, conv(xt, wt, bt))  # noqa: E731

    config = case_config(case, nhwc=nhwc, padding_mode=padding_mode, flip=flip, **settings)
    doc = build_trace(config)
    state = replay(doc)
    layout = doc["spec"]["layout"]
    traced = lambda name: to_internal(name, np.asarray(state[doc["aliases"].get(name, name)]), layout)  # noqa: E731
    db = traced("db") if b is not None else dout.sum(axis=(0, 2, 3))  # (no bias: not in the trace)
    assert_all_close((traced("out"), traced("dx"), traced("dw"), db), torch_grads(layer, x, w, b, dout))


@PROPERTY
@given(case=CASES, padding_mode=st.sampled_from(PADDING_MODES), settings=trace_settings(), nhwc=st.booleans())
def test_traces_with_a_padding_mode_replay_to_torch(case, padding_mode, settings, nhwc):
    _check_trace_against_torch(case, padding_mode, False, settings, nhwc)


@PROPERTY
@given(case=CASES, padding_mode=st.sampled_from(PADDING_MODES), settings=trace_settings(), nhwc=st.booleans())
def test_traces_of_a_true_convolution_replay_to_torch(case, padding_mode, settings, nhwc):
    _check_trace_against_torch(case, padding_mode, True, settings, nhwc)
