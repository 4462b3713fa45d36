"""convcore.compare: one tensor against the truth, cell by cell."""

from __future__ import annotations

import numpy as np
import pytest

from convcore.compare import MAX_LISTED, compare_tensor, compare_tensors


def test_equal_tensors_match_within_the_tolerance():
    expected = np.random.default_rng(0).normal(size=(2, 3))
    result = compare_tensor("dx", expected, expected + 1e-12)
    assert result.match and result.kind == "match" and result.differing == []


def test_differing_cells_are_listed_with_both_values():
    expected = np.arange(24.0).reshape(2, 3, 4)
    got = expected.copy()
    got[1, 2, 3] = -1
    got[0, 0, 1] = 7
    result = compare_tensor("dw", expected, got.tolist())
    assert result.kind == "wrong values" and result.differing_count == 2
    assert result.differing == [
        {"index": [0, 0, 1], "flat": 1, "expected": 1.0, "got": 7.0},
        {"index": [1, 2, 3], "flat": 23, "expected": 23.0, "got": -1.0},
    ]


def test_at_most_max_listed_cells_and_the_count_of_all():
    result = compare_tensor("dx", np.zeros(100), np.ones(100))
    assert len(result.differing) == MAX_LISTED and result.differing_count == 100


def test_every_differing_cell_is_named_by_its_flat_index_beyond_the_listed_ones():
    rng = np.random.default_rng(3)
    expected = rng.integers(-5, 6, size=(2, 3, 5, 5)).astype(float)
    got = expected.copy()
    wrong = rng.choice(expected.size, size=37, replace=False)
    got.flat[wrong] += rng.choice([-2.0, 1.0, 0.5], size=wrong.size)
    got.flat[wrong[:3]] = np.nan  # NaN differs from any number
    result = compare_tensor("dx", expected, got)
    assert result.differing_flat == sorted(int(f) for f in wrong)
    assert result.to_dict()["differing_flat"] == result.differing_flat
    assert [d["flat"] for d in result.differing] == result.differing_flat[:MAX_LISTED]
    assert compare_tensor("dx", expected, expected).differing_flat == []


def test_a_different_shape_is_its_own_kind():
    result = compare_tensor("dx", np.zeros((1, 1, 2, 2)), np.zeros((1, 1, 0, 0)))
    assert result.kind == "wrong shape" and result.got_shape == (1, 1, 0, 0)
    assert "shape (1, 1, 0, 0), expected (1, 1, 2, 2)" in result.message


@pytest.mark.parametrize("got", [np.zeros((1, 3)), np.zeros(3)])
def test_a_bias_gradient_as_1_by_f_or_f_is_the_same_shape(got):
    assert compare_tensor("db", np.zeros(3), got).match
    assert compare_tensor("db", np.zeros((1, 3)), got).match


def test_only_db_gets_that_leeway():
    assert compare_tensor("dx", np.zeros(3), np.zeros((1, 3))).kind == "wrong shape"


def test_nan_and_non_numbers_differ():
    result = compare_tensor("out", np.zeros(2), [0.0, float("nan")])
    assert result.differing_count == 1 and result.differing[0]["got"] == "nan"
    assert compare_tensor("out", np.zeros(2), "two zeros").kind == "not numbers"
    assert compare_tensor("out", np.zeros(2), None).kind == "not numbers"


def test_compare_tensors_names_an_unknown_tensor():
    with pytest.raises(KeyError):
        compare_tensors({"dx": np.zeros(1)}, {"dq": [0]})
