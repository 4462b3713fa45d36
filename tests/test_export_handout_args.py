"""`convscope export handout.pdf`'s checks, made before any browser starts: every bad
option gets one line naming it and the numbers and exit status 2, and the browser (a
stand-in that leaves a mark when run) is never started. The steps a handout shows by
default: each phase's first step, phases without steps left out."""

from __future__ import annotations

import json

import pytest
from export_cases import STEP_RANGE_REFUSALS, assert_refused_before_any_browser, export_cli

from convscope.cli import main
from convscope.export.animation import AnimationError
from convscope.export.handout import MAX_PAGES, handout_steps


def _export(tmp_path, capsys, *options: str, output: str = "handout.pdf") -> tuple[int, str]:
    return export_cli(tmp_path, capsys, *options, output=output)


@pytest.mark.parametrize(
    "options, said",
    [
        *STEP_RANGE_REFUSALS,
        (["--preset", "cs231n", "--timeout", "0"], "--timeout 0 is out of bounds: from 1 to 86400 seconds"),
        (["--preset", "cs231n", "--view", "sideways"], "view:"),
        (
            ["--preset", "cs231n", "--fps", "3", "--projector"],
            "--fps, --projector: only for animations (.gif, .webm), not a handout (printed black on white)",
        ),
        (["--preset", "cs231n", "--size", "1280x720"], "--size: only for animations (.gif, .webm), not a handout"),
    ],
)
def test_a_bad_option_is_named_with_its_numbers_and_no_browser_starts(tmp_path, capsys, marking_browser, options, said):
    assert_refused_before_any_browser(tmp_path, capsys, marking_browser, options, said, output="handout.pdf")


def test_paper_is_for_handouts_only_and_one_of_its_sizes(tmp_path, capsys, marking_browser):
    code, err = _export(tmp_path, capsys, "--preset", "d2l", "--paper", "letter", output="anim.gif")
    assert code == 2 and err == "convscope: --paper: only for handouts (.pdf), not an animation", err
    code, err = _export(tmp_path, capsys, "--preset", "d2l", "--paper", "a4", output="lesson.html")
    assert code == 2 and err == "convscope: --paper: only for handouts (.pdf), not a lesson file", err
    code, err = _export(tmp_path, capsys, "--preset", "d2l", "--phase", "forward", output="lesson.html")
    assert code == 2 and "--phase: only for animations (.gif, .webm) or handouts (.pdf), not a lesson file" in err, err
    with pytest.raises(SystemExit) as stopped:
        main(["export", str(tmp_path / "handout.pdf"), "--preset", "d2l", "--paper", "a3"])
    assert stopped.value.code == 2
    assert "--paper: invalid choice: 'a3'" in capsys.readouterr().err
    assert not marking_browser.exists()


def test_more_pages_than_a_handout_takes_are_refused_with_the_numbers(tmp_path, capsys, marking_browser):
    setup = tmp_path / "big.json"
    setup.write_text(
        json.dumps(
            {
                "x": {"fill": "randint", "shape": [1, 1, 30, 30], "low": 0, "high": 3, "seed": 1},
                "w": {"fill": "randint", "shape": [1, 1, 3, 3], "low": -1, "high": 2, "seed": 2},
            }
        )
    )
    code, err = _export(tmp_path, capsys, "--setup", str(setup), "--phase", "forward")
    assert code == 2, err
    assert f"--phase forward is 784 pages, more than a handout's {MAX_PAGES}: choose a shorter --steps range" in err
    code, err = _export(tmp_path, capsys, "--setup", str(setup), "--steps", f"1-{MAX_PAGES + 1}")
    assert code == 2 and f"--steps 1-{MAX_PAGES + 1} is {MAX_PAGES + 1} pages, more than a handout's" in err, err
    assert not marking_browser.exists()


def test_by_default_a_handout_shows_the_first_step_of_each_phase_that_has_steps():
    phases = [
        {"name": "pad", "start": 0, "stop": 1},
        {"name": "forward", "start": 1, "stop": 19},
        {"name": "activation", "start": 19, "stop": 19},
        {"name": "backward", "start": 19, "stop": 37},
    ]
    header = {"phases": phases, "total_events": 37}
    assert handout_steps(header, phase=None, steps=None) == (0, 1, 19)
    assert handout_steps(header, phase="pad", steps=None) == (0,)
    assert handout_steps(header, phase=None, steps=(3, 5)) == (2, 3, 4)
    with pytest.raises(AnimationError, match="--phase 'activation' has no steps in this trace"):
        handout_steps(header, phase="activation", steps=None)
