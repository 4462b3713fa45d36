"""The class's report in three forms: lines for the terminal, a CSV row per submission,
and one offline HTML file (no script, no network, everything a submission wrote
escaped) that says what to re-teach."""

from __future__ import annotations

import csv
import html
import io
from typing import Any

from .batch import Submission, error_kind

__all__ = ["class_csv", "class_html", "class_text"]

OUTPUT_NAMES = ("out", "dx", "dw", "db")


def _rate(tally: dict[str, int]) -> str:
    return (
        f"{tally['pass']} of {tally['of']} pass ({100 * tally['pass'] / tally['of']:.0f}%)" if tally["of"] else "none"
    )


def layers_words(summary: dict[str, Any]) -> str:
    """ "": every graded submission is a Conv2d; else ", 3 ConvTranspose2d, 1 Conv2d" (the
    layers ``--convention torch`` found the submissions' functions to be)."""
    layers = summary.get("layers") or {}
    if set(layers) <= {"Conv2d"}:
        return ""
    return "".join(f", {count} {layer}" for layer, count in layers.items())


def class_text(summary: dict[str, Any], convention: str) -> str:
    s = summary
    lines = [
        f"convscope check: {s['count']} submissions ({convention} convention{layers_words(s)}): {s['passed']} pass, "
        f"{s['failed']} fail, {s['errors']} could not be graded"
    ]
    for name, tally in s["outputs"].items():
        lines.append(f"  {name:<4} {_rate(tally)}")
    if s["mistakes"]:
        lines.append("mistakes (to re-teach), by the number of submissions making them:")
        for m in s["mistakes"]:
            lines.append(f"  {m['count']:>4}  {m['id']}: {m['title']}")
    for output, names in s["unnamed"].items():
        lines.append(f"  {len(names):>4}  {output} wrong, no catalogued mistake")
    if s["crashes"]:
        lines.append("crashes: " + ", ".join(f"{kind} {count}" for kind, count in s["crashes"].items()))
    for kind, names in s["errors_by_kind"].items():
        lines.append(
            f"could not be graded, {kind}: {len(names)} ({', '.join(names[:5])}{', …' if len(names) > 5 else ''})"
        )
    if s.get("attempts"):
        lines.append(f"tried more than computing: {len(s['attempts'])} submissions")
        lines += [f"  {name}: {said}" for name, tried in s["attempts"].items() for said in tried]
    return "\n".join(lines)


