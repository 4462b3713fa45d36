"""The page's speed in headless Chromium, measured in one run against the real server.

    .venv/bin/python bench/page.py

Prints:
- frame time while playing the x (2,3,16,16), w (4,3,3,3) trace at top speed: the
  page's redraw (cursor seek + DOM updates) plus the style and layout it forces, per
  animation frame, p50/p95/max (target p95 <= 8 ms), and the rAF intervals seen;
- time to jump to a random step (seek + redraw + style/layout), p50/p95/max over 300
  random steps (target <= 16 ms); the follow-scroll runs at the next frame, so it is
  timed apart: jumps one frame apart, the follow's own time and the whole next frame;
- with --against REV (e.g. --against 860303d): at 1920x1080 and at 1366x768, the same
  jumps on REV's page (its static/ from git, served by this server) and on this one,
  alternating in rounds of 50 (each round timed after the other page's last one has
  settled: its next frames drawn, its flashes over), side by side, then three whole plays at top speed on each,
  alternating (each page reloaded, Play pressed a second after the trace arrived, as in
  the first measure);
- with --against REV: the renderer's CPU time per step, on every thread (style, layout,
  paint and raster), for two lessons at 1366x768, REV's page and this one alternating:
  each step jumped to and drawn with its next frames, as a student stepping through sees it;
- time from pressing Apply to the first drawn step for the CS231n preset (median of 7);
- the CPU and the files fetched when CS231n is loaded again in the same browser, with
  the page's files linked relatively and under their version (server/http/page_cache.py);
- with --breakdown: two more plays at top speed with the page's per-frame breakdown on
  (style and layout forced after each part of a frame: seek, fold change, cell-size fit,
  cells, highlight, step panel, transport), per kind of frame and the slowest frames,
  with the cells each wrote per tensor and the slices painted on coming into view.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from playwright.sync_api import sync_playwright  # noqa: E402
from test_browser_helpers import CHROMIUM, CHROMIUM_ARGS, debug_url, live_server, wait_complete, wait_until  # noqa: E402

BIG = {
    "x": {"fill": "randint", "shape": [2, 3, 16, 16], "low": -2, "high": 2, "seed": 0},
    "w": {"fill": "randint", "shape": [4, 3, 3, 3], "low": -1, "high": 1, "seed": 1},
    "b": {"fill": "randint", "shape": [4], "low": -1, "high": 1, "seed": 2},
    "padding": 1,
}


def lesson_hash(config: dict, step: int = 0) -> str:
    c = base64.urlsafe_b64encode(json.dumps(config).encode()).decode().rstrip("=")
    return f"#s={step}&c={c}"


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def summary(name: str, values: list[float], unit: str = "ms") -> str:
    return f"{name}: n={len(values)} p50={pct(values, 0.5):.2f} {unit} p95={pct(values, 0.95):.2f} {unit} max={max(values):.2f} {unit}"


JUMPS_JS = """([total, n, seed]) => { const out = [];
     for (let k = 0; k < n; k++) { seed = (seed * 1103515245 + 12345) % 2147483648;
       const t = seed % total; const t0 = performance.now(); window.convscope.seek(t);
       void document.body.offsetHeight; out.push(performance.now() - t0); }
     return out; }"""

# one jump per frame: the jump itself, then the next frame (follow-scroll, slices that
# came into view drawn) up to the frame after, measured with a forced layout at its end
SPACED_JUMPS_JS = """([total, n, seed]) => new Promise((done) => {
     const jump = [], next = []; let k = 0;
     const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
     (async () => {
       for (; k < n; k++) {
         seed = (seed * 1103515245 + 12345) % 2147483648;
         const t = seed % total; const t0 = performance.now(); window.convscope.seek(t);
         void document.body.offsetHeight; jump.push(performance.now() - t0);
         await frame(); const t1 = performance.now(); await new Promise((r) => setTimeout(r, 0));
         void document.body.offsetHeight; next.push(performance.now() - t1);
         await frame();
       }
       done({jump, next});
     })();
   })"""


SETTLE_S = 1.0  # from the trace's arrival to pressing Play


def play_through(page, breakdown: bool = False) -> tuple[list[float], list[float]]:
    """Play the whole trace from step 0 at top speed: (frame times, rAF intervals), ms.
    breakdown: with the page's per-frame breakdown on (read it with breakdownRows())."""
    page.evaluate("window.convscope.measureLayout(true)")
    page.evaluate("window.convscope.seek(0)")
    page.evaluate("window.convscope.setSpeedIndex(99)")
    page.evaluate("window.convscope.resetFrameTimes()")
    if breakdown:
        page.evaluate("window.convscope.breakdown(true)")
    page.evaluate(
        """() => { window.__raf = []; let last = 0;
             const tick = (t) => { if (last) window.__raf.push(t - last); last = t;
                                   if (window.__raf.length < 100000 && window.convscope.playing) requestAnimationFrame(tick); };
             window.convscope.play(); requestAnimationFrame(tick); }"""
    )
    started = time.monotonic()
    while page.evaluate("window.convscope.playing") and time.monotonic() - started < 8:
        time.sleep(0.1)
    page.evaluate("window.convscope.pause()")
    frames = page.evaluate("window.convscope.frameTimes()")
    raf = page.evaluate("window.__raf")
    page.evaluate("window.convscope.measureLayout(false)")
    return frames, raf


