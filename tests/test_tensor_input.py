"""to_array: accepted inputs, and every error message with its index path and numbers."""

from __future__ import annotations

import numpy as np
import pytest

import convcore.tensor_input as tensor_input
from convcore import conv2d_forward
from convcore.spec import ConvSpecError
from convcore.tensor_input import to_array


def reject(value, name="x", **kwargs) -> str:
    with pytest.raises(ConvSpecError) as info:
        to_array(value, name, **kwargs)
    assert info.value.field == name
    return str(info.value)


# -- accepted ---------------------------------------------------------------------------


def test_nested_lists_and_tuples_of_numbers():
    arr = to_array([[1, 2.5], (3, np.int64(4))], "x")
    assert arr.dtype == np.float64 and arr.tolist() == [[1.0, 2.5], [3.0, 4.0]]


def test_numpy_arrays_are_converted_and_copied():
    source = np.arange(6, dtype=np.int32).reshape(2, 3)
    arr = to_array(source, "x", ndim=2)
    assert arr.dtype == np.float64 and arr.tolist() == source.tolist()
    floats = np.ones((2, 2))
    out = to_array(floats, "x")
    out[0, 0] = 5.0
    assert floats[0, 0] == 1.0


def test_a_list_of_arrays():
    arr = to_array([np.arange(3), np.arange(3) + 3], "x")
    assert arr.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_fill_spec_dict():
    arr = to_array({"fill": "arange", "shape": [1, 1, 2, 2]}, "x", ndim=4)
    assert arr.tolist() == [[[[0.0, 1.0], [2.0, 3.0]]]]


def test_a_scalar_when_no_ndim_is_required():
    assert to_array(3, "b").shape == ()


def test_rectangular_input_is_not_walked_in_python(monkeypatch):
    # ~100k elements: the explanation walk must not run when NumPy converts in one go.
    def walk_forbidden(*args):
        raise AssertionError("the per-element walk ran on valid input")

    monkeypatch.setattr(tensor_input, "_explain", walk_forbidden)
    big = np.random.default_rng(0).integers(-5, 5, size=(4, 16, 40, 40)).tolist()
    assert to_array(big, "x", ndim=4, max_abs=10).shape == (4, 16, 40, 40)


def test_functional_delegates_to_to_array():
    with pytest.raises(ConvSpecError) as info:
        conv2d_forward([[[[1, 2], [3]]]], np.ones((1, 1, 1, 1)))
    assert info.value.field == "x" and "x[0][0][1] has 1 item but x[0][0][0] has 2" in str(info.value)
    out = conv2d_forward({"fill": "ones", "shape": [1, 1, 3, 3]}, np.ones((1, 1, 2, 2)))
    assert out.tolist() == [[[[4.0, 4.0], [4.0, 4.0]]]]


# -- ragged, empty and mixed nesting --------------------------------------------------------


def test_ragged_rows_name_both_index_paths_and_lengths():
    message = reject([[[1, 2, 3, 4, 5], [1, 2, 3, 4]]])
    assert message == "x[0][1] has 4 items but x[0][0] has 5"


def test_ragged_deeper_in_the_tensor_compares_with_the_first_of_that_depth():
    x = [[[[0] * 3] * 3], [[[0] * 3, [0] * 3, [0] * 2]]]
    assert reject(x) == "x[1][0][2] has 2 items but x[0][0][0] has 3"


def test_ragged_outer_dimension():
    assert reject([[[1, 2]], [[1, 2]], [[1, 2], [3, 4]]]) == "x[2] has 2 items but x[0] has 1"


def test_a_number_where_a_list_belongs():
    message = reject([[1, 2], 3])
    assert "x[1] is 3" in message and "list of 2 items" in message and "x[0]" in message


def test_a_list_where_a_number_belongs():
    assert reject([[1, [2, 3]]]) == "x[0][1] is a list of 2 items but x[0][0] is a number"


