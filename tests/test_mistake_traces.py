"""Mistake traces (convcore.mistakes.lab): the traced mistaken computation equals what an
implementation of that mistake written apart from the loops (tests/naive_mistakes.py)
returns, and what the catalogue's own code returns untraced; replay rebuilds it, the
first divergence is the first event that leaves the correct loops' writes, and the
plain loops themselves equal PyTorch."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from mistake_oracle import torch_expected
from naive_mistakes import NAIVE
from strategies import examples

from convcore.compare import values_equal
from convcore.grader.space import cases, edge_cases
from convcore.mistakes import Failure, get_convention, get_mistake, lab_mistakes, mistaken_and_true
from convcore.mistakes.lab import build_mistake_trace, iter_mistake_trace
from convcore.mistakes.lab_config import mistake_cost
from convcore.mistakes.plain_loops import PlainLoops
from convcore.trace import TraceConfigError, replay, resolve_config

pytestmark = pytest.mark.oracle

IDS = [m.id for m in lab_mistakes()]  # (the mistakes the lab traces: Conv2d's)
OUTPUTS = ("out", "dx", "dw", "db")
SETTINGS = dict(max_examples=examples(12), deadline=None, suppress_health_check=list(HealthCheck), database=None)


def _config(mistake, case):
    return case.trace_config(get_convention(mistake.convention).layout)


def _header_array(doc, name):
    t = doc["tensors"][name]
    return np.asarray(t["data"], dtype=np.float64).reshape(t["shape"])


def _same(expected, got):
    if expected.shape != got.shape:
        return False
    return bool(np.all(values_equal(expected, got)))


def assert_trace_is_the_code(mistake_id, case):
    """The trace's result tensors are what the mistake's implementation written apart
    returns; an output it does not return (raises, or an empty array) is a failure of the
    trace, of the same kind, with the message of the catalogue's own code."""
    m = get_mistake(mistake_id)
    doc = build_mistake_trace(_config(m, case), mistake_id)
    code, own = get_convention(m.convention).run(NAIVE[mistake_id], case), m.results(case)
    for name in OUTPUTS:
        returned = code[name]
        if isinstance(returned, Failure):
            assert name in doc["failures"], f"{name}: the code raised {returned} but the trace did not, {case}"
            assert doc["failures"][name]["kind"] == returned.kind == own[name].kind
            assert doc["failures"][name]["message"] == own[name].message
            continue
        traced = _header_array(doc, name)
        if name == "db" and m.convention == "layer":
            traced = traced.reshape(1, -1)  # the layer keeps b and db as (1, F)
        assert _same(returned, traced), f"{name}: traced {traced} but the code returns {returned} on {case}"
        if returned.size == 0:
            assert doc["failures"][name]["kind"] == "empty array"
        else:
            assert name not in doc["failures"]
    return doc


def assert_replay_holds(doc):
    state = replay(doc)
    for name in doc["tensors"]:
        assert _same(_header_array(doc, name), state[name]), name


def _written_cells(events):
    """After each event: {(tensor, cell index): value} of every cell written so far."""
    cells = {}
    for event in events:
        for wr in event["writes"]:
            ranges = [range(a, b, s) for a, b, s in zip(wr["start"], wr["stop"], wr["step"])]
            index = np.array(np.meshgrid(*ranges, indexing="ij")).reshape(len(ranges), -1).T
            for where, value in zip(map(tuple, index), np.asarray(wr["value"], dtype=np.float64).ravel()):
                cells[(wr["tensor"], where)] = value
        yield dict(cells)


def _states_differ(a, b):
    if a.keys() != b.keys():
        return True
    keys = list(a)
    return not np.all(values_equal(np.array([b[k] for k in keys]), np.array([a[k] for k in keys])))


def independent_first_divergence(mistaken, correct):
    """The first k after which the cells the two traces have written (and their values)
    differ, or one trace has ended while the other goes on."""
    states_m, states_c = list(_written_cells(mistaken)), list(_written_cells(correct))
    for k, (a, b) in enumerate(zip(states_m, states_c)):
        if _states_differ(a, b):
            return k
    return None if len(states_m) == len(states_c) else min(len(states_m), len(states_c))


