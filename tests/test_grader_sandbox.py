"""``convscope check`` end to end: the subprocess with its limits, the exit codes, the
text, JSON and Gradescope outputs. A few real runs (each starts Python twice)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

STUDENTS = Path(__file__).parent / "fixtures" / "students"
ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def convscope_check(*args: str, timeout: float = 120) -> tuple[subprocess.CompletedProcess, float]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "convscope", "check", *args],
        cwd=STUDENTS,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return done, time.monotonic() - start


def running_with(marker: str) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline and str(os.getpid()) != proc.name:
            found.append(proc.name)
    return found


def test_a_correct_seven_loop_file_passes_and_leaves_no_files_behind():
    done, _ = convscope_check("seven_loops.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all 4 outputs pass (exit 0)" in done.stdout
    assert not (STUDENTS / ".hypothesis").exists()  # no hypothesis cache beside the student's file


def test_a_mistake_fails_with_json_and_gradescope_output(tmp_path):
    results = tmp_path / "results.json"
    done, _ = convscope_check("empty_crop.py", "--json", "--gradescope", str(results))
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    dx = report["outputs"]["dx"]
    assert dx["status"] == "fail" and dx["likely_mistakes"][0]["id"] == "empty_crop"
    assert dx["counterexample"]["case"]["padding"] == [0, 0, 0, 0]
    gradescope = json.loads(results.read_text())
    assert gradescope["score"] == 2 and [t["max_score"] for t in gradescope["tests"]] == [1, 1, 1]
    assert [t["status"] for t in gradescope["tests"]] == ["failed", "passed", "passed"]


def test_the_links_open_the_page_at_the_address_given_with_page():
    """--page URL: every counterexample's link is that address plus the fragment that
    holds the case (the same config the report carries), never the default port 8000."""
    base = "http://10.9.8.7:8123/convscope/"
    done, _ = convscope_check("empty_crop.py", "--page", base, "--json")
    assert done.returncode == 1, done.stderr
    failing = [o["counterexample"] for o in json.loads(done.stdout)["outputs"].values() if o["status"] == "fail"]
    assert failing
    for ce in failing:
        assert ce["page"].startswith(base + "#s=0&c="), ce["page"]
        encoded = ce["page"].split("&c=", 1)[1]
        assert json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))) == ce["config"]
    text, _ = convscope_check("empty_crop.py", "--page", base)
    assert f"open {base}#s=0&c=" in text.stdout and "127.0.0.1:8000" not in text.stdout


def test_one_function_alone_is_graded():
    done, _ = convscope_check("seven_loops.py:conv_forward_naive")
    assert done.returncode == 0 and "all 1 outputs pass" in done.stdout


@pytest.mark.parametrize(
    "target, args, message",
    [
        ("loops_forever.py", ["--call-time-limit", "2"], "did not return within the time limit of 2 s"),
        ("allocates.py", ["--memory-limit", "700"], "needs more memory than it may use"),
        ("exits.py", [], "sys.exit(3)"),
        ("raises.py", [], "raises on every input"),
        ("syntax_error.py", [], "SyntaxError"),
        ("seven_loops.py:conv_forward", [], "has no function conv_forward"),
        ("no_such_file.py", [], "no such file"),
    ],
)
def test_code_that_cannot_be_graded_gets_a_clear_verdict_and_exit_2(target, args, message):
    done, seconds = convscope_check(target, "--time-limit", "30", *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stdout
    assert seconds < 30


def test_printing_megabytes_does_not_reach_the_terminal():
    done, _ = convscope_check("prints.py")
    assert done.returncode == 0, done.stdout
    assert len(done.stdout) + len(done.stderr) < 10_000


def test_the_whole_check_is_stopped_at_its_time_limit_and_leaves_nothing_running():
    done, seconds = convscope_check("spawns.py", "--call-time-limit", "60", "--time-limit", "4")
    assert done.returncode == 2
    assert "did not finish within the time limit of 4 s" in done.stdout
    assert seconds < 15
    deadline = time.monotonic() + 5
    while running_with("convscope-spawned-marker") and time.monotonic() < deadline:
        time.sleep(0.1)  # SIGKILL is sent; the kernel reaps the processes
    assert not running_with("convscope-spawned-marker")


def test_bad_options_are_refused_with_exit_2():
    done, _ = convscope_check("seven_loops.py", "--examples", "0")
    assert done.returncode == 2 and "--examples must be at least 1" in done.stderr


def test_a_layer_class_is_found_and_graded():
    done, _ = convscope_check("layer_crop.py", "--convention", "layer")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "crop_p0_p1_plus_rows" in done.stdout


def test_two_runs_with_the_same_seed_give_the_same_report():
    first, _ = convscope_check("empty_crop.py", "--json", "--seed", "5")
    second, _ = convscope_check("empty_crop.py", "--json", "--seed", "5")
    assert first.returncode == second.returncode == 1
    assert json.loads(first.stdout) == json.loads(second.stdout)


def test_a_backward_graded_alone_gets_the_files_own_forwards_cache(tmp_path):
    """`FILE:conv_backward_naive` on a file whose forward keeps its own cache (here
    five items) is graded with that cache, and says so; with no forward in the file
    it gets (x, w, b, conv_param)."""
    own = tmp_path / "own_cache.py"
    own.write_text(
        "from convcore.compat.cs231n import conv_forward_naive as _f, conv_backward_naive as _b\n\n"
        "def conv_forward_naive(x, w, b, conv_param):\n"
        "    return _f(x, w, b, conv_param)[0], (x, 'x_col', w, b, conv_param)\n\n"
        "def conv_backward_naive(dout, cache):\n"
        "    x, x_col, w, b, conv_param = cache\n"
        "    return _b(dout, (x, w, b, conv_param))\n"
    )
    done, _ = convscope_check(f"{own}:conv_backward_naive")
    assert done.returncode == 0, done.stdout
    assert "note: conv_backward_naive was given the cache of the file's own conv_forward_naive" in done.stdout
    alone = tmp_path / "backward_only.py"
    alone.write_text("from convcore.compat.cs231n import conv_backward_naive\n")
    done, _ = convscope_check(f"{alone}:conv_backward_naive")
    assert done.returncode == 0 and "note:" not in done.stdout, done.stdout
