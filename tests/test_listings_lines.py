"""The listings' line map is the trace's: run a listing under ``sys.settrace``, record
each marked line it executes with its loop variables and the scalars it reads, and the
sequence equals, event for event, the lines the trace engine's events carry (``lines``,
``line`` the last; the same as ``Listing.event_lines``) with the events' ``loop`` and
``scalars`` values, for the same config (convcore/listings/, docs/listings.md,
convcore/trace/code.py).

Differences by design: without padding the trace has no pad and no crop phase (only
steps that compute; its ``aliases`` say xp is x), with the identity no activation
phases, and without a bias no db write, while the listing still runs its ``np.pad``,
its crop, the layer's activation lines and ``db[f] += g`` (copies, or on zeros); those
lines are left out of the recorded sequence then. A line outside every loop runs once
for all the steps of its phase (the activation's rows, ``copies: "each"``'s rows).
"""

from __future__ import annotations

import math
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import ConvCase, cs231n_cases, examples
from test_listings import (
    FORMS,
    LISTINGS,
    VIEWS,
    drawn,
    layer_cases,
    reordered,
    run,
    setting,
    torch_cases,
    view_reordered,
)
from trace_checks import case_config

from convcore.listings import get_listing
from convcore.trace import build_trace

LETTERS = "nfijcklyx"  # (y, x: the transposed view's dxp cell)
SMALL = {  # settrace runs a callback per line: smaller specs than test_listings'
    "cs231n": cs231n_cases(max_n=2, max_cf=2, max_hw=5, max_k=3),
    "torch": torch_cases(max_n=2, max_cf=2, max_hw=5, max_k=3, max_dilation=2),
    "layer": layer_cases(max_n=2, max_cf=2, max_hw=5, max_k=3),
}


def executed(listing, case, activation="identity") -> list[tuple[int, dict[str, int]]]:
    """(listing line, {loop letter: value}) of every marked line the listing runs, in
    order: its forward, then its backward, on the case's arrays."""
    marked = {mark.line for mark in listing.marks}
    names = set(LETTERS) | {name for mark in listing.marks for name, _ in mark.scalars}
    paths = {section.path for section in listing.sections}
    seen: list[tuple[int, dict[str, int]]] = []

    def local(frame, event, arg):
        if event == "line":
            line = listing.listing_line(frame.f_code.co_filename, frame.f_lineno)
            if line in marked:
                seen.append((line, {k: v for k, v in frame.f_locals.items() if k in names}))
        return local

    def start(frame, event, arg):
        return local if frame.f_code.co_filename in paths else None

    before = sys.gettrace()
    sys.settrace(start)
    try:
        run(listing, case, activation)
    finally:
        sys.settrace(before)
    return seen


def expected(listing, doc) -> list[tuple[int, dict[str, int]]]:
    """(line, the event's loop and scalars) for each line each event of ``doc`` runs (its
    ``lines``, which are the listing's ``event_lines``; ``line`` the last of them)."""
    assert doc["code"]["lines"] == list(listing.lines) and doc["code"]["convention"] == listing.convention
    want = []
    for event in doc["events"]:
        assert event["lines"] == list(listing.event_lines(event, doc["aliases"])), event["text"]
        assert event["line"] == (event["lines"][-1] if event["lines"] else None)
        want += [(line, {**event["loop"], **event.get("scalars", {})}) for line in event["lines"]]
    return want


def as_if(listing, doc) -> dict:
    """``doc`` with ``listing`` as its code: the events' lines as that listing maps them."""
    events = []
    for event in doc["events"]:
        lines = list(listing.event_lines(event, doc["aliases"]))
        events.append(dict(event, lines=lines, line=lines[-1] if lines else None))
    return dict(doc, events=events, code={"convention": listing.convention, "lines": list(listing.lines)})


