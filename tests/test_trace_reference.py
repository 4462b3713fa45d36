"""Property: the fast generators yield the events of the plain loops, byte for byte.

``convcore.trace.reference`` writes the direct view's phases (window and mac
granularity, fused and separate backward) and the forward window phase the transposed
view shares as the loops a student writes, one event per iteration, every gradient
accumulated with ``+=``. Over random specs, data (normal floats or small integers, so
that equal values, zeros and −0 occur), loop orders, layouts and phases, the trace
made with them must encode to the same JSON as ``build_trace``'s, plain and
``arrays=True``. (im2col's and the transposed backward's generators are plain loops
themselves, one Python iteration per event: there is no fast path to hold to them.)
"""

from __future__ import annotations

import numpy as np
import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import TRACE_MODES, conv_cases, examples
from trace_checks import case_config, nhwc_config

from convcore.trace import build_trace
from convcore.trace.reference import reference_trace

VIEW_MODES = [mode for mode in TRACE_MODES if mode[0] != "im2col"]  # im2col: no fast path
NUMPY = orjson.OPT_SERIALIZE_NUMPY


def _config(case, mode, data, phases, order, nhwc) -> dict:
    view, granularity, backward = mode
    config = case_config(case, view=view, granularity=granularity, backward=backward, phases=phases)
    if data == "integers":  # ties, zeros and −0 products: the shared-row paths
        for key in ("x", "w", "dout", "b"):
            if key in config:
                config[key] = np.round(2 * np.asarray(config[key])).tolist()
    letters = "".join(order) if granularity == "mac" else "".join(c for c in order if c in "nfij")
    if view == "direct":
        config["loop_order"] = letters
        if backward == "separate":
            config["dx_loop_order"] = letters[::-1]
    return nhwc_config(config) if nhwc else config


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    conv_cases(max_n=2, max_cf=3, max_hw=6, max_k=3, max_stride=3, max_dilation=2),
    st.sampled_from(VIEW_MODES),
    st.sampled_from(["normal", "integers"]),
    st.sampled_from(["both", "forward", "backward"]),
    st.permutations("nfijckl"),
    st.booleans(),
)
def test_fast_generators_equal_the_plain_loops(case, mode, data, phases, order, nhwc):
    config = _config(case, mode, data, phases, order, nhwc)
    reference = orjson.dumps(reference_trace(config))
    assert orjson.dumps(build_trace(config)) == reference
    assert orjson.dumps(build_trace(config, arrays=True), option=NUMPY) == reference


def test_the_reference_replaces_the_fast_generators():
    """The reference is not the fast code under another name: its phases run other
    generators, and a wrong loop there shows up as different bytes."""
    import convcore.trace.reference as ref

    config = {
        "x": {"fill": "randint", "shape": [1, 2, 4, 4], "low": -2, "high": 2, "seed": 3},
        "w": {"fill": "randint", "shape": [2, 2, 2, 2], "low": -1, "high": 1, "seed": 4},
        "b": [1, -1],
        "dout": {"fill": "randint", "low": -2, "high": 2, "seed": 5},
    }
    assert orjson.dumps(reference_trace(config)) == orjson.dumps(build_trace(config))
    original = ref.ordered
    try:  # the same loops in another order: other events, so other bytes
        ref.ordered = lambda order, canonical, sizes: original(order[::-1], canonical, sizes)
        assert orjson.dumps(reference_trace(config)) != orjson.dumps(build_trace(config))
    finally:
        ref.ordered = original
