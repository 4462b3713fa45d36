"""Layout conversions: round trips, torch's permute, and Box conversion by the constants."""

from __future__ import annotations

import numpy as np
import pytest
from oracle import require_torch

from convcore.layout import (
    HWIO_TO_OIHW,
    NCHW_TO_NHWC,
    NHWC_TO_NCHW,
    OIHW_TO_HWIO,
    hwio_to_oihw,
    inverse_permutation,
    nchw_to_nhwc,
    nhwc_to_nchw,
    oihw_to_hwio,
    permute,
)
from convcore.spec import ConvSpecError

RNG = np.random.default_rng(0)
A = RNG.normal(size=(2, 3, 4, 5))  # four distinct sizes: a wrong permutation changes the shape


def test_round_trips_are_exact():
    np.testing.assert_array_equal(nhwc_to_nchw(nchw_to_nhwc(A)), A)
    np.testing.assert_array_equal(nchw_to_nhwc(nhwc_to_nchw(A)), A)
    np.testing.assert_array_equal(hwio_to_oihw(oihw_to_hwio(A)), A)
    np.testing.assert_array_equal(oihw_to_hwio(hwio_to_oihw(A)), A)


def test_shapes_and_elements_by_meaning():
    n, c, h, w = A.shape
    x_nhwc = nchw_to_nhwc(A)
    assert x_nhwc.shape == (n, h, w, c)
    assert x_nhwc[1, 2, 3, 0] == A[1, 0, 2, 3]
    f, ci, kh, kw = A.shape
    w_hwio = oihw_to_hwio(A)
    assert w_hwio.shape == (kh, kw, ci, f)
    assert w_hwio[3, 4, 2, 1] == A[1, 2, 3, 4]


@pytest.mark.oracle
def test_agree_with_torch_permute():
    torch = require_torch()
    t = torch.tensor(A)
    np.testing.assert_array_equal(nchw_to_nhwc(A), t.permute(0, 2, 3, 1).numpy())
    np.testing.assert_array_equal(nhwc_to_nchw(A), t.permute(0, 3, 1, 2).numpy())
    np.testing.assert_array_equal(oihw_to_hwio(A), t.permute(2, 3, 1, 0).numpy())
    np.testing.assert_array_equal(hwio_to_oihw(A), t.permute(3, 2, 0, 1).numpy())


def test_constants_are_inverse_pairs():
    assert inverse_permutation(NCHW_TO_NHWC) == NHWC_TO_NCHW
    assert inverse_permutation(NHWC_TO_NCHW) == NCHW_TO_NHWC
    assert inverse_permutation(OIHW_TO_HWIO) == HWIO_TO_OIHW
    assert inverse_permutation(HWIO_TO_OIHW) == OIHW_TO_HWIO


def test_permute_converts_shapes_like_the_arrays():
    assert permute(A.shape, NCHW_TO_NHWC) == nchw_to_nhwc(A).shape
    assert permute(A.shape, OIHW_TO_HWIO) == oihw_to_hwio(A).shape
    assert permute(("n", "c", "h", "w"), NCHW_TO_NHWC) == ("n", "h", "w", "c")
    assert permute(("f", "c", "kh", "kw"), OIHW_TO_HWIO) == ("kh", "kw", "c", "f")
    with pytest.raises(ValueError):
        permute((1, 2, 3), NCHW_TO_NHWC)


@pytest.mark.parametrize(
    "perm, convert",
    [
        (NCHW_TO_NHWC, nchw_to_nhwc),
        (NHWC_TO_NCHW, nhwc_to_nchw),
        (OIHW_TO_HWIO, oihw_to_hwio),
        (HWIO_TO_OIHW, hwio_to_oihw),
    ],
)
def test_a_box_permuted_with_the_constant_selects_the_same_cells(perm, convert):
    # A trace Box (start, stop, step per axis) in one layout, converted with the constant,
    # must name the same cells of the converted tensor (in the converted axis order).
    start, stop, step = (1, 0, 1, 0), (2, 3, 4, 5), (1, 2, 2, 3)
    box = tuple(slice(a, b, s) for a, b, s in zip(start, stop, step))
    converted_box = tuple(
        slice(a, b, s) for a, b, s in zip(permute(start, perm), permute(stop, perm), permute(step, perm))
    )
    np.testing.assert_array_equal(convert(A)[converted_box], A[box].transpose(perm))


def test_results_are_contiguous_copies():
    x = A.copy()
    out = nchw_to_nhwc(x)
    assert out.flags["C_CONTIGUOUS"]
    out[0, 0, 0, 0] = 1e9
    assert x[0, 0, 0, 0] == A[0, 0, 0, 0]


def test_wrong_number_of_dimensions_names_the_tensor():
    with pytest.raises(ConvSpecError) as info:
        nchw_to_nhwc(np.zeros((1, 5, 5)))
    assert info.value.field == "x"
    assert "4 dimensions (N, C, H, W)" in str(info.value) and "(1, 5, 5)" in str(info.value)
    with pytest.raises(ConvSpecError) as info:
        hwio_to_oihw(np.zeros((3, 3)), name="W")
    assert info.value.field == "W" and "(KH, KW, C/groups, F)" in str(info.value)
