"""tests/oracle.py itself: a missing torch skips locally and fails under CI=true."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import oracle


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
def test_torch_conv_pads_each_side_as_told():
    oracle.require_torch()
    x = np.arange(9.0).reshape(1, 1, 3, 3)
    w = np.ones((1, 1, 1, 1))
    dout = np.arange(1.0, 1.0 + 5 * 6).reshape(1, 1, 5, 6)
    out, dx, dw, db = oracle.torch_conv(x, w, None, dout, 1, (2, 0, 1, 2), 1, 1)
    assert out.shape == (1, 1, 5, 6)
    np.testing.assert_array_equal(out[0, 0, 2:, 1:4], x[0, 0])  # top 2, left 1
    assert not out[0, 0, :2].any() and not out[0, 0, :, [0, 4, 5]].any()
    np.testing.assert_array_equal(dx[0, 0], dout[0, 0, 2:, 1:4])
    assert db.tolist() == [dout.sum()] and dw.item() == pytest.approx((x[0, 0] * dout[0, 0, 2:, 1:4]).sum())
