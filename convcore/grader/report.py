"""The grader's report: plain data (schema ``convscope.check/1``) and its three
readings: text for a terminal or a notebook, JSON, and Gradescope's ``results.json``.

Per output (out, dx, dw, db): "pass", or "fail" with the smallest counterexample (its
parameters and inputs in the convention's terms), the expected and received tensors,
the differing cells, the likely catalogued mistakes, and a link that opens the page on
the counterexample with the received tensor to compare (where the page traces the layer:
a Conv1d's counterexample, and a ConvTranspose2d's whose output_padding is not below the
stride, has ``page`` and ``config`` None). A
report with ``error`` set could not grade at all (exit code 2).
"""

from __future__ import annotations

import base64
import html
import json
import math
from typing import Any

import numpy as np

from ..compare import compare_tensor
from ..mistakes import CONVENTIONS, Case, Failure, get_convention
from ..mistakes.crash_site import format_site

__all__ = ["PAGE", "Report", "SCHEMA", "convention_words", "counterexample_data", "page_url"]

SCHEMA = "convscope.check/1"
PAGE = "http://127.0.0.1:8000/"
ROLES = {"out": "forward", "dx": "backward", "dw": "backward", "db": "backward"}


def _plain(value: Any) -> Any:
    """Arrays as nested lists; NaN and infinities as strings (JSON has no such numbers)."""
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return f if math.isfinite(f) else str(f)
    if isinstance(value, np.integer):
        return int(value)
    return value


def page_url(config: dict[str, Any], base: str = PAGE) -> str:
    """The page's link to a config (the fragment ``#s=0&c=<base64url JSON>`` of
    static/js/model/url-fragment.js)."""
    text = json.dumps(config, separators=(",", ":"))
    encoded = base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")
    return f"{base}#s=0&c={encoded}"


def counterexample_data(convention: str, case: Case, output: str, got: Any, page: str = PAGE) -> dict[str, Any]:
    """Everything a person needs to rerun a counterexample for ``output``."""
    conv = get_convention(convention)
    expected = conv.expected(case)[output]
    data: dict[str, Any] = {
        "case": case.to_dict(),
        "description": case.describe(),
        "inputs": _plain(conv.inputs(case)),
        "expected": _plain(expected),
    }
    if isinstance(got, Failure):
        data.update(kind=got.kind, error=str(got), got=None)
        if got.site is not None:
            data["site"] = got.site
    else:
        comparison = compare_tensor(output, expected, got)
        data.update(kind=comparison.kind, got=_plain(got), comparison=_plain(comparison.to_dict()))
    config = conv.page_config(case)
    if config is None:  # (the page does not trace this layer or this case: no link, no lesson file)
        data.update(config=None, page=None)
        return data
    traced = conv.traced_names.get(output, output)  # (the trace's name of the output: a transposed y)
    if not isinstance(got, Failure):
        config["compare"] = {traced: _plain(got)}
    elif got.kind == "returned None":  # (the page says so: "dx is None")
        config["compare"] = {traced: None}
    data["config"] = _plain(config)  # (the trace config of the case: a lesson file is made from it)
    data["page"] = page_url(config, page)
    return data