def compare(listing, case, doc, activation="identity") -> None:
    marks = {mark.line: (mark.phase, mark.target) for mark in listing.marks}
    seen = executed(listing, case, activation)
    # no pad and no crop phase without padding, no activation phases with the identity
    # (module notes): the listing's lines of phases the trace does not have run no step
    # and without a bias no db write (its line runs on zeros: docs/trace-format.md)
    aliases = doc["aliases"]
    absent = ({"pad", "crop"} if "xp" in aliases else set()) | (
        {"activation", "activation grad"} if "z" in aliases else set()
    )
    unwritten = set() if doc["spec"]["bias"] else {"db"}
    seen = [(line, loop) for line, loop in seen if marks[line][0] not in absent and marks[line][1] not in unwritten]
    want = expected(listing, doc)
    # a line outside every loop (np.pad, the crop, the layer's activation) runs once for
    # the steps of its phase (copies "each": a step per row; the activation: per row)
    outside = {mark.line for mark in listing.marks if not mark.loops}
    want = [item for k, item in enumerate(want) if not (item[0] in outside and k and want[k - 1][0] == item[0])]
    assert [line for line, _ in seen] == [line for line, _ in want], listing.name
    for k, ((line, values), (_, loop)) in enumerate(zip(seen, want)):
        # (scalars: the listing sums in its own order, the trace's core in BLAS's; math's
        # isclose, as pytest.approx with these tolerances, took half of this file's time)
        if line not in outside and not all(
            key in values and math.isclose(values[key], value, rel_tol=1e-12, abs_tol=1e-12)
            for key, value in loop.items()
        ):
            got = {key: values.get(key) for key in loop}
            raise AssertionError(
                f"{listing.name}: step {k} (line {line}): the listing ran {got}, the trace says {loop}"
            )


@pytest.mark.parametrize("listing", LISTINGS, ids=lambda listing: listing.name)
@settings(max_examples=examples(100), deadline=None)
@given(data=st.data())
def test_the_listing_runs_the_lines_of_the_trace_events(listing, data):
    case, activation = drawn(data, SMALL, listing)
    config = case_config(case, nhwc=listing.convention == "layer", activation=activation, **setting(listing))
    compare(listing, case, build_trace(dict(config, code=listing.convention)), activation)


@pytest.mark.parametrize(("convention", "granularity", "backward"), FORMS)
@settings(max_examples=examples(50), deadline=None)
@given(data=st.data())
def test_every_loop_order_runs_the_lines_of_the_trace_events(convention, granularity, backward, data):
    listing = reordered(data, convention, granularity, backward)
    case = data.draw(SMALL[convention], label="case")
    config = case_config(case, nhwc=convention == "layer", code=convention, **setting(listing))
    compare(listing, case, build_trace(config))


@pytest.mark.parametrize(("view", "convention"), VIEWS)
@settings(max_examples=examples(50), deadline=None)
@given(data=st.data())
def test_every_loop_order_of_another_view_runs_the_lines_of_the_trace_events(view, convention, data):
    listing = view_reordered(data, view, convention)
    case = data.draw(SMALL[convention], label="case")
    config = case_config(case, nhwc=convention == "layer", code=convention, **setting(listing))
    compare(listing, case, build_trace(config))


def test_another_loop_order_is_told_apart():
    """The check can fail: the same lines in another loop order carry other loop values."""
    listing = get_listing("cs231n", granularity="window")
    case = ConvCase((2, 2, 4, 4), (2, 2, 2, 2), 1, 1, 1, 1, True, seed=3)
    doc = as_if(listing, build_trace(case_config(case, **dict(setting(listing), loop_order="jifn"))))
    with pytest.raises(AssertionError, match="step 2 "):
        compare(listing, case, doc)


def test_a_missing_step_is_told_apart():
    """The check can fail: a trace without the listing's backward has other lines."""
    listing = get_listing("cs231n", granularity="mac", backward="separate")
    case = ConvCase((1, 1, 3, 3), (1, 1, 2, 2), 1, 0, 1, 1, True, seed=4)
    doc = as_if(listing, build_trace(case_config(case, **setting(listing), phases="forward")))
    with pytest.raises(AssertionError):
        compare(listing, case, doc)
