"""`convscope export anim.gif|anim.webm`'s checks, made before any browser starts: every
bad option gets one line naming it and the numbers and exit status 2, and the browser
(a stand-in that leaves a mark when run) is never started; no browser to be found says
what to install or set. The limits are the page's own (read from its module; node
imports the module and must see the same numbers)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from export_cases import STEP_RANGE_REFUSALS, assert_refused_before_any_browser, export_cli

from convscope.export import browser as browser_module
from convscope.export.animation import page_limits

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")
if NODE is None and os.environ.get("CI") == "true":
    raise RuntimeError("the limits test needs node (Debian's nodejs; make test installs it)")


def _export(tmp_path, capsys, *options: str, output: str = "anim.gif") -> tuple[int, str]:
    return export_cli(tmp_path, capsys, *options, output=output)


@pytest.mark.parametrize(
    "options, said",
    [
        *STEP_RANGE_REFUSALS,
        (
            ["--preset", "cs231n", "--size", "1920"],
            "--size must be WIDTHxHEIGHT in pixels, such as 1920x1080 or 1280x720, not '1920'",
        ),
        (
            ["--preset", "cs231n", "--size", "7680x4320"],
            "--size 7680x4320 is out of bounds: width from 320 to 3840, height from 180 to 2160 pixels",
        ),
        (["--preset", "cs231n", "--size", "100x100"], "--size 100x100 is out of bounds: width from 320 to 3840"),
        (
            ["--preset", "cs231n", "--size", "1281x720"],
            "--size 1281x720: width and height must be even numbers of pixels",
        ),
        (["--preset", "cs231n", "--fps", "0.1"], "--fps 0.1 is out of bounds: steps per second from 0.5 to 30"),
        (["--preset", "cs231n", "--fps", "31"], "--fps 31 is out of bounds: steps per second from 0.5 to 30"),
        (["--preset", "cs231n", "--fps", "nan"], "--fps nan is out of bounds"),
        (["--preset", "cs231n", "--timeout", "0"], "--timeout 0 is out of bounds: from 1 to 86400 seconds"),
        (["--preset", "cs231n", "--view", "sideways"], "view:"),
        (["--preset", "nope"], "no preset named 'nope'"),
    ],
)
def test_a_bad_option_is_named_with_its_numbers_and_no_browser_starts(tmp_path, capsys, marking_browser, options, said):
    assert_refused_before_any_browser(tmp_path, capsys, marking_browser, options, said, output="anim.gif")


def test_a_range_longer_than_the_pages_frame_limit_is_refused(tmp_path, capsys, marking_browser):
    # a setup whose whole trace has more steps than the page's MAX_FRAMES
    setup = tmp_path / "big.json"
    limit = int(page_limits()["MAX_FRAMES"])
    setup.write_text(
        json.dumps(
            {
                "x": {"fill": "randint", "shape": [1, 1, 30, 30], "low": 0, "high": 3, "seed": 1},
                "w": {"fill": "randint", "shape": [1, 1, 3, 3], "low": -1, "high": 2, "seed": 2},
            }
        )
    )
    code, err = _export(tmp_path, capsys, "--setup", str(setup))
    assert code == 2, err
    assert f"more than the page's {limit}: choose a --phase or a shorter --steps range" in err, err
    code, err = _export(tmp_path, capsys, "--setup", str(setup), "--steps", f"1-{limit + 1}")
    assert code == 2 and f"--steps 1-{limit + 1} is {limit + 1} frames, more than the page's {limit}" in err, err
    assert not marking_browser.exists()


def test_animation_options_on_a_lesson_file_and_unknown_outputs_are_refused(tmp_path, capsys, marking_browser):
    code, err = _export(tmp_path, capsys, "--preset", "d2l", "--fps", "3", "--projector", output="lesson.html")
    assert code == 2 and err == "convscope: --fps, --projector: only for animations (.gif, .webm), not a lesson file", (
        err
    )
    code, err = _export(tmp_path, capsys, "--preset", "d2l", "--code", output="handout.pdf")
    assert (
        code == 2
        and err == "convscope: --code: only for a lesson file (.html) or an animation (.gif, .webm), not a handout"
    ), err
    code, err = _export(tmp_path, capsys, "--preset", "d2l", output="anim.mp4")
    assert code == 2 and "the output must end in .html (a lesson file), .gif or .webm (an animation)" in err, err
    assert not marking_browser.exists()


def test_no_browser_says_what_to_install_or_set(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CONVSCOPE_CHROMIUM", str(tmp_path / "no-such-browser"))
    code, err = _export(tmp_path, capsys, "--preset", "d2l")
    assert code == 2
    assert f"CONVSCOPE_CHROMIUM={tmp_path / 'no-such-browser'} names no program" in err, err
    # nothing named, none at Debian's place, none on the PATH
    monkeypatch.delenv("CONVSCOPE_CHROMIUM")
    monkeypatch.setattr(browser_module, "DEBIAN_CHROMIUM", str(tmp_path / "usr-bin-chromium"))
    monkeypatch.setenv("PATH", str(tmp_path))
    code, err = _export(tmp_path, capsys, "--preset", "d2l")
    assert code == 2
    assert "install one (Debian, Ubuntu: apt-get install chromium) or set CONVSCOPE_CHROMIUM" in err, err
    assert not (tmp_path / "anim.gif").exists()


@pytest.mark.skipif(NODE is None, reason="node imports the page's module (Debian's nodejs; make test installs it)")
def test_the_limits_are_the_ones_the_page_module_exports():
    script = (
        f"const m = await import({json.dumps((ROOT / 'static/js/panels/animation-dialog.js').as_uri())});"
        "console.log(JSON.stringify({MAX_FRAMES: m.MAX_FRAMES, MIN_FPS: m.MIN_FPS, MAX_FPS: m.MAX_FPS}));"
    )
    out = subprocess.run(
        [NODE, "--input-type=module", "-e", script], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert json.loads(out) == page_limits()
