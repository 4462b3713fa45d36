"""Fill specs: determinism, ranges, shapes, defaults, sentences and every rejection."""

from __future__ import annotations

import numpy as np
import pytest

from convcore.fill import FILLS, describe, make_tensor, parse_fill
from convcore.spec import ConvSpecError

SHAPE = [2, 3, 4, 5]


def spec(fill: str, **params) -> dict:
    return {"fill": fill, "shape": SHAPE, **params}


@pytest.mark.parametrize("fill", ["randint", "normal", "uniform"])
def test_random_fills_are_deterministic_per_seed(fill):
    a = make_tensor(spec(fill, seed=7))
    b = make_tensor(spec(fill, seed=7))
    c = make_tensor(spec(fill, seed=8))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("fill", list(FILLS))
def test_every_fill_gives_float64_of_the_shape(fill):
    t = make_tensor(spec(fill))
    assert t.shape == tuple(SHAPE) and t.dtype == np.float64
    assert np.isfinite(t).all()


def test_randint_is_inclusive_and_integer():
    t = make_tensor({"fill": "randint", "shape": [2000], "low": -3, "high": 1, "seed": 1})
    assert set(np.unique(t).tolist()) == {-3.0, -2.0, -1.0, 0.0, 1.0}


def test_randint_defaults_are_minus_two_to_two_seed_zero():
    t = make_tensor({"fill": "randint", "shape": [2000]})
    assert set(np.unique(t).tolist()) == {-2.0, -1.0, 0.0, 1.0, 2.0}
    np.testing.assert_array_equal(t, make_tensor({"fill": "randint", "shape": [2000], "low": -2, "high": 2, "seed": 0}))


def test_randint_with_low_equal_high_is_constant():
    assert make_tensor({"fill": "randint", "shape": [3], "low": 4, "high": 4}).tolist() == [4.0, 4.0, 4.0]


def test_normal_mean_and_std():
    t = make_tensor({"fill": "normal", "shape": [20000], "mean": 3.0, "std": 0.5, "seed": 2})
    assert abs(t.mean() - 3.0) < 0.02 and abs(t.std() - 0.5) < 0.02
    np.testing.assert_array_equal(
        make_tensor({"fill": "normal", "shape": [50]}),
        make_tensor({"fill": "normal", "shape": [50], "mean": 0, "std": 1, "seed": 0}),
    )


def test_uniform_range_and_defaults():
    t = make_tensor({"fill": "uniform", "shape": [5000], "low": 2, "high": 2.5, "seed": 3})
    assert t.min() >= 2.0 and t.max() < 2.5 and t.max() - t.min() > 0.45
    d = make_tensor({"fill": "uniform", "shape": [5000]})
    assert d.min() >= -1.0 and d.max() < 1.0 and d.min() < -0.9 and d.max() > 0.9


def test_arange_counts_in_row_major_order():
    t = make_tensor({"fill": "arange", "shape": [2, 3], "start": 1, "step": 0.5})
    assert t.tolist() == [[1.0, 1.5, 2.0], [2.5, 3.0, 3.5]]
    assert make_tensor({"fill": "arange", "shape": [1, 4]}).tolist() == [[0.0, 1.0, 2.0, 3.0]]


def test_linspace_hits_both_ends():
    t = make_tensor({"fill": "linspace", "shape": [1, 5], "start": -1, "stop": 1})
    assert t.tolist() == [[-1.0, -0.5, 0.0, 0.5, 1.0]]
    d = make_tensor({"fill": "linspace", "shape": [3]})
    assert d.tolist() == [0.0, 0.5, 1.0]


def test_zeros_ones_constant():
    assert make_tensor({"fill": "zeros", "shape": [2]}).tolist() == [0.0, 0.0]
    assert make_tensor({"fill": "ones", "shape": [2]}).tolist() == [1.0, 1.0]
    assert make_tensor({"fill": "constant", "shape": [2], "value": -2.5}).tolist() == [-2.5, -2.5]
    assert make_tensor({"fill": "constant", "shape": [2]}).tolist() == [1.0, 1.0]


def test_seed_is_accepted_and_ignored_by_deterministic_fills():
    np.testing.assert_array_equal(
        make_tensor({"fill": "arange", "shape": [4], "seed": 5}), make_tensor({"fill": "arange", "shape": [4]})
    )


def test_parse_fill_knows_the_size_before_generating():
    parsed = parse_fill({"fill": "zeros", "shape": [1000, 1000, 1000]})
    assert parsed.size == 10**9 and parsed.shape == (1000, 1000, 1000)


@pytest.mark.parametrize(
    "fill_spec, sentence",
    [
        ({"fill": "randint", "shape": [1, 3, 5, 5], "seed": 7}, "1×3×5×5 random integers in [−2, 2], seed 7"),
        ({"fill": "randint", "shape": [4], "low": 0, "high": 9}, "4 random integers in [0, 9], seed 0"),
        ({"fill": "normal", "shape": [2, 2], "std": 0.5}, "2×2 normal samples with mean 0 and std 0.5, seed 0"),
        ({"fill": "uniform", "shape": [3], "seed": 1}, "3 uniform samples in [−1, 1), seed 1"),
        ({"fill": "arange", "shape": [1, 1, 3, 3]}, "1×1×3×3 values counting from 0 in steps of 1"),
        ({"fill": "linspace", "shape": [5], "start": -1.5}, "5 values evenly spaced from −1.5 to 1"),
        ({"fill": "zeros", "shape": [1, 1, 2, 2]}, "1×1×2×2 zeros"),
        ({"fill": "ones", "shape": [3]}, "3 ones"),
        ({"fill": "constant", "shape": [2], "value": 0.25}, "2 values all equal to 0.25"),
    ],
)
def test_describe(fill_spec, sentence):
    assert describe(fill_spec) == sentence