def assert_divergence_is_independent(mistake_id, config):
    m = get_mistake(mistake_id)
    doc = build_mistake_trace(config, mistake_id)
    correct = PlainLoops(resolve_config(config), m.convention).run(record=True).events
    k = independent_first_divergence(doc["events"], correct)
    if k is None:
        assert doc["first_divergence"] is None and doc["divergence"] is None
        return doc
    div = doc["divergence"]
    assert div["stopped"] == (k >= len(doc["events"]))
    assert doc["first_divergence"] == min(k, len(doc["events"]) - 1) == div["event"]
    if not div["stopped"]:
        assert div["phase"] == doc["events"][k]["phase"]
    assert div["should"] == (correct[k]["text"] if k < len(correct) else "no further step: the truth is complete")
    assert div["wrong"] == m.wrong and div["fix"] == m.should
    return doc


@pytest.mark.parametrize("mistake_id", IDS)
def test_on_its_smallest_setup_the_trace_is_what_the_code_computes(mistake_id):
    m = get_mistake(mistake_id)
    doc = assert_trace_is_the_code(mistake_id, m.setup)
    assert_replay_holds(doc)
    assert doc["mistake"]["id"] == mistake_id and doc["mistake"]["wrong"] == m.wrong
    assert doc["aliases"] == {}  # every step of the code is in the trace, copies included
    assert set(doc["loop_names"]) == {letter for event in doc["events"] for letter in event["loop"]}
    phases = doc["phases"]
    assert phases[0]["start"] == 0 and phases[-1]["stop"] == doc["total_events"] == len(doc["events"])
    assert all(a["stop"] == b["start"] for a, b in zip(phases, phases[1:]))
    assert all(e["phase"] == p["name"] for p in phases for e in doc["events"][p["start"] : p["stop"]])


@pytest.mark.parametrize("mistake_id", IDS)
def test_on_drawn_setups_where_it_shows_the_trace_is_what_the_code_computes(mistake_id):
    m = get_mistake(mistake_id)

    @settings(**SETTINGS)
    @given(cases(m.convention))
    def holds(case):
        assume(any(m.shows(case).values()))
        assert_replay_holds(assert_trace_is_the_code(mistake_id, case))

    holds()


@pytest.mark.parametrize("mistake_id", IDS)
def test_on_every_drawn_setup_and_edge_case_the_trace_is_what_the_code_computes(mistake_id):
    m = get_mistake(mistake_id)
    for case in edge_cases(m.convention):
        assert_replay_holds(assert_trace_is_the_code(mistake_id, case))

    @settings(**SETTINGS)
    @given(cases(m.convention))
    def holds(case):
        assert_replay_holds(assert_trace_is_the_code(mistake_id, case))

    holds()


@pytest.mark.parametrize("convention", ["cs231n", "layer", "torch"])
def test_the_plain_loops_equal_torch(convention):
    """The correct loops, the generator every mistake changes one step of, against torch."""

    @settings(**SETTINGS)
    @given(cases(convention))
    def holds(case):
        run = PlainLoops(resolve_config(case.trace_config("NCHW")), convention).run(record=True)  # internal order
        assert not run.raised
        doc = {
            "tensors": {
                name: {"role": run.roles[name], "shape": list(arr.shape), "data": arr.ravel().tolist()}
                for name, arr in run.tensors.items()
            },
            "events": run.events,
        }
        state = replay(doc)  # internal order: the run's own arrays
        expected = torch_expected("torch", case)  # NCHW / OIHW
        for name in OUTPUTS:
            assert _same(expected[name], state[name]), (name, case)

    holds()


@pytest.mark.parametrize("mistake_id", IDS)
def test_the_first_divergence_is_the_first_event_that_leaves_the_truths_writes(mistake_id):
    m = get_mistake(mistake_id)
    doc = assert_divergence_is_independent(mistake_id, m.setup_config())
    assert doc["first_divergence"] is not None, "the smallest setup shows the mistake, so the trace diverges"

    @settings(**SETTINGS)
    @given(cases(m.convention))
    def holds(case):
        assert_divergence_is_independent(mistake_id, _config(m, case))

    holds()