PARTS = ["seek", "fold", "fit", "cells", "highlight", "panel", "transport"]


def print_breakdown(page, plays: int = 2) -> None:
    """Play the trace `plays` times with the page's per-frame breakdown on; print it."""
    rows = []
    for _ in range(plays):
        page.reload()
        wait_complete(page, timeout=60)
        time.sleep(SETTLE_S)
        play_through(page, breakdown=True)
        rows += page.evaluate("window.convscope.breakdownRows()")
        page.evaluate("window.convscope.breakdown(false)")
    print(
        f"per-frame breakdown while playing ({plays} plays, {len(rows)} frames; style and layout forced after each part,"
    )
    print("so frames take longer than in the measure above), median ms per part:")
    kinds: dict[str, list[dict]] = {}
    for r in rows:
        kinds.setdefault("fold change" if "fold" in r else f"focus {r['focus']}", []).append(r)
    print(f"  {'frames':34s} {'n':>4s} " + " ".join(f"{p:>9s}" for p in PARTS) + "  total p50/p95  written p50")
    for kind, rs in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
        med = [statistics.median(r.get(p, 0) for r in rs) for p in PARTS]
        totals = [r["total"] for r in rs]
        written = statistics.median(sum(r["writes"].values()) for r in rs)
        print(
            f"  {kind[:34]:34s} {len(rs):4d} "
            + " ".join(f"{m:9.2f}" for m in med)
            + f"  {pct(totals, 0.5):5.1f} /{pct(totals, 0.95):5.1f}  {written:6.0f}"
        )
    print("  slowest frames (steps, the parts over 0.5 ms, cells written, slices revealed before it):")
    for r in sorted(rows, key=lambda r: -r["total"])[:15]:
        parts = " ".join(f"{p} {r[p]:.1f}" for p in PARTS if r.get(p, 0) >= 0.5)
        written = " ".join(f"{n} {k}" for n, k in r["writes"].items())
        print(
            f"    {r['total']:5.1f} ms  {r['cause']:7s} {r['from'] + 1:5d}->{r['to'] + 1:5d}  {parts};"
            f" wrote {written or 'nothing'}; revealed {r['revealed']}; focus {r['focus']}"
        )


def old_static(rev: str) -> Path:
    """REV's static/ folder, extracted from git into a temporary folder."""
    data = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "static"], check=True, capture_output=True).stdout
    folder = Path(tempfile.mkdtemp(prefix="convscope-static-"))
    tarfile.open(fileobj=io.BytesIO(data)).extractall(folder, filter="data")
    return folder / "static"


SCREENS = [(1920, 1080), (1366, 768)]
FRAMES_JS = "new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))"
AFTER_ROUND_S = 0.6  # longer than a flash (380 ms) and the address's write (150 ms)


def compare(browser, rev: str, base_new: str, viewport: tuple[int, int]) -> None:
    """Random jumps on REV's page and on this one, alternating rounds of 50, then three
    whole plays on each, alternating; both in a window of `viewport` (width, height)."""
    with live_server(old_static(rev)) as base_old:
        pages = {}
        for name, base in ((rev, base_old), ("this page", base_new)):
            page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
            page.goto(debug_url(base + "/" + lesson_hash(BIG)))
            wait_complete(page, timeout=60)
            pages[name] = page
        total = pages[rev].evaluate("window.convscope.total")
        times = {name: [] for name in pages}
        for r in range(6):
            for name, page in pages.items():
                times[name] += page.evaluate(JUMPS_JS, [total, 50, 100 + r])
                # (the page's own next frames, the follow, its flashes and its address,
                # end before the other page's round is timed: on two cores they would
                # be timed with it)
                page.evaluate(FRAMES_JS)
                time.sleep(AFTER_ROUND_S)
        for name in pages:
            print(summary(f"  jump, {name}", times[name]))
        print(
            f"  p95 ratio this page / {rev}: {pct(times['this page'], 0.95) / pct(times[rev], 0.95):.2f}; "
            f"p50 ratio {pct(times['this page'], 0.5) / pct(times[rev], 0.5):.2f}"
        )
        # playing at top speed, alternating whole plays (each page freshly loaded and settled)
        played = {name: [] for name in pages}
        for _ in range(3):
            for name, page in pages.items():
                page.reload()
                wait_complete(page, timeout=60)
                time.sleep(SETTLE_S)
                played[name] += play_through(page)[0]
        for name in pages:
            print(summary(f"  frame time while playing, {name} (3 plays)", played[name]))
        print(
            f"  p95 ratio this page / {rev}: {pct(played['this page'], 0.95) / pct(played[rev], 0.95):.2f}; "
            f"p50 ratio {pct(played['this page'], 0.5) / pct(played[rev], 0.5):.2f}"
        )
        for page in pages.values():
            page.close()