def class_csv(submissions: list[Submission], reports: list[dict[str, Any]]) -> str:
    """One row per submission: file, status, each output's status, mistakes, error, and
    what it tried beyond computing."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["submission", "status", *OUTPUT_NAMES, "mistakes", "error", "attempts"])
    for submission, report in zip(submissions, reports):
        outputs = report.get("outputs", {})
        named = sorted({m["id"] for o in outputs.values() for m in o.get("likely_mistakes", [])})
        writer.writerow(
            [
                submission.name,
                report["status"],
                *(outputs.get(n, {}).get("status", "") for n in OUTPUT_NAMES),
                " ".join(named),
                report.get("error") or "",
                "; ".join(report.get("attempts", [])),
            ]
        )
    return buffer.getvalue()


STYLE = """
body { font: 16px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 72rem; padding: 0 1rem; color: #1b1b1b; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.25rem; margin-top: 2rem; }
table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid #ddd; vertical-align: top; }
th { background: #f3f3f3; } td.n { text-align: right; font-variant-numeric: tabular-nums; width: 5rem; }
.bar { display: inline-block; height: .8rem; background: #2a7; vertical-align: middle; margin-right: .5rem; }
.fail { color: #b00; } .pass { color: #070; } .error { color: #a60; } code { font-size: .95em; }
details summary { cursor: pointer; }
"""


def class_html(
    summary: dict[str, Any],
    submissions: list[Submission],
    reports: list[dict[str, Any]],
    convention: str,
    title: str = "Class report",
) -> str:
    e = html.escape
    s = summary
    parts = [
        f"<!doctype html><html lang=en><meta charset=utf-8><title>{e(title)}</title>",
        "<meta name=viewport content='width=device-width, initial-scale=1'>",
        f"<style>{STYLE}</style>",
        f"<h1>{e(title)}</h1>",
        f"<p>{s['count']} submissions, {e(convention)} convention{e(layers_words(s))}: <span class=pass>{s['passed']} pass</span>, "
        f"<span class=fail>{s['failed']} fail</span>, <span class=error>{s['errors']} could not be graded</span>.</p>",
        "<h2>Per output</h2><table><tr><th>output<th>passing",
    ]
    for name, tally in s["outputs"].items():
        width = int(200 * tally["pass"] / tally["of"]) if tally["of"] else 0
        parts.append(
            f"<tr><td><code>{e(name)}</code><td><span class=bar style='width:{width}px'></span>{e(_rate(tally))}"
        )
    parts.append("</table><h2>What to re-teach: the mistakes, by how many made them</h2>")
    if s["mistakes"] or s["unnamed"]:
        parts.append("<table><tr><th class=n>students<th>mistake<th>the fix<th>who")
        for m in s["mistakes"]:
            who = ", ".join(e(n) for n in m["submissions"])
            named = f"<code>{e(m['id'])}</code>"  # (a link to the page where the page knows the layer)
            linked = f"<a href='{e(m['page'], quote=True)}'>{named}</a>" if m.get("page") else named
            parts.append(
                f"<tr><td class=n>{m['count']}<td>{linked}: "
                f"{e(m['title'])}<td>{e(m['should'])}<td><details><summary>{m['count']}</summary>{who}</details>"
            )
        for output, names in s["unnamed"].items():
            parts.append(
                f"<tr><td class=n>{len(names)}<td><code>{e(output)}</code> wrong, no catalogued mistake<td>"
                f"<td><details><summary>{len(names)}</summary>{', '.join(e(n) for n in names)}</details>"
            )
        parts.append("</table>")
    else:
        parts.append("<p>No mistake found.</p>")
    if s["crashes"]:
        parts.append("<h2>Crashes on some case</h2><table><tr><th class=n>outputs<th>exception")
        parts += [f"<tr><td class=n>{c}<td><code>{e(k)}</code>" for k, c in s["crashes"].items()]
        parts.append("</table>")
    if s["errors_by_kind"]:
        parts.append("<h2>Could not be graded</h2><table><tr><th class=n>submissions<th>why<th>who")
        for kind, names in s["errors_by_kind"].items():
            parts.append(f"<tr><td class=n>{len(names)}<td>{e(kind)}<td>{', '.join(e(n) for n in names)}")
        parts.append("</table>")
    if s.get("attempts"):
        parts.append(
            "<h2>Tried more than computing</h2><table><tr><th>submission<th>what it tried, and what became of it"
        )
        for name, tried in s["attempts"].items():
            parts.append(f"<tr><td><code>{e(name)}</code><td>" + "<br>".join(e(t) for t in tried))
        parts.append("</table>")
    parts.append(
        "<h2>Every submission</h2><table><tr><th>submission<th>result<th>" + "<th>".join(OUTPUT_NAMES) + "<th>details"
    )
    for submission, report in zip(submissions, reports):
        outputs = report.get("outputs", {})
        cells = "".join(
            f"<td class={e(outputs[n]['status'])}>{e(outputs[n]['status'])}" if n in outputs else "<td>"
            for n in OUTPUT_NAMES
        )
        detail = (
            e(error_kind(report["error"]) + ": " + report["error"])
            if report.get("error")
            else ", ".join(e(m["id"]) for o in outputs.values() for m in o.get("likely_mistakes", []))
        )
        if report.get("attempts"):
            detail += (detail and "<br>") + "<br>".join(e(t) for t in report["attempts"])
        parts.append(
            f"<tr><td><code>{e(submission.name)}</code><td class={e(report['status'])}>{e(report['status'])}"
            f"{cells}<td>{detail}"
        )
    parts.append("</table>")
    if reports and str(reports[0].get("isolation", "")).startswith("not isolated"):
        parts.append(f"<p class=error>{e(reports[0]['isolation'])}</p>")
    return "\n".join(parts) + "\n"
