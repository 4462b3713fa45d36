"""ConvSpec: padding resolution, output size, and every error with its message."""

from __future__ import annotations

import math

import numpy as np
import pytest

from convcore import ConvSpec, ConvSpecError, conv2d_backward, conv2d_forward


def test_output_size_floor_and_padding_forms():
    spec = ConvSpec.create((1, 3, 7, 7), (2, 3, 3, 3), stride=2, padding=1)
    assert spec.padding == (1, 1, 1, 1)
    assert spec.out_shape == (1, 2, 4, 4)
    assert ConvSpec.create((1, 1, 5, 6), (1, 1, 3, 3), padding=(1, 2)).padding == (1, 1, 2, 2)
    assert ConvSpec.create((1, 1, 5, 6), (1, 1, 3, 3), padding=[0, 1, 2, 3]).padding == (0, 1, 2, 3)
    assert ConvSpec.create((1, 1, 5, 6), (1, 1, 3, 3), padding="valid").padding == (0, 0, 0, 0)
    # floor truncation: (6 + 0 - 3) // 2 + 1 = 2 windows reach rows 0..4, row 5 is never read
    spec = ConvSpec.create((1, 1, 6, 6), (1, 1, 3, 3), stride=2)
    assert spec.out_hw == (2, 2)
    assert spec.reached_hw == (5, 5)


@pytest.mark.parametrize("size", range(1, 12))
@pytest.mark.parametrize("stride", [1, 2, 3])
@pytest.mark.parametrize("kernel,dilation", [(1, 1), (2, 1), (3, 1), (4, 1), (3, 2), (2, 3)])
def test_same_padding_follows_tensorflow(size, stride, kernel, dilation):
    spec = ConvSpec.create((1, 1, size, size), (1, 1, kernel, kernel), stride=stride, padding="same", dilation=dilation)
    top, bottom, left, right = spec.padding
    extent = dilation * (kernel - 1) + 1
    total = max((math.ceil(size / stride) - 1) * stride + extent - size, 0)
    assert spec.out_hw == (math.ceil(size / stride),) * 2
    assert (top + bottom, left + right) == (total, total)
    assert bottom - top in (0, 1) and (top, bottom) == (left, right)


def test_same_padding_even_kernel_is_asymmetric():
    spec = ConvSpec.create((1, 1, 4, 4), (1, 1, 2, 2), padding="same")
    assert spec.padding == (0, 1, 0, 1)  # the odd pixel goes to the bottom/right


def test_same_with_even_kernel_and_dilation():
    spec = ConvSpec.create((1, 1, 5, 5), (1, 1, 4, 3), padding="same", dilation=(1, 2))
    assert spec.out_hw == (5, 5)
    assert spec.padding == (1, 2, 2, 2)  # rows: 3 in all, odd one at the bottom; columns: 5-wide extent


@pytest.mark.parametrize(
    "kwargs, field, fragments",
    [
        (dict(stride=0), "stride", ["stride", "at least 1", "0"]),
        (dict(stride=(1, -2)), "stride", ["stride", "-2"]),
        (dict(stride=1.5), "stride", ["stride", "1.5"]),
        (dict(dilation=0), "dilation", ["dilation", "1 means none", "0"]),
        (dict(padding=-1), "padding", ["padding", "negative", "-1"]),
        (dict(padding=(0, 0, -2, 0)), "padding", ["padding", "-2"]),
        (dict(padding=(1, 2, 3)), "padding", ["padding", "got 3"]),
        (dict(padding="full"), "padding", ["padding", "'full'", "same", "valid"]),
        (dict(groups=0), "groups", ["groups", "0"]),
        (dict(groups=True), "groups", ["groups", "True"]),
    ],
)
def test_parameter_errors_name_the_field_and_numbers(kwargs, field, fragments):
    with pytest.raises(ConvSpecError) as err:
        ConvSpec.create((1, 2, 5, 5), (2, 2, 3, 3), **kwargs)
    assert err.value.field == field
    for fragment in fragments:
        assert fragment in str(err.value)
    assert isinstance(err.value, ValueError)