def reject(fill_spec, name=None, max_elements=None) -> ConvSpecError:
    with pytest.raises(ConvSpecError) as info:
        make_tensor(fill_spec, name=name, max_elements=max_elements)
    return info.value


def test_unknown_fill_lists_the_choices():
    err = reject({"fill": "gaussian", "shape": [2]})
    assert err.field == "fill"
    assert "'gaussian'" in str(err) and all(repr(name) in str(err) for name in FILLS)
    assert reject({"shape": [2]}).field == "fill"


def test_with_a_tensor_name_the_field_is_the_tensor_and_the_key_is_in_the_message():
    err = reject({"fill": "gaussian", "shape": [2]}, name="x")
    assert err.field == "x" and str(err).startswith("x.fill ")
    err = reject({"fill": "randint", "shape": [2], "mean": 0}, name="w")
    assert err.field == "w" and str(err).startswith("w.mean ")


@pytest.mark.parametrize(
    "fill_spec, field, fragments",
    [
        ({"fill": "randint", "shape": [2], "mean": 1}, "mean", ["'randint'", "low, high"]),
        ({"fill": "zeros", "shape": [2], "value": 1}, "value", ["no parameters"]),
        ({"fill": "zeros"}, "shape", ["missing"]),
        ({"fill": "zeros", "shape": []}, "shape", ["at least one dimension"]),
        ({"fill": "zeros", "shape": [1, 0, 3]}, "shape", ["at least 1", "[1, 0, 3]"]),
        ({"fill": "zeros", "shape": [2, -1]}, "shape", ["[2, -1]"]),
        ({"fill": "zeros", "shape": [1.5]}, "shape", ["list of integers", "1.5"]),
        ({"fill": "zeros", "shape": [True]}, "shape", ["list of integers"]),
        ({"fill": "zeros", "shape": "5x5"}, "shape", ["'5x5'"]),
        ({"fill": "normal", "shape": [2], "seed": -1}, "seed", ["non-negative", "-1"]),
        ({"fill": "normal", "shape": [2], "seed": 1.5}, "seed", ["1.5"]),
        ({"fill": "randint", "shape": [2], "low": 0.5}, "low", ["integer", "0.5"]),
        ({"fill": "randint", "shape": [2], "high": 10**20}, "high", ["integer", str(10**20)]),
        ({"fill": "randint", "shape": [2], "low": 3, "high": 1}, "low", ["low = 3", "high = 1"]),
        ({"fill": "uniform", "shape": [2], "low": 1, "high": -1}, "low", ["low = 1", "high = −1"]),
        ({"fill": "normal", "shape": [2], "std": -0.5}, "std", ["−0.5"]),
        ({"fill": "normal", "shape": [2], "mean": float("nan")}, "mean", ["finite", "nan"]),
        ({"fill": "constant", "shape": [2], "value": "3"}, "value", ["'3'"]),
        ({"fill": "constant", "shape": [2], "value": True}, "value", ["True"]),
    ],
)
def test_bad_specs_name_the_key_and_the_numbers(fill_spec, field, fragments):
    err = reject(fill_spec)
    assert err.field == field, str(err)
    for fragment in fragments:
        assert fragment in str(err), str(err)


def test_not_a_dict():
    err = reject([1, 2, 3], name="x")
    assert err.field == "x" and "list" in str(err)


def test_max_elements_is_checked_before_generating():
    err = reject({"fill": "zeros", "shape": [1000, 1000, 1000]}, name="x", max_elements=10_000)
    assert err.field == "x" and "1000000000" in str(err) and "10000" in str(err)
    assert make_tensor({"fill": "zeros", "shape": [100, 100]}, max_elements=10_000).size == 10_000


def test_overflowing_values_are_rejected():
    err = reject({"fill": "arange", "shape": [3], "step": 1e308}, name="x")
    assert err.field == "x" and "overflows" in str(err)


def test_parameters_float64_cannot_hold_are_refused_naming_them():
    from convcore.fill import parse_fill
    from convcore.spec import ConvSpecError

    with pytest.raises(ConvSpecError) as info:
        parse_fill({"fill": "normal", "shape": [1, 1, 5, 5], "mean": 10**400}, "x")
    assert info.value.field == "x"
    assert str(info.value) == "x.mean must be a finite number, got 100000000000… (401 digits)"
    with pytest.raises(ConvSpecError) as info:
        parse_fill({"fill": "uniform", "shape": [1, 1, 5, 5], "low": -1.7e308, "high": 1.7e308}, "x")
    assert info.value.field == "x"
    assert str(info.value).startswith("x.high minus low overflows float64: low = −1.7e+308, high = 1.7e+308")
