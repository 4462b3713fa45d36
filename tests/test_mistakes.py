"""The mistakes catalogue against PyTorch: every entry is complete, its code is a
one-step change of the plain loops, which equal torch, and computes what an
implementation of that mistake written apart (tests/naive_mistakes.py) does; its
smallest setup shows it and nothing smaller does, and over random specs each output
differs from torch's exactly when (or, where the catalogue says "sufficient", at least
when) its condition says so."""

from __future__ import annotations

import inspect
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from mistake_oracle import differs, torch_expected
from naive_mistakes import CORRECT, NAIVE
from oracle import require_torch
from strategies import examples

from convcore.grader.space import cases
from convcore.mistakes import (
    CONVENTIONS,
    MISTAKES,
    OUTPUTS,
    Case,
    Failure,
    Subject,
    get_convention,
    get_mistake,
    lab_mistakes,
    mistaken_and_true,
    one_step_smaller,
    outcome_equal,
)
from convcore.mistakes.code import code_subject
from convcore.mistakes.plain_loops import PlainLoops
from convcore.mistakes.plain_steps import PlainSteps
from convcore.mistakes.transposed_loops import TransposedLoops

pytestmark = pytest.mark.oracle

# the issue's list: from the seeds, then common elsewhere
REQUIRED = {
    "pad_hardcoded_1",
    "stride_one_index_grid",
    "output_size_parentheses",
    "squeeze_one_image",
    "bias_not_added",
    "empty_crop",
    "input_size_loops",
    "kernel_height_for_width",
    "row_padding_for_columns",
    "crop_p0_p1_plus_rows",
    "symmetric_pad_from_4tuple",
    "rotated_kernel_ignores_stride",
    "assign_dx",
    "assign_dw",
    "flipped_kernel_forward",
    "dw_rotated",
    "db_wrong_axes",
    "db_averaged",
    "activation_derivative_skipped",
    "activation_derivative_of_output",
    "dilation_ignored_backward",
    "groups_ignored",
}
IDS = list(MISTAKES)
LAB_IDS = [m.id for m in lab_mistakes()]  # (the Conv2d mistakes, whose setups the trace engine takes)


def correct_subject(convention: str) -> Subject:
    """The plain loops, unchanged, in ``convention``'s calling form."""
    return code_subject(TransposedLoops if convention == "torch-transposed" else PlainLoops, convention)


def shown(mistake_id: str, case: Case) -> set[str]:
    """The outputs where the mistake differs from torch on ``case``."""
    m = get_mistake(mistake_id)
    expected = torch_expected(m.convention, case)
    results = m.results(case)
    return {name for name in OUTPUTS if differs(expected[name], results[name])}


def test_the_catalogue_has_every_mistake_of_the_issue():
    assert REQUIRED <= set(MISTAKES), REQUIRED - set(MISTAKES)


@pytest.mark.parametrize("mistake_id", IDS)
def test_every_entry_is_complete(mistake_id):
    m = get_mistake(mistake_id)
    assert m.convention in CONVENTIONS
    for text in (m.title, m.wrong, m.should, m.source):
        assert isinstance(text, str) and len(text) > 10
    assert m.wrong.endswith(".") and m.wrong.count(". ") == 0  # one sentence
    assert m.conditions and set(m.conditions) <= set(OUTPUTS)
    assert all(c.words for c in m.conditions.values())
    assert m.summary()["setup"] == m.setup.to_dict()


@pytest.mark.parametrize("mistake_id", IDS)
def test_the_mistake_is_the_plain_loops_with_steps_overridden(mistake_id):
    """The mistake's loops override steps of the plain loops (``PlainSteps``' methods and
    flags) and add nothing else; its implementation calls those loops in the
    convention's form and keeps the convention's signature."""
    m = get_mistake(mistake_id)
    base, steps = (PlainLoops, set(vars(PlainSteps))) if m.in_lab else (TransposedLoops, set(TransposedLoops.STEPS))
    assert m.loops.__bases__ == (base,)
    changed = {name for name in vars(m.loops) if not name.startswith("__")}
    assert changed and changed <= steps, changed - steps
    impl = m.implementation.layer or m.implementation.forward.__self__
    assert impl.loops is m.loops
    if m.convention == "cs231n":
        assert list(inspect.signature(m.implementation.forward).parameters) == ["x", "w", "b", "conv_param"]
        assert list(inspect.signature(m.implementation.backward).parameters) == ["dout", "cache"]


@settings(max_examples=examples(30), deadline=None, suppress_health_check=list(HealthCheck))
@given(data=cases("cs231n"), layer_case=cases("layer"), torch_case=cases("torch"), transposed=cases("torch-transposed"))
def test_the_correct_implementations_equal_torch(data, layer_case, torch_case, transposed):
    """The plain loops every mistake changes one step of, and the oracle's correct code
    (tests/naive_mistakes.py), in each convention's form, against torch."""
    conventions = (("cs231n", data), ("layer", layer_case), ("torch", torch_case), ("torch-transposed", transposed))
    for convention, case in conventions:
        case = replace(case, values="float")
        expected = torch_expected(convention, case)
        for subject in (correct_subject(convention), CORRECT[convention]):
            results = get_convention(convention).run(subject, case)
            assert not any(differs(expected[n], results[n]) for n in OUTPUTS), (convention, case)


def assert_same_as_written_apart(mistake_id: str, case: Case) -> None:
    """The mistake's code computes what the oracle's implementation of it does: the same
    arrays, or a failure of the same kind."""
    m = get_mistake(mistake_id)
    convention = get_convention(m.convention)
    ours, apart = m.results(case), convention.run(NAIVE[mistake_id], case)
    for name in OUTPUTS:
        assert outcome_equal(ours[name], apart[name]), (name, ours[name], apart[name], case.describe())