# each step of the first 24 jumped to and drawn: its frame, the follow-scroll's and two more
STEPS_DRAWN_JS = """async (steps) => {
  for (let s = 0; s < steps; s++) {
    window.convscope.seek(s);
    for (let k = 0; k < 4; k++) await new Promise((r) => requestAnimationFrame(r));
  }
}"""
RENDER_STEPS = 24


def renderer_cpu_s() -> float:
    """CPU seconds used so far by this process's Chromium renderers, all their threads."""
    total = 0.0
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):  # (a renderer that ended: a closed page's)
            if "--type=renderer" in child.cmdline():
                times = child.cpu_times()
                total += times.user + times.system
    return total


def compare_rendering(browser, rev: str, base_new: str, lessons=("cs231n", "depthwise")) -> None:
    """Renderer CPU per drawn step, REV's page and this one: one page each (its own
    context, so its own renderer), alternating rounds; the other page idles meanwhile
    (no frames asked for: it costs nothing)."""
    viewport = {"width": 1366, "height": 768}
    with live_server(old_static(rev)) as base_old:
        for lesson in lessons:
            pages = {}
            for name, base in ((rev, base_old), ("this page", base_new)):
                context = browser.new_context(viewport=viewport, reduced_motion="reduce")
                page = context.new_page()
                page.goto(debug_url(f"{base}/#s=0&l={lesson}"))
                wait_complete(page, timeout=60)
                page.evaluate(STEPS_DRAWN_JS, RENDER_STEPS)  # (warm: each step drawn once)
                pages[name] = page
            per_step = {name: [] for name in pages}
            for _ in range(5):
                for name, page in pages.items():
                    before = renderer_cpu_s()
                    page.evaluate(STEPS_DRAWN_JS, RENDER_STEPS)
                    per_step[name].append((renderer_cpu_s() - before) / RENDER_STEPS * 1000)
            for name in pages:
                print(summary(f"  {lesson}, renderer CPU per drawn step, {name}", per_step[name]))
            ratio = statistics.median(per_step["this page"]) / statistics.median(per_step[rev])
            print(f"  median ratio this page / {rev}: {ratio:.2f}")
            for page in pages.values():
                page.context.close()


