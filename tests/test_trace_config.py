"""resolve_config: defaults, and every invalid value named with its key and the allowed values."""

from __future__ import annotations

import numpy as np
import pytest

from convcore import ConvSpecError
from convcore.trace import DEFAULTS, TraceConfigError, count_events, iter_trace, resolve_config


def test_defaults_give_the_documented_trace():
    rc = resolve_config({})
    assert rc.spec.x_shape == (1, 1, 5, 5) and rc.spec.w_shape == (1, 1, 3, 3)
    assert rc.b is None and not rc.dout_given and np.array_equal(rc.dout, np.ones((1, 1, 3, 3)))
    assert (rc.layout, rc.view, rc.granularity, rc.backward, rc.phases) == ("NCHW", "direct", "window", "fused", "both")
    assert rc.loop_order == rc.dx_loop_order == "nfij"
    assert rc.activation.name == "identity"
    assert set(np.unique(rc.x)) <= {-2, -1, 0, 1, 2} and set(np.unique(rc.w)) <= {-1, 0, 1}
    assert resolve_config(None).spec == rc.spec
    assert resolve_config(rc) is rc
    # None means "the default" for every key
    assert resolve_config({k: None for k in DEFAULTS}).spec == rc.spec


def test_nhwc_defaults_are_given_in_nhwc():
    rc = resolve_config({"layout": "NHWC"})
    assert rc.spec.x_shape == (1, 1, 5, 5) and rc.spec.w_shape == (1, 1, 3, 3)


def test_mac_default_loop_order_and_seed_004_orders():
    assert resolve_config({"granularity": "mac"}).loop_order == "nfijckl"
    rc = resolve_config(
        {"granularity": "mac", "backward": "separate", "loop_order": "nfijklc", "dx_loop_order": "nijklfc"}
    )
    assert (rc.loop_order, rc.dx_loop_order) == ("nfijklc", "nijklfc")


ERRORS = [
    ({"view": "sideways"}, "view", ["'direct'", "'sideways'"]),
    ({"granularity": "cell"}, "granularity", ["'window'", "'mac'", "'cell'"]),
    ({"backward": "both"}, "backward", ["'fused'", "'separate'"]),
    ({"phases": "all"}, "phases", ["'forward'", "'backward'", "'both'"]),
    ({"layout": "nchw"}, "layout", ["'NCHW'", "'NHWC'"]),
    ({"activation": "gelu"}, "activation", ["'relu'", "'tanh'", "'gelu'"]),
    ({"loop_order": "nfi"}, "loop_order", ["'nfij'", "window"]),
    ({"loop_order": "nfii"}, "loop_order", ["'nfij'"]),
    ({"loop_order": 7}, "loop_order", ["'nfij'"]),
    ({"granularity": "mac", "loop_order": "nfij"}, "loop_order", ["'nfijckl'", "mac"]),
    ({"dx_loop_order": "nfjx"}, "dx_loop_order", ["'nfij'"]),
    ({"colour": "red"}, "colour", ["unknown config key", "loop_order"]),
    ({"x": [[[[1, 2], [3]]]]}, "x", ["x[0][0][1] has 1 item but x[0][0][0] has 2"]),
    ({"x": [[1, 2], [3, 4]]}, "x", ["4 dimensions", "(N, C, H, W)"]),
    ({"layout": "NHWC", "x": [[1, 2]]}, "x", ["(N, H, W, C)"]),
    ({"w": [[[[1, "a"]]]]}, "w", ["w[0][0][0][1]", "'a'"]),
    ({"x": {"fill": "nope", "shape": [1, 1, 2, 2]}}, "x", ["'randint'", "'nope'"]),
    ({"stride": 0}, "stride", ["at least 1", "0"]),
    ({"dilation": [1, 0]}, "dilation", ["at least 1"]),
    ({"padding": "full"}, "padding", ["'same'", "'valid'", "'full'"]),
    ({"padding": -1}, "padding", ["negative", "-1"]),
    ({"groups": 2}, "groups", ["groups=2", "C=1"]),
    ({"w": {"fill": "ones", "shape": [1, 1, 7, 3]}}, "w", ["kernel spans 7 rows", "padded input has 5"]),
    ({"b": [1.0, 2.0]}, "b", ["(2,)", "(1,)"]),
    ({"dout": [[[[1.0]]]]}, "dout", ["(1, 1, 1, 1)", "(1, 1, 3, 3)"]),
    ({"layout": "NHWC", "dout": [[[[1.0]]]]}, "dout", ["(N, Ho, Wo, F)"]),
    ({"dout": {"fill": "ones", "shape": [1, 1, 2, 2]}}, "dout", ["(1, 1, 2, 2)", "(1, 1, 3, 3)"]),
    ({"dout": {"fill": "normal", "seed": 0, "wobble": 1}}, "dout", ["wobble"]),
    ({"x": [[[[float("nan")]]]]}, "x", ["NaN"]),
]


