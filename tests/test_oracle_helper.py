"""tests/oracle.py itself: a missing torch skips locally and fails under CI=true."""

from __future__ import annotations

import sys

import numpy as np
import oracle
import pytest


@pytest.fixture
def torch_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` raise ImportError


def test_missing_torch_skips_outside_ci(torch_missing, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="torch is not installed"):
        oracle.require_torch()


def test_missing_torch_fails_under_ci(torch_missing, monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        oracle.require_torch()


@pytest.mark.oracle
def test_torch_layer_pads_each_side_as_told():
    x = np.arange(9.0).reshape(1, 1, 3, 3)
    w = np.ones((1, 1, 1, 1))
    dout = np.arange(1.0, 1.0 + 5 * 6).reshape(1, 1, 5, 6)
    expected = oracle.torch_layer(x, w, None, dout, padding=(2, 0, 1, 2))
    out, dx, dw, db = expected.out, expected.dx, expected.dw, expected.db
    assert out.shape == (1, 1, 5, 6)
    np.testing.assert_array_equal(out[0, 0, 2:, 1:4], x[0, 0])  # top 2, left 1
    assert not out[0, 0, :2].any() and not out[0, 0, :, [0, 4, 5]].any()
    np.testing.assert_array_equal(dx[0, 0], dout[0, 0, 2:, 1:4])
    assert db.tolist() == [dout.sum()] and dw.item() == pytest.approx((x[0, 0] * dout[0, 0, 2:, 1:4]).sum())


@pytest.mark.oracle
def test_torch_layer_applies_the_activation_and_returns_dz():
    rng = np.random.default_rng(0)
    x, w, b = rng.normal(size=(2, 2, 4, 4)), rng.normal(size=(3, 2, 2, 2)), rng.normal(size=3)
    dout = rng.normal(size=(2, 3, 3, 3))
    plain = oracle.torch_layer(x, w, b, dout)
    relu = oracle.torch_layer(x, w, b, dout, activation="relu")
    np.testing.assert_array_equal(relu.z, plain.z)
    np.testing.assert_array_equal(relu.out, np.maximum(plain.z, 0))
    np.testing.assert_array_equal(relu.dz, dout * (plain.z > 0))
    np.testing.assert_array_equal(plain.dz, dout)
    assert (relu.z < 0).any() and not np.allclose(relu.dx, plain.dx)
    assert set(relu.results(bias=False)) == {"z", "out", "dz", "dx", "dw"}
    ones = oracle.torch_layer(x, w, b)
    np.testing.assert_allclose(ones.db, [18.0, 18.0, 18.0])  # dout None: ones, 2·3·3 per filter
