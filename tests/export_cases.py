"""What the command-line exports (animations and handouts) share in their tests: running
``convscope export`` in process, and the step-range options both refuse, with the words
they refuse them in, on the CS231n preset (38 steps)."""

from __future__ import annotations

from convscope.cli import main

STEP_RANGE_REFUSALS = [
    (
        ["--preset", "cs231n", "--phase", "sideways"],
        "--phase 'sideways': this trace has no such phase; its phases are pad (step 1), forward (steps 2-19), backward (steps 20-37), crop (step 38)",
    ),
    (["--preset", "cs231n", "--steps", "40-30"], "--steps 40-30 is empty: step 30 comes before step 40"),
    (["--preset", "cs231n", "--steps", "0-3"], "--steps 0-3: this trace has steps 1 to 38"),
    (["--preset", "cs231n", "--steps", "30-39"], "--steps 30-39: this trace has steps 1 to 38"),
    (["--preset", "cs231n", "--steps", "3..9"], "--steps must be FROM-TO"),
]


def export_cli(tmp_path, capsys, *options: str, output: str) -> tuple[int, str]:
    """``convscope export tmp_path/output OPTIONS``: its exit status and what it said on stderr."""
    code = main(["export", str(tmp_path / output), *options])
    return code, capsys.readouterr().err.strip()


def assert_refused_before_any_browser(tmp_path, capsys, marking_browser, options, said: str, *, output: str) -> None:
    """``convscope export tmp_path/output OPTIONS`` exits 2 with one line holding
    ``said``, no traceback, having started no browser and written no file."""
    code, err = export_cli(tmp_path, capsys, *options, output=output)
    assert code == 2, err
    assert said in err, err
    assert err.count("\n") == 0, err  # one line, no traceback
    assert not marking_browser.exists(), "a browser was started for a request that cannot be made"
    assert not (tmp_path / output).exists()