@pytest.mark.parametrize("config,field,words", ERRORS, ids=[f"{e[1]}-{i}" for i, e in enumerate(ERRORS)])
def test_invalid_values_name_the_key_and_the_allowed_values(config, field, words):
    with pytest.raises(TraceConfigError) as info:
        resolve_config(config)
    assert info.value.field == field
    for word in words:
        assert word in str(info.value)
    assert isinstance(info.value, ConvSpecError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("entry", [count_events, iter_trace])
def test_every_entry_point_validates_before_generating(entry):
    with pytest.raises(TraceConfigError) as info:
        entry({"stride": 0})
    assert info.value.field == "stride"


def test_limits_are_checked_before_a_fill_is_generated():
    with pytest.raises(TraceConfigError) as info:
        resolve_config({"x": {"fill": "ones", "shape": [100, 100, 100, 100]}}, max_elements=1000)
    assert info.value.field == "x" and "1000" in str(info.value)
    with pytest.raises(TraceConfigError) as info:
        resolve_config({"w": [[[[1e9]]]]}, max_abs=1e6)
    assert info.value.field == "w"


def test_the_config_must_be_a_dict():
    with pytest.raises(TraceConfigError) as info:
        resolve_config([1, 2])
    assert info.value.field == "config"


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_a_dout_fill_spec_without_shape_takes_the_output_shape(layout):
    """The page picks a generator for dout without knowing the output size: a dout
    fill spec may omit its shape (or give null), meaning the output's shape in the
    config's layout; the tensor is the one the same spec with that shape gives."""
    x, w = {"fill": "normal", "seed": 3}, {"fill": "normal", "seed": 4}
    nhwc = layout == "NHWC"
    settings = {
        "x": dict(x, shape=[2, 7, 6, 3] if nhwc else [2, 3, 7, 6]),
        "w": dict(w, shape=[3, 2, 3, 4] if nhwc else [4, 3, 3, 2]),
        "stride": [2, 1],
        "padding": 1,
        "layout": layout,
    }
    # F 4, Ho = (7 + 2 - 3) // 2 + 1 = 4, Wo = (6 + 2 - 2) // 1 + 1 = 7
    out_shape = [2, 4, 7, 4] if nhwc else [2, 4, 4, 7]
    spec = {"fill": "randint", "low": -3, "high": 3, "seed": 11}
    shapeless = resolve_config(dict(settings, dout=spec))
    given = resolve_config(dict(settings, dout=dict(spec, shape=out_shape)))
    assert shapeless.dout_given and shapeless.dout.shape == (2, 4, 4, 7)  # internal NCHW
    assert np.array_equal(shapeless.dout, given.dout)
    assert len(np.unique(shapeless.dout)) > 3  # generated, not ones
    assert np.array_equal(resolve_config(dict(settings, dout=dict(spec, shape=None))).dout, given.dout)
    header = next(iter_trace(dict(settings, dout=spec)))
    assert header["spec"]["dout"] == "given" and header["tensors"]["dout"]["shape"] == out_shape