@pytest.mark.parametrize("mistake_id", IDS)
def test_the_smallest_setup_yields_a_divergence_or_a_failure_and_differing_cells(mistake_id):
    m = get_mistake(mistake_id)
    doc = build_mistake_trace(m.setup_config(), mistake_id)
    assert doc["first_divergence"] is not None
    shown = [name for name, c in doc["differences"].items() if not c["match"]]
    assert shown or doc["failures"], "the setup shows the mistake in some output"
    for name, condition in m.conditions.items():
        if condition.shows(m.setup):
            assert name in shown or name in doc["failures"], name
    for name in shown:  # the differences are compare's, against the truth in the header
        truth = doc["truth"][name]
        assert doc["differences"][name]["expected_shape"] == truth["shape"]


def test_a_crash_is_reported_with_numpys_message_and_where_the_trace_stopped():
    m = get_mistake("squeeze_one_image")
    doc = build_mistake_trace(m.setup_config(), m.id)
    said = mistaken_and_true(m)["mistaken"]["out"]
    failure = doc["failures"]["out"]
    assert failure == {"kind": "IndexError", "message": said.message, "event": failure["event"]}
    assert "too many indices" in failure["message"]
    assert [p["name"] for p in doc["phases"]][:2] == ["pad", "activation grad"]  # forward stopped at its first step
    assert doc["divergence"]["did"].startswith("the code raised IndexError")
    assert "out" not in doc["differences"] and doc["differences"]["dx"]["match"]


def test_the_empty_crop_is_an_empty_dx_whose_steps_write_nothing():
    m = get_mistake("empty_crop")
    doc = build_mistake_trace(m.setup_config(), m.id)
    assert doc["tensors"]["dx"]["shape"] == [1, 1, 0, 0]
    assert doc["failures"]["dx"]["kind"] == "empty array" and "(1, 1, 0, 0)" in doc["failures"]["dx"]["message"]
    crop = doc["events"][doc["first_divergence"]]
    assert crop["phase"] == "crop" and crop["writes"][0]["value"] == [] and "empty slice" in crop["text"]
    assert doc["truth"]["dx"]["shape"] == [1, 1, 1, 1]


def test_an_unfinished_dw_is_a_none_result_whose_loop_writes_nothing():
    """dw_unfinished: dw is None (a failure of kind "returned None", with no event where
    it stopped); the backward steps write dx alone, dx and db match the truth."""
    m = get_mistake("dw_unfinished")
    doc = build_mistake_trace(m.setup_config(), m.id)
    said = mistaken_and_true(m)["mistaken"]["dw"]
    assert doc["failures"] == {"dw": {"kind": "returned None", "message": said.message, "event": None}}
    assert said.message == "conv_backward_naive's dw is None"
    backward = [e for e in doc["events"] if e["phase"] == "backward"]
    assert backward and all({w["tensor"] for w in e["writes"]} == {"dxp"} for e in backward)
    assert doc["differences"]["dx"]["match"] and doc["differences"]["db"]["match"]
    assert "dw" not in doc["differences"]


def test_an_unfinished_dx_stays_zeros_and_diverges_at_the_first_backward_step():
    m = get_mistake("dx_unfinished")
    doc = build_mistake_trace(m.setup_config(), m.id)
    assert not doc["failures"] and _header_array(doc, "dx").tolist() == [[[[0.0]]]]
    step = doc["events"][doc["first_divergence"]]
    assert step["phase"] == "backward" and {w["tensor"] for w in step["writes"]} == {"dw"}
    assert not doc["differences"]["dx"]["match"] and doc["differences"]["dw"]["match"]


def test_padding_one_hides_the_empty_crop():
    m = get_mistake("empty_crop")
    doc = build_mistake_trace(replace(m.setup, padding=(1, 1, 1, 1)).trace_config(), m.id)
    assert doc["first_divergence"] is None and not doc["failures"]
    assert all(c["match"] for c in doc["differences"].values())


def test_a_square_input_hides_kernel_height_for_width():
    m = get_mistake("kernel_height_for_width")
    square = replace(m.setup, h=2, w=2, kh=2, kw=2)
    doc = build_mistake_trace(square.trace_config("NHWC"), m.id)
    assert doc["first_divergence"] is None and all(c["match"] for c in doc["differences"].values())


