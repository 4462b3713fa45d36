"""The grader on the layers beside Conv2d: ConvTranspose2d and Conv1d code in PyTorch's
functional form (``--convention torch``, which finds the layer by the functions a file
defines, or ``torch-transposed`` / ``torch-conv1d`` by name).

The graded files are our own, in tests/fixtures/layers/, written with plain loops (not
by calling convcore): a correct transposed layer and a correct Conv1d (held to PyTorch
here), and one file per catalogued transposed mistake, each in another style than the
catalogue's own loops (vectorised per tap, the correlation view, a gather). Each is
graded in process (load, find the convention, grade) for its exit code and the mistake
named; a few runs go through the command line as a teacher types it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from mistake_oracle import differs, torch_expected
from naive_mistakes import NAIVE
from strategies import examples

from convcore.grader import grade
from convcore.grader.batch import find_submissions, grade_all, summarize
from convcore.grader.class_report import class_html, class_text
from convcore.grader.facts import facts
from convcore.grader.loader import LoadError, find_convention, find_subject, load_module
from convcore.grader.space import cases, edge_cases
from convcore.mistakes import (
    CONVENTIONS,
    OUTPUTS,
    get_convention,
    get_mistake,
    lab_mistakes,
    mistakes_for,
    outcome_equal,
)
from convcore.mistakes.lab_config import lab_mistake
from convcore.mistakes.layer_cases import Conv1dCase, TransposedCase
from convcore.mistakes.layer_conventions import torch_layer_of
from convcore.trace.config import TraceConfigError

LAYERS = Path(__file__).parent / "fixtures" / "layers"
ROOT = Path(__file__).resolve().parents[1]

CORRECT = {"transposed_correct.py": "torch-transposed", "conv1d_correct.py": "torch-conv1d"}
# each file with one catalogued mistake, the mistake, and the outputs it breaks
WRONG = {
    "transposed_no_output_padding.py": ("output_padding_ignored", {"out"}),
    "transposed_not_rotated.py": ("kernel_not_rotated", {"out"}),
    "transposed_stride_wrong_side.py": ("stride_not_applied", {"out", "dx", "dw"}),
}
_REPORTS: dict[str, tuple[str, dict]] = {}


def graded(path: Path, convention: str = "torch") -> tuple[str, dict]:
    """(the convention the file is graded in, its report's data), in this process."""
    key = f"{path}:{convention}"
    if key not in _REPORTS:
        module = load_module(str(path))
        resolved = find_convention(module, convention, None)
        report = grade(resolved, find_subject(module, resolved, None, str(path)), target=path.name)
        _REPORTS[key] = (resolved, report.data | {"exit_code": report.exit_code})
    return _REPORTS[key]


def convscope(*args: str, cwd: Path = LAYERS) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "convscope", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


# -- our own correct files, against PyTorch ----------------------------------------------


@pytest.mark.oracle
@pytest.mark.parametrize("file", CORRECT)
def test_our_correct_files_equal_torch(file):
    """The fixtures the grader must pass are right by PyTorch (float64), not by convcore."""
    convention = get_convention(CORRECT[file])
    module = load_module(str(LAYERS / file))
    subject = find_subject(module, convention.name, None, str(LAYERS / file))

    @settings(max_examples=examples(20), deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(cases(convention.name))
    def holds(case):
        case = replace(case, values="float")
        expected, got = torch_expected(convention.name, case), convention.run(subject, case)
        assert not [n for n in OUTPUTS if differs(expected[n], got[n])], case.describe()

    for case in edge_cases(convention.name):
        expected, got = torch_expected(convention.name, case), convention.run(subject, case)
        assert not [n for n in OUTPUTS if differs(expected[n], got[n])], case.describe()
    holds()


# -- grading -----------------------------------------------------------------------------


@pytest.mark.parametrize("file", CORRECT)
def test_a_correct_layer_passes_as_torch_in_its_own_convention(file):
    resolved, report = graded(LAYERS / file)
    assert resolved == CORRECT[file]
    assert report["convention"] == CORRECT[file] and report["error"] is None
    assert report["exit_code"] == 0
    assert {n: o["status"] for n, o in report["outputs"].items()} == dict.fromkeys(OUTPUTS, "pass")


@pytest.mark.parametrize("file", WRONG)
def test_each_catalogued_transposed_mistake_fails_and_is_named(file):
    mistake_id, broken = WRONG[file]
    resolved, report = graded(LAYERS / file)
    assert resolved == "torch-transposed" and report["exit_code"] == 1
    failed = {n for n, o in report["outputs"].items() if o["status"] == "fail"}
    assert failed == broken == set(get_mistake(mistake_id).conditions)
    for name in failed:
        named = report["outputs"][name]["likely_mistakes"]
        assert [m["id"] for m in named] == [mistake_id], (name, named)
        assert named[0]["everywhere"]
        counterexample = report["outputs"][name]["counterexample"]
        config = counterexample["config"]
        if config is not None:  # (the page traces the case: its output_padding is below the stride)
            assert config["layer"] == "conv_transpose2d" and list(config["compare"]) == [{"out": "y"}.get(name, name)]
            assert counterexample["page"].startswith("http://127.0.0.1:8000/#s=0&c=")


def test_a_transposed_counterexample_opens_on_the_page_with_the_cells_that_differ(api_client):
    """The report's config is a trace request: the page traces the case as the layer and
    marks the cells of y where the file's output differs."""
    _, report = graded(LAYERS / "transposed_not_rotated.py")
    counterexample = report["outputs"]["out"]["counterexample"]
    response = api_client.post("/api/trace", json=counterexample["config"])
    assert response.status_code == 200, response.text[:300]
    comparison = response.json()["comparison"]["y"]
    assert comparison["kind"] == "wrong values" and comparison["differing_flat"], comparison


def test_the_output_padding_mistake_is_told_with_the_size_rule_in_numbers():
    _, report = graded(LAYERS / "transposed_no_output_padding.py")
    out = report["outputs"]["out"]
    ce = out["counterexample"]
    assert ce["kind"] == "wrong shape" and ce["case"]["output_padding"] != [0, 0]
    rules = [f for f in out["facts"] if f.startswith("the output's ")]
    assert rules, out["facts"]
    for rule in rules:  # e.g. W_out = (W − 1)·stride − … + output_padding + 1 = (1 − 1)·2 − … + 1 + 1 = 2
        assert "·stride − 2·padding + dilation·(" in rule and "+ output_padding + 1 = (" in rule, rule
    assert any(f.startswith("out, what conv_transpose2d_forward returned, has shape") for f in out["facts"])


def test_without_output_padding_a_size_below_zero_leaves_an_empty_output():
    """W_out = (1 − 1)·3 − 2·1 + 0 + 2 + 1 = 1, without output_padding −1: the catalogue's
    code crops the stamps' buffer to nothing, as the correlation view written apart does
    (the catalogue's words say that code allocating the output at −1 raises instead)."""
    case = TransposedCase(h=1, w=1, kh=1, kw=1, stride=(1, 3), padding=(0, 1), output_padding=(0, 2))
    assert case.spec.out_shape == (1, 1, 1, 1)
    out = get_mistake("output_padding_ignored").results(case)["out"]
    assert out.shape == (1, 1, 1, 0)
    apart = get_convention("torch-transposed").run(NAIVE["output_padding_ignored"], case)["out"]
    assert outcome_equal(out, apart)
    assert "raises ValueError" in get_mistake("output_padding_ignored").conditions["out"].words


def test_the_explicit_convention_grades_the_same_as_torch():
    resolved, report = graded(LAYERS / "transposed_not_rotated.py", "torch-transposed")
    assert resolved == "torch-transposed"
    assert report["outputs"]["out"]["likely_mistakes"][0]["id"] == "kernel_not_rotated"


def test_the_layer_is_found_by_the_functions_named():
    assert torch_layer_of(["conv2d_forward", "conv2d_backward"]) == "torch"
    assert torch_layer_of(["conv_transpose2d_backward"]) == "torch-transposed"
    assert torch_layer_of(["conv1d_forward"]) == "torch-conv1d"
    # a Conv2d helper beside a transposed layer: the file is the transposed layer
    assert torch_layer_of(["conv2d_forward", "conv_transpose2d_forward"]) == "torch-transposed"
    assert torch_layer_of([]) == "torch"


def test_a_file_with_none_of_the_functions_is_refused_naming_them(tmp_path):
    path = tmp_path / "empty.py"
    path.write_text("def transpose(x):\n    return x\n", encoding="utf-8")
    module = load_module(str(path))
    with pytest.raises(LoadError) as raised:
        find_subject(module, find_convention(module, "torch", None), None, str(path))
    message = str(raised.value)
    for name in ("conv2d_forward", "conv_transpose2d_forward", "conv_transpose2d_backward", "conv1d_backward"):
        assert name in message, message
    with pytest.raises(LoadError, match="has neither conv_transpose2d_forward nor conv_transpose2d_backward"):
        find_subject(module, "torch-transposed", None, str(path))


def _beside_the_correct_one(tmp_path: Path, name: str, text: str) -> Path:
    (tmp_path / "transposed_correct.py").write_text((LAYERS / "transposed_correct.py").read_text("utf-8"), "utf-8")
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_wrong_returned_shape_names_the_function_and_both_shapes(tmp_path):
    path = _beside_the_correct_one(
        tmp_path,
        "dw_transposed.py",
        "from transposed_correct import conv_transpose2d_backward as _right\n\n\n"
        "def conv_transpose2d_backward(dout, x, w, b=None, **kwargs):\n"
        "    dx, dw, db = _right(dout, x, w, b, **kwargs)\n"
        "    return dx, dw.transpose(1, 0, 2, 3), db\n",
    )
    resolved, report = graded(path)
    assert resolved == "torch-transposed" and report["exit_code"] == 1
    dw = report["outputs"]["dw"]
    got, expected = np.shape(dw["counterexample"]["got"]), np.shape(dw["counterexample"]["expected"])
    assert got != expected
    assert dw["facts"][0] == f"dw, what conv_transpose2d_backward returned, has shape {got}; it should be {expected}"
    assert {n for n, o in report["outputs"].items() if o["status"] == "fail"} == {"dw"}


def test_a_backward_returning_two_things_is_said_so(tmp_path):
    path = _beside_the_correct_one(
        tmp_path,
        "two.py",
        "from transposed_correct import conv_transpose2d_backward as _right\n\n\n"
        "def conv_transpose2d_backward(dout, x, w, b=None, **kwargs):\n"
        "    return _right(dout, x, w, b, **kwargs)[:2]\n",
    )
    _, report = graded(path)
    assert report["exit_code"] == 1
    for name in ("dx", "dw", "db"):
        ce = report["outputs"][name]["counterexample"]
        assert ce["error"] == "wrong return: conv_transpose2d_backward returned a tuple of 2, expected (dx, dw, db)"


def test_a_conv1d_that_ignores_causal_padding_is_told_the_length_rule(tmp_path):
    (tmp_path / "conv1d_correct.py").write_text((LAYERS / "conv1d_correct.py").read_text("utf-8"), "utf-8")
    path = tmp_path / "not_causal.py"
    path.write_text(
        "from conv1d_correct import conv1d_backward  # noqa: F401\n"
        "from conv1d_correct import conv1d_forward as _right\n\n\n"
        "def conv1d_forward(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):\n"
        "    return _right(x, w, b, stride, 0 if padding == 'causal' else padding, dilation, groups)\n",
        encoding="utf-8",
    )
    resolved, report = graded(path)
    assert resolved == "torch-conv1d" and report["exit_code"] == 1
    out = report["outputs"]["out"]
    assert "padding causal" in out["counterexample"]["description"]
    assert [f for f in out["facts"] if f.startswith("the output's length: L_out = 1 + (L + left + right")], out["facts"]
    assert out["likely_mistakes"] == []  # (Conv1d has no catalogued mistakes yet)


# -- the catalogue and the lab -----------------------------------------------------------


def test_the_transposed_mistakes_are_catalogued_and_kept_out_of_the_lab():
    transposed = {m.id for m in mistakes_for("torch-transposed")}
    assert {"output_padding_ignored", "kernel_not_rotated", "stride_not_applied"} <= transposed
    lab = {m.id for m in lab_mistakes()}
    assert not lab & transposed
    assert lab == {m.id for m in mistakes_for("cs231n") + mistakes_for("layer") + mistakes_for("torch")}
    for mistake_id in transposed:
        assert get_mistake(mistake_id).setup_config() is None
        with pytest.raises(TraceConfigError, match="mistake must be one of") as refused:
            lab_mistake(mistake_id)
        listed = str(refused.value).split("; got")[0]  # (the ids a trace request takes)
        assert mistake_id not in listed and "empty_crop" in listed


def test_the_registry_gives_the_command_line_its_conventions():
    assert list(CONVENTIONS)[:3] == ["cs231n", "layer", "torch"]
    assert {"torch-transposed", "torch-conv1d"} <= set(CONVENTIONS)
    assert not get_convention("torch-transposed").on_the_page and get_convention("torch").on_the_page


# -- the command line --------------------------------------------------------------------


@pytest.mark.slow
def test_the_command_line_grades_a_transposed_file_with_convention_torch():
    done = convscope("check", "transposed_stride_wrong_side.py", "--convention", "torch")
    assert done.returncode == 1, done.stdout + done.stderr
    text = done.stdout
    assert text.startswith(
        "convscope check transposed_stride_wrong_side.py (torch-transposed convention: ConvTranspose2d)"
    )
    assert "likely mistake: stride_not_applied: Stamps placed at i instead of i·stride" in text
    assert "output_padding = " in text
    assert "see it step by step: run `convscope serve` and open http://127.0.0.1:8000/#s=0&c=" in text
    assert "result: 3 of 4 outputs fail (out, dx, dw) (exit 1)" in text
    assert "Traceback" not in text + done.stderr


@pytest.mark.slow
def test_the_command_line_passes_a_correct_conv1d_and_says_why_it_writes_no_lesson(tmp_path):
    done = convscope("check", "conv1d_correct.py", "--convention", "torch", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["convention"] == "torch-conv1d" and report["status"] == "pass"
    lesson = convscope(
        "check", "transposed_not_rotated.py", "--convention", "torch", "--lesson", str(tmp_path / "x.html")
    )
    assert lesson.returncode == 2 and not (tmp_path / "x.html").exists()
    assert (
        "--lesson: lesson files and the traces of your code are Conv2d's only, not ConvTranspose2d's" in lesson.stderr
    )
    assert "Traceback" not in lesson.stderr


@pytest.mark.slow
def test_trace_code_refuses_a_transposed_file_with_a_message(tmp_path):
    out = tmp_path / "trace.html"
    for convention in ("torch", "torch-transposed"):
        done = convscope("trace-code", "transposed_correct.py", "--convention", convention, "-o", str(out))
        assert done.returncode == 2 and not out.exists(), done.stdout + done.stderr
        assert "tracing your own code knows Conv2d only; ConvTranspose2d code" in done.stderr
        assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_the_help_lists_the_conventions_and_the_functions():
    done = convscope("check", "--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "{cs231n,layer,torch,torch-transposed,torch-conv1d}" in text
    for name in ("conv_transpose2d_forward", "conv_transpose2d_backward", "conv1d_forward", "conv1d_backward"):
        assert name in text


@pytest.mark.slow
def test_a_class_of_layers_is_counted_by_layer_and_mistake(tmp_path):
    files = [*CORRECT, *WRONG]
    for file in files:
        (tmp_path / file).write_text((LAYERS / file).read_text("utf-8"), "utf-8")
    submissions = find_submissions(tmp_path, "torch")
    assert [s.name for s in submissions] == sorted(files)
    reports = grade_all(submissions, "torch", jobs=2, examples=20)
    summary = summarize(submissions, reports)
    assert summary["passed"] == 2 and summary["failed"] == 3 and summary["errors"] == 0
    assert summary["layers"] == {"ConvTranspose2d": 4, "Conv1d": 1}
    assert {m["id"]: m["count"] for m in summary["mistakes"]} == {
        "output_padding_ignored": 1,
        "kernel_not_rotated": 1,
        "stride_not_applied": 1,
    }
    text = class_text(summary, "torch")
    assert text.startswith("convscope check: 5 submissions (torch convention, 4 ConvTranspose2d, 1 Conv1d): 2 pass")
    page = class_html(summary, submissions, reports, "torch")
    # each named mistake links to its counterexample on the page, which traces the layer
    assert "<code>stride_not_applied</code></a>: Stamps placed" in page and "href='None'" not in page
    assert "<a href='http://127.0.0.1:8000/#s=0&amp;c=" in page


def test_the_docs_example_runs(capsys):
    """docs/grader.md, "ConvTranspose2d and Conv1d": its Python block."""
    text = (ROOT / "docs" / "grader.md").read_text(encoding="utf-8")
    section = text.split("## ConvTranspose2d and Conv1d", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    exec(compile(code, "docs/grader.md", "exec"), {})
    assert "likely mistake: output_padding_ignored" in capsys.readouterr().out


def test_a_conv1d_output_with_its_filters_and_positions_swapped_is_not_called_h_and_w():
    case = Conv1dCase(fg=3, length=4, k=2)  # out (1, 3, 3): F = L_out
    expected = get_convention("torch-conv1d").expected(case)["out"]
    said = facts("torch-conv1d", case, "out", np.swapaxes(expected, -1, -2))
    assert not [f for f in said if "H and W" in f], said
