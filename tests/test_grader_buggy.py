"""Ten buggy CS231n layers of our own, none of them a catalogued mistake: the grader
names no catalogued mistake for any of them, and each crash names its line.

Each file is the reference (convcore.compat.cs231n) with one bug, written as a student
would; a crash's line is marked `# crash`. Graded in this process (grade on the file's
loaded functions), as the sandbox's parent would grade what its child returns.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from convcore.grader.grading import grade
from convcore.grader.loader import find_subject, load_module

PRELUDE = """\
import numpy as np
from convcore.compat.cs231n import conv_forward_naive as right_forward, conv_backward_naive as right_backward
"""

BUGGY = {
    # wrong values, no crash
    "flipped_kernel": """
        def conv_forward_naive(x, w, b, conv_param):
            return right_forward(x, w[:, :, ::-1, ::-1], b, conv_param)[0], (x, w, b, conv_param)
        """,
    "bias_twice": """
        def conv_forward_naive(x, w, b, conv_param):
            out, cache = right_forward(x, w, b, conv_param)
            return out + b.reshape(1, -1, 1, 1), cache
        """,
    "dw_averaged_over_batch": """
        from convcore.compat.cs231n import conv_forward_naive
        def conv_backward_naive(dout, cache):
            dx, dw, db = right_backward(dout, cache)
            return dx, dw / (cache[0].shape[0] + 1), db
        """,
    "dx_negated": """
        from convcore.compat.cs231n import conv_forward_naive
        def conv_backward_naive(dout, cache):
            dx, dw, db = right_backward(dout, cache)
            return -dx, dw, db
        """,
    "db_over_the_wrong_axes": """
        from convcore.compat.cs231n import conv_forward_naive
        def conv_backward_naive(dout, cache):
            dx, dw, _ = right_backward(dout, cache)
            return dx, dw, dout.sum(axis=(0, 1, 2))
        """,
    # (its width is stride 1's: not the catalogued column_stride_missing, whose width is right)
    "stride_on_rows_only": """
        def conv_forward_naive(x, w, b, conv_param):
            s, pad = conv_param["stride"], conv_param["pad"]
            out, cache = right_forward(x, w, b, {"stride": 1, "pad": pad})
            return out[:, :, ::s, :], (x, w, b, conv_param)
        """,
    # crashes
    "loop_one_too_far": """
        from convcore.compat.cs231n import conv_forward_naive
        def conv_backward_naive(dout, cache):
            dx, dw, db = right_backward(dout, cache)
            for i in range(dout.shape[2] + 1):
                db = db + dout[0, :, i, 0] * 0  # crash
            return dx, dw, db
        """,
    # (the whole w reshaped, not each channel: unlike the catalogued kernel_hardcoded_3 it
    # runs, wrongly, when C·HH·WW is a multiple of 9)
    "kernel_hard_coded_3x3": """
        def conv_forward_naive(x, w, b, conv_param):
            kernel = w.reshape(w.shape[0], -1, 3, 3)  # crash
            return right_forward(x, kernel, b, conv_param)[0], (x, w, b, conv_param)
        """,
    "wrong_key": """
        def conv_forward_naive(x, w, b, conv_param):
            pad = conv_param["padding"]  # crash
            return right_forward(x, w, b, {"stride": conv_param["stride"], "pad": pad})
        """,
    "float_output_size": """
        def conv_forward_naive(x, w, b, conv_param):
            n, _, h, _ = x.shape
            rows = 1 + (h + 2 * conv_param["pad"] - w.shape[2]) / conv_param["stride"]
            out = np.zeros((n, w.shape[0], rows, rows))  # crash
            return out, (x, w, b, conv_param)
        """,
}


def write(folder: Path, name: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(PRELUDE + textwrap.dedent(BUGGY[name]), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", sorted(BUGGY))
def test_a_bug_not_in_the_catalogue_is_not_named_and_a_crash_names_its_line(name, tmp_path):
    path = write(tmp_path, name)
    module = load_module(str(path))
    report = grade("cs231n", find_subject(module, "cs231n", None, str(path)), target=path.name).data
    lines = path.read_text().splitlines()
    crash_line = next((i for i, line in enumerate(lines, 1) if "# crash" in line), None)
    if report["error"]:  # raises on every input: the report still names the line
        assert "raises on every input" in report["error"] and crash_line is not None, report["error"]
        assert (report["site"]["file"], report["site"]["line"]) == (path.name, crash_line), report["site"]
        return
    failed = {n: o for n, o in report["outputs"].items() if o["status"] == "fail"}
    assert failed, f"{name} passed"
    for output, result in failed.items():
        assert result["likely_mistakes"] == [], (output, [m["id"] for m in result["likely_mistakes"]])
    if crash_line is not None:
        sites = [o["counterexample"].get("site") for o in failed.values() if o["counterexample"].get("error")]
        assert sites and all(site and site["file"] == path.name and site["line"] == crash_line for site in sites), sites


def test_a_kernel_reshaped_whole_is_told_apart_from_the_catalogued_one(tmp_path):
    """Both raise ValueError on the 1×1 case; the grader finds a case where the
    catalogued per-channel reshape (kernel_hardcoded_3) differs, and names nothing."""
    path = write(tmp_path, "kernel_hard_coded_3x3")
    report = grade("cs231n", find_subject(load_module(str(path)), "cs231n", None, str(path)), target=path.name).data
    out = report["outputs"]["out"]
    assert out["likely_mistakes"] == []
    differs_on = {a["id"]: a["differs_on"] for a in out["look_alikes"]}
    assert differs_on.get("kernel_hardcoded_3"), out["look_alikes"]