def machine_cpu_s() -> float:
    """CPU seconds the machine's cores have been busy since boot (/proc/stat: user, nice,
    system, irq, softirq): every process's, those that ended too (a sum over live
    processes loses a closed page's renderer). For a machine running nothing else."""
    with open("/proc/stat", encoding="ascii") as stat:
        user, nice, system, _idle, _iowait, irq, softirq = (int(v) for v in stat.readline().split()[1:8])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def compare_reloads(browser, rounds: int = 8) -> None:
    """A page loaded again in the same browser, as a class reloads it: the page's files
    linked relatively (``/index.html``, as before 2026-12-06, each file revalidated or
    kept by Chromium's guess from its modification time) and under their version (``/``:
    kept). The files are a copy of static/ modified now, as in a new clone or install.
    Alternating, the first round left out; one context each, kept. The machine's CPU
    per load, and this process's (the server's thread and the client)."""
    folder = Path(tempfile.mkdtemp()) / "static"
    shutil.copytree(ROOT / "static", folder)
    for path in folder.rglob("*"):
        path.touch()
    here = psutil.Process()
    ways = {"relative links (/index.html)": "/index.html", "under their version (/)": "/"}
    with live_server(folder) as base:
        contexts = {way: browser.new_context(viewport={"width": 1366, "height": 768}) for way in ways}
        seen: dict[str, list[tuple[float, float, float, int]]] = {way: [] for way in ways}
        for round_ in range(rounds):
            for way, path in ways.items():
                page = contexts[way].new_page()
                machine_cpu, own_cpu, wall = machine_cpu_s(), sum(here.cpu_times()[:2]), time.perf_counter()
                page.goto(debug_url(f"{base}{path}#s=0&l=cs231n"))
                wait_complete(page)
                machine_cpu, own_cpu = machine_cpu_s() - machine_cpu, sum(here.cpu_times()[:2]) - own_cpu
                wall = time.perf_counter() - wall
                fetched = page.evaluate(
                    "performance.getEntriesByType('resource').filter((r) => r.transferSize > 0).length"
                )
                page.close()
                if round_:
                    seen[way].append((machine_cpu, own_cpu, wall, fetched))
        for context in contexts.values():
            context.close()
    medians = {way: [statistics.median(v[k] for v in runs) for k in range(4)] for way, runs in seen.items()}
    for way, (machine_cpu, own_cpu, wall, fetched) in medians.items():
        print(
            f"  {way:30s} the machine {machine_cpu:.2f} CPU-s (server + client {own_cpu:.2f}), "
            f"wall {wall:.2f} s, {fetched:.0f} files over the network (medians of {rounds - 1})"
        )
    old, new = (m[0] for m in medians.values())
    print(f"  the machine's CPU per reload, versioned / relative: {new / old:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--against", metavar="REV", help="also time random jumps on REV's page (git revision), side by side"
    )
    parser.add_argument(
        "--breakdown", action="store_true", help="also play twice with the per-frame breakdown on and print it"
    )
    args = parser.parse_args()
    with live_server() as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.goto(debug_url(base + "/" + lesson_hash(BIG)))
        wait_complete(page, timeout=60)
        total = page.evaluate("window.convscope.total")
        cells = page.evaluate("document.querySelectorAll('.cell').length")
        print(f"trace x (2,3,16,16), w (4,3,3,3), padding 1: {total} events, {cells} cells drawn")

        # 1. playing at top speed (a second after the trace arrived: no one presses Play sooner)
        time.sleep(SETTLE_S)
        started = time.monotonic()
        frames, raf = play_through(page)
        print(
            f"played {page.evaluate('window.convscope.step') + 1} steps at {page.evaluate('window.convscope.speed')} steps/s in {time.monotonic() - started:.1f} s"
        )
        print(summary("frame time while playing (redraw + style/layout)", frames))
        print(summary("rAF interval while playing", raf))

        # 2. random jumps
        jumps = page.evaluate(JUMPS_JS, [total, 300, 7])
        print(summary("jump to a random step (seek + redraw + style/layout)", jumps))
        page.evaluate("window.convscope.resetFollowTimes()")
        spaced = page.evaluate(SPACED_JUMPS_JS, [total, 120, 11])
        follows = page.evaluate("window.convscope.followTimes()")
        print(summary("jump, one per frame (seek + redraw + style/layout)", spaced["jump"]))
        print(summary("follow-scroll at the frame after a jump (its own time)", follows))
        print(summary("frame after a jump (follow + revealed slices drawn + style/layout)", spaced["next"]))
        if args.against:
            for screen in SCREENS:
                print(
                    f"at {screen[0]}x{screen[1]}: random jumps and plays side by side with {args.against} (alternating):"
                )
                compare(browser, args.against, base, screen)
            print(f"at 1366x768: renderer CPU per drawn step side by side with {args.against} (alternating):")
            compare_rendering(browser, args.against, base)

        # 3. Apply -> first drawn step, CS231n preset
        page.select_option("#preset", "cs231n")
        wait_until(page, "window.convscope.preset === 'cs231n' && window.convscope.complete")
        applies = []
        for _ in range(7):
            page.click("#apply")
            wait_until(page, "window.convscope.complete && window.convscope.timings().firstStepDrawnAt > 0")
            t = page.evaluate("window.convscope.timings()")
            applies.append(t["firstStepDrawnAt"] - t["runStartedAt"])
        print(
            f"Apply -> first drawn step, CS231n preset ({page.evaluate('window.convscope.total')} events): "
            f"median {statistics.median(applies):.1f} ms, min {min(applies):.1f} ms, max {max(applies):.1f} ms (n=7)"
        )
        if args.breakdown:
            page.goto(debug_url(base + "/" + lesson_hash(BIG)))
            wait_complete(page, timeout=60)
            print_breakdown(page)
        print("CS231n loaded again in the same browser (1366x768), its files modified now:")
        compare_reloads(browser)
        browser.close()


if __name__ == "__main__":
    main()