def test_empty_lists():
    assert reject([]) == "x is empty; every dimension needs at least one item"
    assert reject([[1], []]).startswith("x[1] is empty")
    assert reject([[], []]).startswith("x[0] is empty")
    assert "(2, 0)" in reject(np.zeros((2, 0)))


# -- values that are not finite numbers -------------------------------------------------------


def test_a_string_names_its_index_and_value():
    x = [[[[0, 0], [0, 0], [0, 0]], [[0, 0], [0, 0], [0, "a"]]]]
    assert reject(x) == "x[0][1][2][1] is 'a', not a number"


def test_numeric_strings_are_not_numbers_either():
    assert reject([["1.5", 2]]) == "x[0][0] is '1.5', not a number"


@pytest.mark.parametrize("flag", [True, False])
def test_booleans_are_not_numbers_even_among_numbers(flag):
    message = reject([[1, 2], [3, flag]])
    assert message.startswith(f"x[1][1] is {flag}, not a number")


def test_boolean_arrays_are_rejected_with_an_index():
    assert reject(np.array([[1, 0], [0, 1]], dtype=bool)).startswith("x[0][0] is True")


def test_null():
    assert reject([[1, None]], name="w") == "w[0][1] is None, not a number"


@pytest.mark.parametrize(
    "bad, words", [(float("nan"), "is NaN"), (float("inf"), "is Infinity"), (float("-inf"), "is -Infinity")]
)
def test_non_finite_values_name_the_index(bad, words):
    x = np.zeros((1, 2, 3, 3))
    x[0, 1, 2, 0] = bad
    assert reject(x).startswith(f"x[0][1][2][0] {words}")
    assert reject(x.tolist()).startswith(f"x[0][1][2][0] {words}")


def test_an_integer_too_large_for_float64():
    message = reject([[1, 10**400]])
    assert message.startswith("x[0][1] is an integer with 401 digits")


def test_values_beyond_max_abs_name_index_value_and_limit():
    x = [[0.5, -2.0], [1e6, 3.0]]
    message = reject(x, max_abs=1000)
    assert message == "x[1][0] is 1000000, beyond the limit: |value| must be at most 1000"
    assert to_array(x, "x", max_abs=1e6)[1, 0] == 1e6  # the limit itself is allowed


def test_wrong_number_of_dimensions_with_and_without_axis_words():
    message = reject(np.zeros((1, 5, 5)), ndim=4, axes="(N, C, H, W)")
    assert message == "x must have 4 dimensions (N, C, H, W), got 3: shape (1, 5, 5)"
    assert reject([1, 2], name="w", ndim=4) == "w must have 4 dimensions, got 1: shape (2,)"


def test_max_elements_for_lists_and_fill_specs():
    assert "limit is 3" in reject([1, 2, 3, 4], max_elements=3)
    assert "limit is 100" in reject({"fill": "zeros", "shape": [10, 11]}, max_elements=100)


def test_fill_spec_errors_carry_the_tensor_name():
    message = reject({"fill": "randint", "shape": [1, 1, 5, 5], "low": 3, "high": 1}, name="w")
    assert message.startswith("w.low ")
    assert "3" in message and "1" in message


def test_other_objects():
    assert reject("abc") == "x is 'abc', not a number"
    assert reject([[1, {"a": 1}]]).startswith("x[0][1] is {'a': 1}, not a number")


def test_nesting_deeper_than_numpy_iterates_is_refused_by_its_depth():
    deep = 1.0
    for _ in range(40):
        deep = [deep]
    assert reject(deep, ndim=4, axes="(N, C, H, W)").startswith(
        "x must have 4 dimensions (N, C, H, W), got 40: shape (1, 1, 1"
    )
    assert reject(deep) == "x has lists nested 40 deep; at most 32 dimensions are supported"
    assert "70 dimensions" in reject({"fill": "zeros", "shape": [1] * 70})
    assert to_array(deep[0][0][0][0][0][0][0][0], "x").ndim == 32  # 32 is fine