@pytest.mark.parametrize("mistake_id", IDS)
def test_each_mistake_computes_what_its_implementation_written_apart_does(mistake_id):
    m = get_mistake(mistake_id)
    from convcore.grader.space import edge_cases

    for case in [m.setup, *edge_cases(m.convention)]:
        assert_same_as_written_apart(mistake_id, case)

    @settings(max_examples=examples(25), deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(cases(m.convention))
    def holds(case):
        assert_same_as_written_apart(mistake_id, case)

    holds()


def test_the_oracle_covers_the_catalogue():
    assert set(NAIVE) == set(MISTAKES)


@pytest.mark.parametrize("mistake_id", IDS)
def test_the_setup_is_the_smallest_that_shows_the_mistake(mistake_id):
    m = get_mistake(mistake_id)
    assert shown(mistake_id, m.setup), f"{mistake_id} does not show on its setup {m.setup.describe()}"
    for smaller in one_step_smaller(m.setup, get_convention(m.convention).knobs):
        assert not shown(mistake_id, smaller), f"{mistake_id} shows on the smaller {smaller.describe()}"


def _condition_property(mistake_id: str):
    m = get_mistake(mistake_id)

    @settings(max_examples=examples(25), deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(cases(m.convention))
    def holds(case):
        case = replace(case, values="float")  # general position: random normal inputs and dout
        diff = shown(mistake_id, case)
        for name in OUTPUTS:
            condition = m.conditions.get(name)
            if condition is None:
                assert name not in diff, f"{name} differs though the catalogue says it never does: {case}"
                continue
            if condition.shows(case):
                assert name in diff, f"{name} should show ({condition.words}) on {case}"
            if condition.hidden(case):
                assert name not in diff, f"{name} should hide on {case}"

    return holds


@pytest.mark.parametrize("mistake_id", IDS)
def test_each_output_differs_from_torch_under_its_stated_conditions(mistake_id):
    _condition_property(mistake_id)()


@pytest.mark.parametrize("mistake_id", IDS)
def test_the_conditions_hold_on_the_edge_cases_too(mistake_id):
    """The hand-picked edge cases of the grader, with float inputs, obey the conditions."""
    from convcore.grader.space import edge_cases

    m = get_mistake(mistake_id)
    for case in edge_cases(m.convention):
        case = replace(case, values="float")
        diff = shown(mistake_id, case)
        for name, condition in m.conditions.items():
            assert not (condition.shows(case) and name not in diff), (name, case)
            assert not (condition.hidden(case) and name in diff), (name, case)


def test_mistaken_and_true_gives_both_and_numpys_message_when_it_crashes():
    require_torch()
    both = mistaken_and_true("squeeze_one_image")  # its setup: a 1×1 input squeezes to a 0-d array
    assert set(both) == {"mistaken", "true"}
    failure = both["mistaken"]["out"]
    assert isinstance(failure, Failure) and failure.kind == "IndexError"
    assert "too many indices" in failure.message
    expected = torch_expected("cs231n", get_mistake("squeeze_one_image").setup)
    np.testing.assert_allclose(both["true"]["out"], expected["out"])
    empty = mistaken_and_true("empty_crop")["mistaken"]["dx"]
    assert empty.shape == (1, 1, 0, 0)  # the empty array itself is the mistake's result


def test_mistaken_and_true_takes_another_case():
    case = Case(h=4, w=4, kh=3, kw=3, padding=(1, 1, 1, 1))
    both = mistaken_and_true("empty_crop", case)  # padding 1: the crop is right
    np.testing.assert_allclose(both["mistaken"]["dx"], both["true"]["dx"])


def test_an_unknown_mistake_names_the_catalogue():
    with pytest.raises(KeyError, match="empty_crop"):
        get_mistake("no_such_mistake")


def test_exact_and_sufficient_conditions_are_told_apart():
    exact = [(m.id, n) for m in MISTAKES.values() for n, c in m.conditions.items() if c.exact]
    sufficient = [(m.id, n) for m in MISTAKES.values() for n, c in m.conditions.items() if not c.exact]
    assert ("empty_crop", "dx") in exact and ("bias_not_added", "out") in exact
    assert ("groups_ignored", "out") in sufficient
    for mistake_id, name in sufficient:
        assert (
            "exact" in get_mistake(mistake_id).conditions[name].words
            or "never" in get_mistake(mistake_id).conditions[name].words
        )


@pytest.mark.parametrize("mistake_id", LAB_IDS)
def test_the_setup_is_a_config_the_trace_engine_and_the_page_take(mistake_id):
    from convcore.trace import build_trace

    m = get_mistake(mistake_id)
    doc = build_trace(m.setup_config())
    true = get_convention(m.convention).expected(m.setup)
    for name in ("out", "dx", "dw"):
        t = doc["tensors"][name]
        np.testing.assert_allclose(np.reshape(t["data"], t["shape"]), true[name])


def test_docs_mistakes_md_is_the_catalogue():
    from pathlib import Path

    from convcore.mistakes.document import catalogue_markdown

    text = (Path(__file__).resolve().parents[1] / "docs" / "mistakes.md").read_text(encoding="utf-8")
    assert text == catalogue_markdown(), "run: python -m convcore.mistakes.document > docs/mistakes.md"


def test_the_course_code_read_is_cited_by_the_entries_it_was_read_for():
    """docs/mistakes.md's "Public course code read" names each repository and file that
    some entry's source draws on, and no other."""
    from convcore.mistakes.document import READ

    assert READ
    for repo, path, _ in READ:
        assert any(repo in m.source and path in m.source for m in MISTAKES.values()), (repo, path)