class Report:
    """A grading report; ``data`` is the plain JSON-ready document."""

    def __init__(self, data: dict[str, Any]):
        self.data = data

    @classmethod
    def fatal(cls, target: str, convention: str, message: str, **extra: Any) -> Report:
        return cls(
            {
                "schema": SCHEMA,
                "target": target,
                "convention": convention,
                "status": "error",
                "error": message,
                "outputs": {},
                **extra,
            }
        )

    @property
    def exit_code(self) -> int:
        """0 every output passes, 1 one fails, 2 the code could not be graded."""
        if self.data.get("error"):
            return 2
        return 1 if any(o["status"] == "fail" for o in self.data["outputs"].values()) else 0

    @property
    def passed(self) -> bool:
        return self.exit_code == 0

    def to_json(self) -> str:
        return json.dumps(self.data, indent=2, ensure_ascii=False)

    # -- text ---------------------------------------------------------------------------

    def _output_lines(self, name: str, result: dict[str, Any]) -> list[str]:
        if result["status"] == "pass":
            return [f"{name:<4} pass   ({result['checked']} cases)"]
        ce = result["counterexample"]
        lines = [f"{name:<4} FAIL   ({ce['kind']}) on the smallest case found:", f"       {ce['description']}"]
        for key, value in ce["inputs"].items():
            lines.append(f"       {key} = {_compact(value)}")
        lines.append(f"       expected {name} = {_compact(ce['expected'])}")
        if ce.get("error"):
            lines.append(f"       got: {ce['error']}")
            lines += [f"         {line}" for line in format_site(ce["site"])] if ce.get("site") else []
        else:
            lines.append(f"       got      {name} = {_compact(ce['got'])}")
            comparison = ce["comparison"]
            if comparison["kind"] == "wrong values":
                count = comparison["differing_count"]
                lines.append(f"       {count} {'cell differs' if count == 1 else 'cells differ'}:")
                for cell in comparison["differing"]:
                    index = ",".join(str(i) for i in cell["index"])
                    lines.append(
                        f"         {name}[{index}]: expected {_num(cell['expected'])}, got {_num(cell['got'])}"
                    )
            else:
                lines.append(f"       {comparison['message']}")
        for fact in result.get("facts", []):
            lines.append(f"       fact: {fact}")
        for mistake in result["likely_mistakes"]:
            lines.append(f"       likely mistake: {mistake['id']}: {mistake['title']}")
            lines.append(f"         {mistake['wrong']}")
            lines.append(f"         fix: {mistake['should']}")
        for alike in result.get("look_alikes", []):
            lines.append(
                f"       looks like {alike['id']} ({alike['title']}) on this case, but not on {alike['differs_on']}"
            )
        if ce.get("page"):
            lines.append(f"       see it step by step: run `convscope serve` and open {ce['page']}")
        return lines

    def __str__(self) -> str:
        d = self.data
        head = f"convscope check {d['target']} ({convention_words(d['convention'])})"
        warning = [f"warning: {d['isolation']}"] if str(d.get("isolation", "")).startswith("not isolated") else []
        warning += [f"attempt: {a}" for a in d.get("attempts", [])]  # (convcore.grader.attempts)
        if d.get("error"):
            site = [f"  {line}" for line in format_site(d["site"])] if d.get("site") else []
            return "\n".join([head, *warning, f"error: {d['error']}", *site, "result: could not grade (exit 2)"])
        lines = [
            f"{head}, seed {d['seed']}, {d['cases']} cases",
            *warning,
            *([f"note: {d['note']}"] if d.get("note") else []),
        ]
        for name, result in d["outputs"].items():
            lines += ["  " + line for line in self._output_lines(name, result)]
        failed = [n for n, r in d["outputs"].items() if r["status"] == "fail"]
        total = len(d["outputs"])
        if failed:
            lines.append(f"result: {len(failed)} of {total} outputs fail ({', '.join(failed)}) (exit 1)")
        else:
            lines.append(f"result: all {total} outputs pass (exit 0)")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(str(self))}</pre>"

    # -- Gradescope ---------------------------------------------------------------------

    def gradescope(self) -> dict[str, Any]:
        """Gradescope's results.json (top-level score, output, tests): one test per
        output, one point each."""
        d = self.data
        if d.get("error"):
            return {"score": 0, "output": f"could not grade: {d['error']}", "tests": []}
        tests = []
        for name, result in d["outputs"].items():
            ok = result["status"] == "pass"
            tests.append(
                {
                    "name": f"{name} ({ROLES[name]})",
                    "score": 1 if ok else 0,
                    "max_score": 1,
                    "status": "passed" if ok else "failed",
                    "output": "\n".join(self._output_lines(name, result)),
                }
            )
        score = sum(t["score"] for t in tests)
        return {
            "score": score,
            "output": f"{str(self).splitlines()[0]}: {score} of {len(tests)} outputs pass",
            "tests": tests,
        }


def convention_words(name: str) -> str:
    """``torch convention``, or with the layer where it is not Conv2d:
    ``torch-transposed convention: ConvTranspose2d``."""
    convention = CONVENTIONS.get(name)
    layer = f": {convention.layer}" if convention is not None and convention.layer != "Conv2d" else ""
    return f"{name} convention{layer}"


def _num(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _compact(value: Any) -> str:
    """A value on one line, arrays with short numbers, long ones cut."""
    if isinstance(value, list):
        text = np.array2string(
            np.asarray(value, dtype=object),
            separator=", ",
            threshold=60,
            max_line_width=10**6,
            formatter={"all": lambda v: _num(v)},
        )
    else:
        text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= 400 else text[:399] + "…"
