"""Property: over random specs, replaying a trace gives what the core and PyTorch give.

Hypothesis draws small specs (N 1–2, C and F 1–3 with groups dividing them, H and W
1–6, kernels 1–3, stride 1–3, dilation 1–2, every padding form, bias on and off),
an activation, a granularity, a backward mode and a layout, with a random dout. Torch
computes the layer forward (conv2d then the activation) and its autograd backward in
float64; the replayed out, dz, dx, dw and db must match it.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import TORCH_ACTIVATIONS
from strategies import conv_cases, examples
from trace_checks import (
    case_config,
    check_replay_matches_torch,
    check_rule2_replay_matches_header_and_core,
    check_rule3_value_is_running_state,
)

from convcore.trace import build_trace

pytestmark = pytest.mark.oracle


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    conv_cases(max_n=2, max_cf=3, max_hw=6, max_k=3, max_stride=3, max_dilation=2),
    st.sampled_from(sorted(TORCH_ACTIVATIONS)),
    st.sampled_from(["window", "mac"]),
    st.sampled_from(["fused", "separate"]),
    st.booleans(),
)
def test_replayed_trace_matches_core_and_torch(case, activation, granularity, backward, nhwc):
    check_replay_matches_torch(case, activation, nhwc, granularity=granularity, backward=backward)


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    conv_cases(max_n=2, max_cf=3, max_hw=5, max_k=3, max_stride=2, max_dilation=2),
    st.sampled_from(["window", "mac"]),
    st.sampled_from(["fused", "separate"]),
    st.permutations("nfijckl"),
)
def test_every_loop_order_replays_to_the_same_gradients(case, granularity, backward, order):
    letters = "".join(order) if granularity == "mac" else "".join(c for c in order if c in "nfij")
    config = case_config(case, granularity=granularity, backward=backward, loop_order=letters)
    if backward == "separate":  # dx_loop_order applies to the separate dx phase only
        config["dx_loop_order"] = letters[::-1]
    check_rule3_value_is_running_state(config)
    doc = build_trace(config)
    assert doc["spec"]["loop_order"] == letters
    check_rule2_replay_matches_header_and_core(config)
