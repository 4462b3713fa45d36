"""Printable handouts, drawn by the page in Debian's Chromium and read back with
poppler-utils (pdfinfo, pdftotext: a reader nobody here wrote). `convscope export
handout.pdf` has one page per phase that has steps (or per chosen step), each holding
its phase's name, its step's text and the phase's rule; the page's Export → Handout
builds the same pages, and print shows them and none of the page's controls."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from test_browser_helpers import choose_preset, require_chromium, wait_until

from convscope.export.lesson import lesson_document, lesson_source

pytestmark = pytest.mark.browser

require_chromium()
if shutil.which("pdftotext") is None or shutil.which("pdfinfo") is None:
    raise RuntimeError("the handout tests need poppler-utils (pdfinfo, pdftotext): make system-deps installs it")

from convscope.cli import main  # noqa: E402


def _trace(preset: str) -> tuple[list[dict], list[dict], dict]:
    """The server's trace of a preset: (phases, events, tensors) of its document."""
    lines = lesson_document(**lesson_source(preset, None))["lines"]
    header = lines[0]
    events = [line for line in lines[1:] if line.get("type") == "event"]
    assert len(events) == header["total_events"]
    return header["phases"], events, header["tensors"]


def _pdf_pages(path: Path) -> int:
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", info, re.M)[1])


def _pdf_size(path: Path) -> tuple[float, float]:
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout
    found = re.search(r"^Page size:\s+([\d.]+) x ([\d.]+) pts", info, re.M)
    return float(found[1]), float(found[2])


def _page_text(path: Path, page: int) -> str:
    """Page ``page`` (from 1) as pdftotext reads it, without any white space (the text
    wraps where the paper's width says)."""
    text = subprocess.run(
        ["pdftotext", "-f", str(page), "-l", str(page), str(path), "-"], capture_output=True, text=True, check=True
    ).stdout
    return "".join(text.split())


def _flat(text: str) -> str:
    return "".join(text.split())


def _assert_page(path: Path, page: int, step: int, phases, events, tensors) -> None:
    ev = events[step]
    text = _page_text(path, page)
    assert _flat(ev["phase"]) in text, (page, text)
    assert _flat(ev["text"]) in text, (page, ev["text"], text)
    assert _flat(f"step {step + 1} of {len(events)}") in text, (page, text)
    # the phase's rule: the formula of each tensor its steps write (from the header)
    written = {w["tensor"] for e in events if e["phase"] == ev["phase"] for w in e["writes"]}
    rules = [tensors[name]["formula"] for name in written if tensors[name].get("formula")]
    assert rules, ev["phase"]
    for rule in rules:
        assert _flat(rule) in text, (page, rule, text)


def test_the_cli_handout_has_one_page_per_phase_with_its_name_rule_and_first_step(tmp_path, capsys):
    out = tmp_path / "handout.pdf"
    assert main(["export", str(out), "--preset", "cs231n"]) == 0, capsys.readouterr().err
    said = capsys.readouterr().out
    phases, events, tensors = _trace("cs231n")
    with_steps = [p for p in phases if p["stop"] > p["start"]]
    assert len(with_steps) == 4, phases  # pad, forward, backward, crop
    assert f"wrote {out} (" in said and "4 pages (A4 landscape)" in said, said
    assert _pdf_pages(out) == len(with_steps)
    width, height = _pdf_size(out)
    assert (round(width), round(height)) == (842, 596), (width, height)  # A4, landscape
    for page, phase in enumerate(with_steps, start=1):
        _assert_page(out, page, phase["start"], phases, events, tensors)


def test_a_step_range_on_letter_paper_has_a_page_per_step(tmp_path, capsys):
    out = tmp_path / "forward.pdf"
    code = main(["export", str(out), "--preset", "cs231n", "--steps", "18-21", "--paper", "letter"])
    assert code == 0, capsys.readouterr().err
    phases, events, tensors = _trace("cs231n")
    assert _pdf_pages(out) == 4
    assert tuple(round(v) for v in _pdf_size(out)) == (792, 612)  # Letter, landscape
    for page, step in enumerate(range(17, 21), start=1):  # forward's last two, backward's first two
        _assert_page(out, page, step, phases, events, tensors)


_SHOWN = """(sel) => [...document.querySelectorAll(sel)].some((el) => {
  const r = el.getBoundingClientRect();
  return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden';
})"""


def test_the_pages_handout_prints_its_pages_and_none_of_the_controls(open_page, tmp_path):
    page = open_page(viewport=(1366, 768)).page
    choose_preset(page, "cs231n")
    page.evaluate("window.convscope.seek(30)")
    # without a handout, print shows the step and the stage, not the page's controls
    page.emulate_media(media="print")
    for sel in ("#stage .cell", "#eq-text"):
        assert page.evaluate(_SHOWN, sel), sel
    for sel in (".topbar", "#setup", ".player", ".legend", "#handout"):
        assert not page.evaluate(_SHOWN, sel), sel
    page.emulate_media(media="screen")

    # (in a function: Playwright calls what a string expression evaluates to if it is one)
    page.evaluate("() => { window.print = () => { window.__printed = (window.__printed || 0) + 1; }; }")
    page.click("#export-menu > summary")
    page.click("#export-handout")
    wait_until(page, "window.__printed === 1", timeout=30)
    assert page.evaluate("window.convscope.step") == 30  # (back at its step)
    phases, events, _ = _trace("cs231n")
    starts = [p["start"] for p in phases if p["stop"] > p["start"]]
    got = page.evaluate(
        """() => [...document.querySelectorAll('#handout .handout-page')].map((p) => ({
          step: Number(p.dataset.step), text: p.innerText,
          picture: p.querySelector('img.handout-stage').naturalWidth }))"""
    )
    assert [g["step"] for g in got] == starts
    for g in got:
        assert _flat(events[g["step"]]["text"]) in _flat(g["text"]) and events[g["step"]]["phase"] in g["text"]
        assert g["picture"] > 0
    # on screen the handout is not shown; in print it is all that is shown
    assert not page.evaluate(_SHOWN, "#handout")
    page.emulate_media(media="print")
    assert page.evaluate(_SHOWN, "#handout .handout-page img.handout-stage")
    for sel in (".topbar", "#setup", ".player", "#stage", "#equation"):
        assert not page.evaluate(_SHOWN, sel), sel
    pdf = tmp_path / "page.pdf"
    pdf.write_bytes(page.pdf(format="A4", landscape=True, print_background=True))
    assert _pdf_pages(pdf) == len(starts)
    for k, step in enumerate(starts, start=1):
        assert _flat(events[step]["text"]) in _page_text(pdf, k)
    # after printing the page prints its own step again
    page.evaluate("window.dispatchEvent(new Event('afterprint'))")
    assert page.evaluate("document.querySelectorAll('#handout *').length") == 0
    assert page.evaluate(_SHOWN, "#stage .cell")
