"""A crash report names the student's own line and what the names on it held."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from test_grader_sandbox import ROOT, STUDENTS

from convcore.grader.channel import ChannelBroken, decode_results, encode_results
from convcore.mistakes.conventions import Failure, call_plainly
from convcore.mistakes.crash_site import crash_site, format_site


def reshapes_to_three_by_three(x, w, b, conv_param):
    kernel = w.reshape(3, 3)  # the line
    return kernel


def pads_only_when_asked(x, w, b, conv_param):
    pad = conv_param["pad"]
    if pad:
        x_pad = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    return x_pad.sum()  # the line


def pads_with_a_bad_width(x, w, b, conv_param):
    return np.pad(x, ((0, 0), (0, 0), (-1, 1)))  # the line: numpy raises, several frames down


def line_of(function, marker: str = "# the line") -> int:
    import inspect

    source, start = inspect.getsourcelines(function)
    return start + next(i for i, text in enumerate(source) if marker in text)


X, W, B = np.ones((1, 1, 2, 2)), np.array([[[[2.0]]]]), np.zeros(1)


@pytest.mark.parametrize(
    "function, kind, names",
    [
        (reshapes_to_three_by_three, "ValueError", {"w": "shape (1, 1, 1, 1), [[[[2.]]]]"}),
        (pads_only_when_asked, "UnboundLocalError", {}),
        (pads_with_a_bad_width, "ValueError", {"x": "shape (1, 1, 2, 2)"}),
    ],
)
def test_the_site_is_the_checked_codes_last_line_with_its_values(function, kind, names):
    failure = call_plainly(function, X, W, B, {"stride": 1, "pad": 0})
    assert isinstance(failure, Failure) and failure.kind == kind
    site = failure.site
    assert site["file"] == "test_crash_site.py" and site["line"] == line_of(function)
    assert "# the line" in site["source"]
    for name, value in names.items():
        assert site["values"][name].startswith(value), site
    assert format_site(site)[0] == f"at test_crash_site.py:{site['line']}: {site['source']}"


def test_a_failure_inside_convcore_or_numpy_alone_has_no_site():
    try:
        np.zeros(2).reshape(3)
    except ValueError as exc:
        exc.__traceback__ = None
        assert crash_site(exc) is None


def test_the_site_does_not_make_two_failures_differ():
    assert Failure("ValueError", "m", {"file": "a.py", "line": 1, "source": "", "values": {}}) == Failure(
        "ValueError", "m", None
    )


def test_the_site_crosses_the_channel_checked():
    failure = call_plainly(reshapes_to_three_by_three, X, W, B, {})
    back = decode_results(json.loads(json.dumps(encode_results({"out": failure}))), ("out",))["out"]
    assert back.site == failure.site
    bad = encode_results({"out": failure})
    bad["out"]["site"]["line"] = "eleven"
    with pytest.raises(ChannelBroken):
        decode_results(bad, ("out",))
    bad["out"]["site"] = {"file": "x", "line": 1, "source": "", "values": {"a": ["not text"]}}
    with pytest.raises(ChannelBroken):
        decode_results(bad, ("out",))


@pytest.mark.slow
def test_convscope_check_reports_the_line_a_submission_crashed_on(tmp_path):
    (tmp_path / "seven_loops.py").write_text((STUDENTS / "seven_loops.py").read_text())
    source = (
        "import numpy as np\n"
        "from seven_loops import conv_forward_naive, conv_backward_naive as right\n"
        "\n"
        "def conv_backward_naive(dout, cache):\n"
        "    x, w, b, conv_param = cache\n"
        "    pad = conv_param['pad']\n"
        "    if pad:\n"
        "        dx_pad = np.pad(right(dout, cache)[0], ((0, 0), (0, 0), (pad, pad), (pad, pad)))\n"
        "    dx = dx_pad[:, :, pad:-pad, pad:-pad] if pad else dx_pad\n"
        "    return dx, right(dout, cache)[1], right(dout, cache)[2]\n"
    )
    (tmp_path / "student.py").write_text(source)
    done = subprocess.run(
        [sys.executable, "-m", "convscope", "check", "student.py", "--json"],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = json.loads(done.stdout)
    dx = report["outputs"]["dx"]["counterexample"]
    assert dx["kind"] == "UnboundLocalError"
    assert dx["site"] == {
        "file": "student.py",
        "line": 9,
        "source": "dx = dx_pad[:, :, pad:-pad, pad:-pad] if pad else dx_pad",
        "values": {"pad": "0"},
    }
    text = subprocess.run(
        [sys.executable, "-m", "convscope", "check", "student.py"],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert "at student.py:9: dx = dx_pad[:, :, pad:-pad, pad:-pad] if pad else dx_pad" in text and "pad = 0" in text
