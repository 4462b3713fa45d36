"""Trace your own code, as a student uses it (issue 23): ``convscope check FILE --trace
OUT.html`` writes a lesson file of the student's own code on its smallest failing case;
opened offline in Debian's Chromium, the code panel shows the student's file, D lands on
the first wrong write and the line holding the bug is the current one; correct code's
file says no write is wrong."""

from __future__ import annotations

import pytest
from test_browser_helpers import require_chromium, wait_until
from test_lesson_file import OfflinePage, _embedded

from convscope.cli import main

pytestmark = pytest.mark.browser

require_chromium()

CORRECT = """import numpy as np


def conv_forward_naive(x, w, b, conv_param):
    s, p = conv_param["stride"], conv_param["pad"]
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    out = np.zeros((N, F, 1 + (H + 2 * p - HH) // s, 1 + (W + 2 * p - WW) // s))
    for n in range(N):
        for f in range(F):
            for i in range(out.shape[2]):
                for j in range(out.shape[3]):
                    out[n, f, i, j] = np.sum(xp[n, :, i * s : i * s + HH, j * s : j * s + WW] * w[f]) + b[f]
    return out, (x, w, b, conv_param)


def conv_backward_naive(dout, cache):
    x, w, b, conv_param = cache
    s, p = conv_param["stride"], conv_param["pad"]
    F, _, HH, WW = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    dxp, dw, db = np.zeros(xp.shape), np.zeros(w.shape), np.zeros(F)
    for n in range(dout.shape[0]):
        for f in range(F):
            for i in range(dout.shape[2]):
                for j in range(dout.shape[3]):
                    db[f] += dout[n, f, i, j]
                    dw[f] += dout[n, f, i, j] * xp[n, :, i * s : i * s + HH, j * s : j * s + WW]
                    dxp[n, :, i * s : i * s + HH, j * s : j * s + WW] += dout[n, f, i, j] * w[f]
    return dxp[:, :, p : p + x.shape[2], p : p + x.shape[3]], dw, db
"""
# the width's stride dropped where dx is scattered
BUGGY = CORRECT.replace(
    "dxp[n, :, i * s : i * s + HH, j * s : j * s + WW] += dout[n, f, i, j] * w[f]",
    "dxp[n, :, i * s : i * s + HH, j : j + WW] += dout[n, f, i, j] * w[f]  # BUG",
)


def _current(page) -> str | None:
    return page.evaluate("document.querySelector('#code .code-line.current')?.dataset.line ?? null")


def test_the_trace_of_wrong_code_lands_on_its_first_wrong_write(browser, tmp_path, capsys):
    student = tmp_path / "mine.py"
    student.write_text(BUGGY, encoding="utf-8")
    out = tmp_path / "trace.html"
    assert main(["check", str(student), "--trace", str(out)]) == 1  # (the grader's code: an output fails)
    said = capsys.readouterr().out
    assert f"trace of your code: {out}" in said and "its first wrong write is step" in said
    bug = next(k for k, line in enumerate(BUGGY.splitlines(), start=1) if line.endswith("# BUG"))
    lesson = _embedded(out)
    header = lesson["lines"][0]
    assert header["code"]["lines"] == BUGGY.splitlines() and lesson["code"] is True
    d = header["divergence"]
    assert d["line"] == bug and header["first_divergence"] == d["event"]
    view = OfflinePage(browser, out, viewport=(1366, 768))
    try:
        page = view.page
        wait_until(page, "window.convscope.complete && !document.getElementById('code').hidden")
        assert "your code" in page.locator("#badge").inner_text()
        assert page.locator("#lab-divergence").inner_text() == f"First wrong write, step {d['event'] + 1} (D)"
        page.locator("#stage").focus()
        page.keyboard.press("d")
        wait_until(page, f"window.convscope.shownStep === {d['event']}")
        wait_until(page, f"document.querySelector('#code .code-line.current')?.dataset.line === '{bug}'")
        note = page.locator("#lab-note").inner_text() if page.locator("#lab-note").count() else ""
        assert "first wrong write" in (note + page.locator("#lab-bar").inner_text()).lower()
        # the written cell of that step is on the stage
        written = page.evaluate("Array.from(document.querySelectorAll('#stage .wr'), (c) => c.dataset.tensor)")
        assert written and set(written) <= {"dxp"}, written
    finally:
        view.close()


def test_the_trace_of_correct_code_says_no_write_is_wrong(browser, tmp_path, capsys):
    student = tmp_path / "right.py"
    student.write_text(CORRECT, encoding="utf-8")
    out = tmp_path / "trace.html"
    assert main(["check", str(student), "--trace", str(out)]) == 0
    assert "no write of it is wrong" in capsys.readouterr().out
    header = _embedded(out)["lines"][0]
    assert header["divergence"] is None and all(c["match"] for c in header["differences"].values())
    view = OfflinePage(browser, out, viewport=(1366, 768))
    try:
        page = view.page
        wait_until(page, "window.convscope.complete")
        assert page.locator("#lab-divergence").inner_text() == "No wrong write on this case"
        assert "No write of this code is wrong" in page.locator("#lab-bar").inner_text()
    finally:
        view.close()


def test_trace_code_takes_a_case_and_refuses_a_wrong_one(tmp_path, capsys):
    student = tmp_path / "mine.py"
    student.write_text(BUGGY, encoding="utf-8")
    out = tmp_path / "trace.html"
    assert main(["trace-code", str(student), "--case", '{"stride": [2, 2], "h": 5, "w": 5}', "-o", str(out)]) == 0
    header = _embedded(out)["lines"][0]
    assert header["spec"]["stride"] == [2, 2] and header["spec"]["x_shape"] == [1, 2, 5, 5]
    assert header["divergence"]["line"] == next(
        k for k, line in enumerate(BUGGY.splitlines(), start=1) if line.endswith("# BUG")
    )
    capsys.readouterr()
    assert main(["trace-code", str(student), "--case", '{"stride": [2]}', "-o", str(out)]) == 2
    assert "--case: stride takes 2 numbers or one, got [2]" in capsys.readouterr().err
    assert main(["trace-code", str(student), "--case", '{"kh": 9}', "-o", str(out)]) == 2
    assert "--case:" in capsys.readouterr().err