@pytest.mark.parametrize(
    "x_shape, w_shape, kwargs, field, fragments",
    [
        ((1, 4, 5, 5), (2, 2, 3, 3), dict(groups=3), "groups", ["groups=3", "C=4"]),
        ((1, 4, 5, 5), (3, 2, 3, 3), dict(groups=2), "groups", ["groups=2", "F=3"]),
        ((1, 4, 5, 5), (2, 4, 3, 3), dict(groups=2), "w", ["4 input channels", "4/2 = 2"]),
        ((1, 3, 5, 5), (2, 2, 3, 3), {}, "w", ["2 input channels", "3/1 = 3"]),
        (
            (1, 1, 4, 4),
            (1, 1, 3, 3),
            dict(dilation=2),
            "w",
            ["kernel spans 5 rows", "dilation 2", "padded input has 4"],
        ),
        (
            (1, 1, 4, 9),
            (1, 1, 2, 6),
            dict(padding=(0, 0, 1, 0), dilation=2),
            "w",
            ["kernel spans 11 columns", "padded input has 10"],
        ),
        ((1, 1, 2, 2), (1, 1, 3, 3), {}, "w", ["kernel spans 3 rows", "padded input has 2"]),
        ((1, 5, 5), (1, 1, 3, 3), {}, "x", ["4 dimensions", "got 3", "(1, 5, 5)"]),
        ((1, 1, 5, 5), (1, 3, 3), {}, "w", ["4 dimensions", "got 3"]),
        ((1, 0, 5, 5), (1, 1, 3, 3), {}, "x", ["at least 1", "(1, 0, 5, 5)"]),
    ],
)
def test_shape_errors(x_shape, w_shape, kwargs, field, fragments):
    with pytest.raises(ConvSpecError) as err:
        ConvSpec.create(x_shape, w_shape, **kwargs)
    assert err.value.field == field
    for fragment in fragments:
        assert fragment in str(err.value), str(err.value)


def test_padding_rescues_a_kernel_larger_than_the_input():
    spec = ConvSpec.create((1, 1, 2, 2), (1, 1, 3, 3), padding=1)
    assert spec.out_hw == (2, 2)


def test_bias_and_dout_shapes_are_checked():
    x, w = np.zeros((1, 2, 4, 4)), np.zeros((3, 2, 3, 3))
    with pytest.raises(ConvSpecError, match=r"b has shape \(2,\), expected \(3,\)") as err:
        conv2d_forward(x, w, np.zeros(2))
    assert err.value.field == "b"
    with pytest.raises(ConvSpecError, match=r"dout has shape \(1, 3, 3, 3\), expected \(1, 3, 2, 2\)") as err:
        conv2d_backward(np.zeros((1, 3, 3, 3)), x, w)
    assert err.value.field == "dout"


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values_are_rejected(bad):
    x = np.zeros((1, 1, 3, 3))
    x[0, 0, 1, 2] = bad
    with pytest.raises(ConvSpecError) as err:
        conv2d_forward(x, np.ones((1, 1, 2, 2)))
    assert err.value.field == "x"
    assert "x[0][0][1][2]" in str(err.value)


def test_numpy_integer_arguments_are_accepted():
    spec = ConvSpec.create((1, 1, 5, 5), (1, 1, 3, 3), stride=np.int64(2), padding=np.int32(1))
    assert spec.stride == (2, 2) and spec.padding == (1, 1, 1, 1)


def test_groups_bookkeeping():
    spec = ConvSpec.create((1, 6, 5, 5), (4, 3, 3, 3), groups=2)
    assert spec.channels_per_group == 3 and spec.filters_per_group == 2
    assert list(spec.channels_of_filter(0)) == [0, 1, 2]
    assert list(spec.channels_of_filter(3)) == [3, 4, 5]
    assert spec.macs_per_output == 27


def test_to_dict_is_plain_data():
    d = ConvSpec.create((2, 3, 7, 7), (4, 3, 3, 3), stride=2, padding="same").to_dict()
    assert d["out_shape"] == [2, 4, 4, 4]
    assert d["padding"] == [1, 1, 1, 1]
    assert all(isinstance(v, (list, int)) for v in d.values())


def test_shorten_caps_what_a_message_shows_of_a_value():
    from convcore.messages import shorten

    assert shorten("abc") == "'abc'"
    assert shorten(3) == "3" and shorten(2**62) == "4611686018427387904"
    long = shorten("v" * 900_000)
    assert long.startswith("'vvv") and long.endswith("…") and len(long) <= 40
    assert shorten(10**400) == "100000000000… (401 digits)"
    assert "digits" in shorten(-(10**5000))  # beyond Python's int-to-text limit, no error
    assert len(shorten(list(range(150_000)))) <= 40
    nested = [1]
    for _ in range(5000):
        nested = [nested]
    assert len(shorten(nested)) <= 40