def test_the_stream_replays_as_the_document():
    m = get_mistake("assign_dx")
    lines = list(iter_mistake_trace(m.setup_config(), m.id))
    doc = build_mistake_trace(m.setup_config(), m.id)
    assert lines[0]["type"] == "header" and lines[-1] == {"type": "end", "total_events": doc["total_events"]}
    assert lines[0]["first_divergence"] == doc["first_divergence"]
    streamed, whole = replay(lines), replay(doc)
    assert all(np.array_equal(streamed[k], whole[k]) for k in whole)


@pytest.mark.parametrize(
    "config, field, words",
    [
        ({"stride": [2, 1]}, "stride", "one stride"),
        ({"padding": [1, 0, 1, 1]}, "padding", "one padding"),
        ({"activation": "relu"}, "activation", "no activation"),
        ({"view": "im2col"}, "view", "naive code's loops"),
        ({"b": None}, "b", "needs b"),
    ],
)
def test_a_config_the_mistakes_code_cannot_take_is_refused_naming_the_field(config, field, words):
    m = get_mistake("assign_dx")
    with pytest.raises(TraceConfigError, match=words) as caught:
        build_mistake_trace({**m.setup_config(), "dout": None, **config}, m.id)
    assert caught.value.field == field


def test_an_unknown_mistake_is_refused_naming_the_catalogue():
    with pytest.raises(TraceConfigError, match="empty_crop") as caught:
        build_mistake_trace({}, "no_such_mistake")
    assert caught.value.field == "mistake"


@pytest.mark.parametrize("mistake_id", IDS)
def test_the_cost_bounds_the_trace(mistake_id):
    """mistake_cost (from trace_cost) bounds the events and the encoded size it predicts."""
    import orjson

    m = get_mistake(mistake_id)
    for case in [m.setup, *edge_cases(m.convention)[-2:]]:
        config = _config(m, case)
        doc = build_mistake_trace(config, mistake_id)
        cost = mistake_cost(resolve_config(config), m)
        assert doc["total_events"] <= cost.events
        assert len(orjson.dumps(doc)) <= cost.bytes


def _outcome(run):
    """A run's tensors and the kind of what each pass raised."""
    return run.tensors, {part: type(exc) for part, (exc, _) in run.raised.items()}


def _same_outcome(a, b):
    (ta, ra), (tb, rb) = _outcome(a), _outcome(b)
    assert ra == rb and ta.keys() == tb.keys()
    for name in ta:
        assert ta[name].shape == tb[name].shape and np.array_equal(ta[name], tb[name]), name


@pytest.mark.parametrize("mistake_id", [None, *IDS])
def test_the_loops_compute_the_same_numbers_recorded_or_not_and_pass_by_pass(mistake_id):
    """run() returns the numbers a recorded run writes, and a forward then a backward on
    the same loops (a layer's two calls) the numbers of both at once."""
    m = get_mistake(mistake_id or "assign_dx")
    loops = m.loops if mistake_id else PlainLoops
    for case in [m.setup, *edge_cases(m.convention)]:
        rc = resolve_config(_config(m, case))
        quiet, recorded = loops(rc, m.convention).run(), loops(rc, m.convention).run(record=True)
        assert quiet.events == [] and recorded.events
        _same_outcome(quiet, recorded)
        if m.convention == "layer" or not quiet.raised:  # cs231n / torch backward alone pads again
            stepwise = loops(rc, m.convention)
            stepwise.run(("forward",))
            _same_outcome(stepwise.run(("backward",)), quiet)


def test_a_backward_alone_pads_first_as_the_naive_backward_does():
    m = get_mistake("pad_only_if_pad")
    rc = resolve_config(m.setup_config())
    run = m.loops(rc, "cs231n").run(("backward",))
    assert type(run.raised["backward"][0]) is UnboundLocalError
    assert m.results(m.setup)["db"].kind == "UnboundLocalError"


def test_a_layer_backward_without_its_forward_raises_as_the_layer_does():
    from convcore.mistakes.code import layer_code

    layer = layer_code(PlainLoops)(1, (1, 1))
    with pytest.raises(KeyError, match="X"):
        layer.backward(np.ones((1, 1, 1, 1)))
