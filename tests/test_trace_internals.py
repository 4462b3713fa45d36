"""The trace engine's building blocks: bulk running sums and number text."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from convcore.fill import format_number
from convcore.trace.events import running_sums
from convcore.trace.format import box_text, factor, number, number_list
from convcore.trace.loops import ordered, ordered_chunks

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 40).flatmap(lambda size: st.tuples(
    hnp.arrays(np.float64, size, elements=finite.filter(lambda v: abs(v) < 1e300)),
    st.lists(st.tuples(st.integers(0, size - 1), finite.filter(lambda v: abs(v) < 1e300)), max_size=120),
)))
def test_running_sums_are_bit_identical_to_one_add_at_a_time(case):
    state, adds = case
    expected_state = state.copy()
    expected = []
    for cell, delta in adds:
        expected_state[cell] = expected_state[cell] + delta
        expected.append(expected_state[cell])
    targets = np.array([a for a, _ in adds], dtype=np.int64)
    deltas = np.array([d for _, d in adds], dtype=np.float64)
    values = running_sums(state, targets, deltas)
    assert values.tobytes() == np.array(expected, dtype=np.float64).tobytes()
    assert state.tobytes() == expected_state.tobytes()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(finite, st.integers(-10**16, 10**16).map(float), st.sampled_from([0.0, -0.0, 1e15, -1e6, 999999.0])),
                max_size=50))
def test_number_list_equals_the_one_number_format(values):
    assert number_list(values) == [format_number(v) for v in values] == [number(v) for v in values]


def test_number_and_factor_text():
    assert [number(v) for v in (4.0, -2.0, 0.5, -0.0, 1e-05, 123456789.0)] == ["4", "−2", "0.5", "0", "1e−05", "123456789"]
    assert [factor(v) for v in (3.0, -1.0, -0.25)] == ["3", "(−1)", "(−0.25)"]


def test_box_text_slices_and_trailing_whole_axes():
    shape = (2, 3, 8, 8)
    assert box_text("xp", (0, 0, 0, 4), (1, 3, 3, 7), (1, 1, 1, 1), shape) == "xp[0,0:3,0:3,4:7]"
    assert box_text("xp", (0, 0, 0, 4), (1, 3, 5, 9), (1, 1, 2, 2), shape) == "xp[0,0:3,0:5:2,4:9:2]"
    assert box_text("w", (1, 0, 0, 0), (2, 3, 8, 8), (1, 1, 1, 1), shape) == "w[1]"
    assert box_text("w", (0, 0, 0, 0), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1)) == "w[0,0,0,0]"
    assert box_text("dz", (0, 0, 0, 0), (2, 3, 8, 8), (1, 1, 1, 1), shape) == "dz"
    assert box_text("dz", (0, 1, 0, 0), (2, 2, 8, 8), (1, 1, 1, 1), shape) == "dz[0:2,1]"


def test_loop_orders_in_chunks_match_nested_loops():
    sizes = {"n": 2, "f": 3, "i": 2, "j": 4}
    nested = [(n, f, i, j) for j in range(4) for n in range(2) for i in range(2) for f in range(3)]
    assert list(ordered("jnif", "nfij", sizes)) == nested
    chunks = list(ordered_chunks("jnif", "nfij", sizes, chunk=5))
    assert [len(c[0]) for c in chunks] == [5] * 9 + [3]
    flat = [t for c in chunks for t in zip(*(a.tolist() for a in c))]
    assert flat == nested