def test_spec_errors_do_not_echo_a_long_value():
    with pytest.raises(ConvSpecError, match=r"\(401 digits\)") as info:
        ConvSpec.create((1, 3, 5, 5), (1, 3, 3, 3), groups=10**400)
    assert len(str(info.value)) < 200
    with pytest.raises(ConvSpecError) as info:
        ConvSpec.create((1, 1, 5, 5), (1, 1, 3, 3), stride=list(range(100_000)))
    assert info.value.field == "stride" and len(str(info.value)) < 200


@pytest.mark.parametrize(
    ("kwargs", "same_as", "w_shape"),
    [
        ({"stride": 2**62}, {"stride": 3}, (2, 3, 3, 3)),
        ({"stride": (1, 2**63 - 1)}, {"stride": (1, 3)}, (2, 3, 3, 3)),
        ({"dilation": 2**62}, {}, (2, 3, 1, 1)),
        ({"dilation": (2**62, 1), "stride": (2**62, 1)}, {"stride": (9, 1)}, (2, 3, 1, 2)),
    ],
)
def test_huge_stride_or_dilation_on_a_one_window_axis(kwargs, same_as, w_shape):
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(2, 3, 5, 5)), rng.normal(size=w_shape)
    out = conv2d_forward(x, w, **kwargs)
    np.testing.assert_array_equal(out, conv2d_forward(x, w, **same_as))
    dout = rng.normal(size=out.shape)
    for got, expected in zip(conv2d_backward(dout, x, w, **kwargs), conv2d_backward(dout, x, w, **same_as)):
        np.testing.assert_array_equal(got, expected)


def test_a_geometry_numpy_cannot_index_is_refused():
    with pytest.raises(ConvSpecError, match=r"stride must be at most 2\^63 − 1") as info:
        ConvSpec.create((1, 1, 5, 5), (1, 1, 3, 3), stride=2**63)
    assert info.value.field == "stride"
    with pytest.raises(ConvSpecError, match="dilation") as info:
        ConvSpec.create((1, 1, 5, 5), (1, 1, 1, 1), dilation=(1, 10**30))
    assert info.value.field == "dilation"
    with pytest.raises(ConvSpecError, match="padded input") as info:
        ConvSpec.create((1, 1, 5, 5), (1, 1, 3, 3), padding=2**40)
    assert info.value.field == "padding"


@pytest.mark.parametrize("bad", [(1, 1, "5", 5), (1, 1, 5.7, 5), (1, True, 5, 5), "1155", 7])
def test_shapes_must_be_integers(bad):
    with pytest.raises(ConvSpecError, match="x shape must be a sequence of ints") as info:
        ConvSpec.create(bad, (1, 1, 3, 3))
    assert info.value.field == "x"


def test_numpy_integer_shapes_are_fine():
    spec = ConvSpec.create(np.array([1, 1, 5, 5]), tuple(np.int64(d) for d in (1, 1, 3, 3)))
    assert spec.out_shape == (1, 1, 3, 3) and all(type(d) is int for d in spec.x_shape)


@pytest.mark.parametrize(
    "value, expected",
    [
        (3, True),
        (np.int64(3), True),
        (np.int8(-1), True),
        (np.array(3), True),
        (0, True),
        (True, False),
        (np.True_, False),
        (3.0, False),
        (np.float64(3), False),
        ("3", False),
        (None, False),
    ],
)
def test_one_integer_check_for_every_module(value, expected):
    from convcore.values import is_int

    assert is_int(value) is expected


@pytest.mark.parametrize("where", ["stride", "fill seed", "compat dilation"])
def test_a_bool_is_not_an_int_anywhere(where):
    from convcore.compat.layer import Conv2D
    from convcore.fill import make_tensor

    with pytest.raises(ConvSpecError):
        if where == "stride":
            ConvSpec.create((1, 1, 5, 5), (1, 1, 3, 3), stride=True)
        elif where == "fill seed":
            make_tensor({"fill": "normal", "shape": [2], "seed": True}, "x")
        else:
            Conv2D(n_out=1, kernel_shape=(1, 1), dilation=True)
