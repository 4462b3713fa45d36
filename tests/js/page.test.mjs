// The page's one state owner (store + reducer), its frame function and its stage layout,
// without a browser.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createStore } from "../../static/js/model/store.js";
import { initialState, reduce, currentStep, placeOf, staleReason, isSettled } from "../../static/js/model/page-state.js";
import { frameOf, focusOf, layoutAt, reachAt } from "../../static/js/model/frame.js";
import { layoutStage, arrange, figureSize, minCellFor, fontFor, tagPx } from "../../static/js/model/stage-layout.js";
import { TraceModel, phaseIndexAt } from "../../static/js/model/trace-model.js";
import { loadFixture, headerOf, naiveReplay } from "./fixtures.mjs";

function modelOf(name, upto = Infinity) {
  const doc = loadFixture(name);
  const model = new TraceModel(headerOf(doc));
  model.addEvents(doc.events.slice(0, Math.min(doc.events.length, upto)));
  return { doc, model };
}

function withTrace(model, extra = {}) {
  let s = reduce(initialState(), { type: "edited", config: { x: 1 } });
  s = reduce(s, { type: "runStarted" });
  s = reduce(s, { type: "header", model, config: { x: 1 }, lesson: "", step: 0 });
  s = reduce(s, { type: "events", model });
  return { ...s, ...extra };
}

// ---- the store -------------------------------------------------------------------------

test("store: listeners hear each change once with the previous state; no change, no call", () => {
  const store = createStore((s, a) => (a.type === "inc" ? { n: s.n + 1 } : s), { n: 0 });
  const heard = [];
  store.subscribe((state, prev, action) => heard.push([prev.n, state.n, action.type]));
  store.dispatch({ type: "inc" });
  store.dispatch({ type: "noop" });
  store.dispatch({ type: "inc" });
  assert.deepEqual(heard, [[0, 1, "inc"], [1, 2, "inc"]]);
  assert.equal(store.state.n, 2);
});

test("store: an action dispatched by a listener runs after the current one, in order", () => {
  const store = createStore((s, a) => ({ log: [...s.log, a.type] }), { log: [] });
  const seen = [];
  store.subscribe((state, prev, action) => {
    seen.push(state.log.join(","));
    if (action.type === "a") store.dispatch({ type: "b" });
  });
  store.dispatch({ type: "a" });
  assert.deepEqual(seen, ["a", "a,b"]);
});

// ---- the reducer -----------------------------------------------------------------------

test("reduce: moves clamp to what has arrived; phases jump to their starts", () => {
  const { doc, model } = modelOf("trace_worked_example.json", 5);
  let s = withTrace(model);
  assert.equal(model.received, 5);
  s = reduce(s, { type: "move", how: "last" });
  assert.equal(currentStep(s), 4, "the last step that has arrived, not the trace's last");
  s = reduce(s, { type: "move", how: "next" });
  assert.equal(s.step, 4);
  s = reduce(s, { type: "move", how: "first" });
  assert.equal(s.step, 0);
  s = reduce(s, { type: "move", how: "prev" });
  assert.equal(s.step, 0);
  model.addEvents(doc.events.slice(5));
  s = reduce(s, { type: "events", model });
  s = reduce(s, { type: "move", how: "nextPhase" });
  const second = model.phases.find((p) => p.start > 0 && p.stop > p.start);
  assert.equal(s.step, second.start);
  s = reduce(s, { type: "move", how: "next" });
  s = reduce(s, { type: "move", how: "prevPhase" });
  assert.equal(s.step, second.start, "back to the start of the phase the step is in");
});

test("reduce: the ticker advances while playing, stops at the end of a whole trace, waits at the end of a streaming one", () => {
  const { doc, model } = modelOf("trace_worked_example.json", 4);
  let s = reduce(withTrace(model), { type: "play" });
  assert.equal(s.playing, true);
  s = reduce(s, { type: "tick", steps: 2 });
  assert.equal(s.step, 2);
  s = reduce(s, { type: "tick", steps: 10 });
  assert.equal(s.step, 3);
  assert.equal(s.playing, true, "still streaming: it waits for more steps");
  model.addEvents(doc.events.slice(4));
  s = reduce(s, { type: "events", model });
  s = reduce(s, { type: "tick", steps: 10 * model.total });
  assert.equal(s.step, model.total - 1);
  assert.equal(s.playing, false);
  s = reduce(s, { type: "toggle" });
  assert.equal(s.playing, true);
  assert.equal(s.step, 0, "play at the end plays again from the start");
  s = reduce(s, { type: "move", how: "next" });
  assert.equal(s.playing, false, "a step by hand pauses");
  s = reduce(reduce(s, { type: "play" }), { type: "goto", step: 3, keepPlaying: true });
  assert.equal(s.playing, true);
});

test("reduce: speed stays within the menu; unknown actions are a bug", () => {
  let s = initialState();
  for (let k = 0; k < 50; k++) s = reduce(s, { type: "faster" });
  const top = s.speedIndex;
  s = reduce(s, { type: "faster" });
  assert.equal(s.speedIndex, top);
  for (let k = 0; k < 50; k++) s = reduce(s, { type: "slower" });
  assert.equal(s.speedIndex, 0);
  assert.throws(() => reduce(s, { type: "nonsense" }), /unknown action nonsense/);
});

test("reduce: an edit makes the stage stale until traced; a failure keeps the last good trace with its step", () => {
  const { model } = modelOf("trace_worked_example.json");
  let s = reduce(withTrace(model), { type: "runDone" });
  s = reduce(s, { type: "checked", badge: { state: "ok", text: "ok", title: "" } });
  s = reduce(s, { type: "goto", step: 7 });
  assert.equal(staleReason(s), "");
  assert.equal(isSettled(s), true);
  const good = s;
  s = reduce(s, { type: "edited", config: { x: 2 } });
  assert.equal(staleReason(s), "the new setup is not traced yet");
  assert.equal(isSettled(s), false);
  s = reduce(s, { type: "runStarted" });
  const half = new TraceModel(model.header);
  s = reduce(s, { type: "header", model: half, config: { x: 2 }, lesson: "", step: 0 });
  s = reduce(s, { type: "runFailed", message: "stream cut", restore: { trace: good.trace, step: 7, badge: good.badge } });
  assert.equal(s.trace, good.trace);
  assert.equal(s.step, 7);
  assert.deepEqual(s.config, { x: 2 }, "what the user typed stays in the form");
  assert.equal(staleReason(s), "the setup has an error");
  s = reduce(s, { type: "runStarted" });
  assert.equal(s.runError, "");
});

test("reduce: the form's contents, the toast and the words said once are state", () => {
  const { model } = modelOf("trace_worked_example.json");
  let s = reduce(initialState(), { type: "formShow", config: { a: 1 }, fresh: true });
  assert.deepEqual(s.form, { config: { a: 1 }, fresh: true, shown: 1, header: null, errors: null });
  // the header puts the traced setup in the form, with its header and no errors
  s = reduce(s, { type: "header", model, config: { a: 2 }, lesson: "", step: 0 });
  assert.deepEqual([s.form.config, s.form.fresh, s.form.shown, s.form.header, s.form.errors], [{ a: 2 }, false, 2, model.header, {}]);
  const good = reduce(reduce(s, { type: "events", model }), { type: "runDone" });
  // a stream cut on a lesson: its setup and header back in the form, the errors beside it,
  // the words said now and again with the step, a toast
  s = reduce(good, { type: "runStarted" });
  const half = new TraceModel(model.header);
  s = reduce(s, { type: "header", model: half, config: { a: 3 }, lesson: "", step: 0 });
  const restore = { trace: good.trace, step: 0, badge: good.badge, config: { a: 2 }, lesson: "" };
  s = reduce(s, { type: "runFailed", message: "cut", errors: { _: "cut" }, restore, said: "stopped", sayAgain: true, notice: true });
  assert.deepEqual([s.form.config, s.form.fresh, s.form.header, s.form.errors], [{ a: 2 }, true, model.header, { _: "cut" }]);
  assert.equal(s.narration.text, "stopped");
  assert.equal(s.pendingNarration, "stopped");
  assert.deepEqual(s.notice, { text: "stopped", id: 1 });
  s = reduce(s, { type: "narrated" });
  assert.equal(s.pendingNarration, "");
  // a toast replaced before its time: only its own timer hides it
  s = reduce(s, { type: "notice", text: "copied" });
  assert.deepEqual(s.notice, { text: "copied", id: 2 });
  assert.equal(reduce(s, { type: "noticeDone", id: 1 }), s);
  assert.equal(reduce(s, { type: "noticeDone", id: 2 }).notice, null);
  // a typed setup that fails before its header keeps the form's setup; only the errors change
  const typed = reduce(good, { type: "runFailed", message: "bad", errors: { H: "too small" }, restore: null, said: "Not run: bad" });
  assert.equal(typed.form.shown, good.form.shown);
  assert.deepEqual(typed.form.errors, { H: "too small" });
  assert.equal(typed.notice, null);
  assert.equal(reduce(initialState(), { type: "startFailed", message: "no meta" }).startError, "no meta");
});

test("placeOf: a lesson by name, a custom setup by its config, the step asked for until the trace is whole", () => {
  const { model } = modelOf("trace_worked_example.json", 3);
  let s = reduce(initialState(), { type: "lessonOpened", name: "d2l", config: { a: 1 } });
  s = { ...s, step: 9 };
  assert.deepEqual(placeOf(s), { config: { a: 1 }, lesson: "d2l", step: 9, speed: s.speedIndex, projector: false, allTensors: false, codeOpen: false });
  s = reduce(s, { type: "edited", config: { a: 2 } });
  assert.equal(placeOf(s).lesson, "");
  assert.deepEqual(placeOf(s).config, { a: 2 });
  s = reduce(s, { type: "header", model, config: { a: 2 }, lesson: "", step: 0 });
  assert.deepEqual(placeOf(s).config, { a: 2 });
  // a lesson's trace on screen: the lesson, by name
  s = reduce(s, { type: "lessonOpened", name: "d2l", config: { a: 1 } });
  s = reduce(s, { type: "header", model, config: { a: 1 }, lesson: "d2l", step: 0 });
  assert.equal(placeOf(s).lesson, "d2l");
});

test("placeOf: an edit not yet traced, or refused, is not the place while a trace is on screen", () => {
  const { model } = modelOf("trace_worked_example.json");
  let s = withTrace(model); // the trace of {x: 1}
  s = reduce(s, { type: "edited", config: { x: 1, stride: 0 } });
  assert.deepEqual(placeOf(s).config, { x: 1 }, "an edit waiting for its trace");
  s = reduce(s, { type: "runStarted" });
  s = reduce(s, { type: "runFailed", message: "stride must be at least 1", errors: { stride: "stride must be at least 1" }, restore: null });
  assert.deepEqual(s.config, { x: 1, stride: 0 }, "the form keeps what was typed");
  assert.deepEqual(placeOf(s).config, { x: 1 }, "the address keeps the setup on screen");
  s = reduce(s, { type: "goto", step: 2 });
  assert.deepEqual(placeOf(s), { ...placeOf(s), config: { x: 1 }, lesson: "", step: 2 });
  // a lesson's trace, then an edit the server refuses: the lesson stays the place
  s = reduce(s, { type: "lessonOpened", name: "d2l", config: { a: 1 } });
  s = reduce(s, { type: "header", model, config: { a: 1 }, lesson: "d2l", step: 0 });
  s = reduce(s, { type: "edited", config: { a: 1, KH: 5 } });
  s = reduce(s, { type: "runFailed", message: "no", errors: { w: "no" }, restore: null });
  assert.equal(placeOf(s).lesson, "d2l");
  assert.deepEqual(placeOf(s).config, { a: 1 });
});

// ---- the frame -------------------------------------------------------------------------

const VIEW = { projector: false, allTensors: false, fits: false, playing: false };
const VIEWPORT = { width: 1366, room: { width: 1000, height: 500 } };

test("frameOf: the values at any step, in any order of steps, are the replay of events 0..step", () => {
  for (const name of ["trace_worked_example.json", "trace_im2col.json", "trace_transposed.json", "trace_nhwc_same.json"]) {
    const { doc, model } = modelOf(name);
    const trace = { model, received: model.received };
    const steps = [model.total - 1, 0, Math.floor(model.total / 2), 1, model.total - 2, 3];
    for (const step of steps) {
      const f = frameOf(trace, step, VIEW, VIEWPORT);
      const want = naiveReplay(doc, step);
      assert.equal(f.step, step);
      for (const [t, vals] of Object.entries(want.values)) {
        assert.deepEqual(Array.from(f.values[t]), vals, `${name} ${t} at step ${step}`);
        assert.deepEqual(Array.from(f.counts[t]), want.counts[t]);
      }
      assert.equal(f.event.text, doc.events[step].text);
      assert.equal(f.panel.text, doc.events[step].text);
      assert.equal(f.panel.phase, doc.events[step].phase);
      assert.equal(f.transport.counter, `step ${step + 1} / ${model.total}`);
      const pi = phaseIndexAt(model.phases, step);
      assert.equal(f.phase, pi);
      const used = new Set(doc.events.slice(model.phases[pi].start, model.phases[pi].stop).flatMap((e) => [...e.reads, ...e.writes].map((b) => b.tensor)));
      assert.deepEqual([...f.focus].sort(), [...used].sort(), "the figures in focus are the phase's");
    }
  }
});

test("frameOf: a step past what has arrived shows the last arrived; All tensors outside projector mode focuses none", () => {
  const { model } = modelOf("trace_worked_example.json", 4);
  const f = frameOf({ model, received: 4 }, 50, VIEW, VIEWPORT);
  assert.equal(f.step, 3);
  assert.equal(focusOf(model, 0, { projector: false, allTensors: true }), null);
  assert.notEqual(focusOf(model, 0, { projector: true, allTensors: true }), null);
  assert.equal(f.layout, null, "no layout where the style sheet sizes the stage");
});

const METRICS = { figPadX: 12, figPadY: 10, captionH: 22, labelH: 16, gap: 3, sliceGapX: 10, sliceGapY: 4, colGap: 16, rowGap: 8, minFigW: 40 };

test("frameOf: with a fitted stage, its layout places exactly the phase's figures, what is written under what is read", () => {
  const { doc, model } = modelOf("trace_worked_example.json");
  const backward = model.phases.findIndex((p) => p.name === "backward");
  const step = model.phases[backward].start;
  const f = frameOf({ model, received: model.received }, step, { ...VIEW, fits: true }, VIEWPORT, METRICS);
  const placed = f.layout.columns.flatMap((c) => c.names);
  assert.deepEqual([...placed].sort(), [...f.focus].sort());
  assert.equal(new Set(placed).size, placed.length);
  const wrote = new Set(doc.events.slice(model.phases[backward].start, model.phases[backward].stop).flatMap((e) => e.writes.map((w) => w.tensor)));
  for (const c of f.layout.columns) {
    // within a column a written figure never stands above a read one
    const roles = c.names.map((n) => (wrote.has(n) ? 1 : 0));
    assert.deepEqual(roles, [...roles].sort());
  }
  assert.ok(f.layout.font >= 14 && f.layout.cell >= minCellFor(1, 14));
});

test("layoutAt: the same phase, view, room and metrics objects give the same layout object; a new room of the same size the same layout", () => {
  const { model } = modelOf("trace_worked_example.json");
  const view = { ...VIEW, fits: true };
  const pi = model.phases.findIndex((p) => p.name === "backward");
  const room = { width: 1000, height: 500 };
  const first = layoutAt(model, pi, view, { width: 1366, room }, METRICS);
  assert.equal(layoutAt(model, pi, view, { width: 1366, room }, METRICS), first, "found again, not laid out again");
  const again = layoutAt(model, pi, view, { width: 1366, room: { ...room } }, { ...METRICS });
  assert.deepEqual(again, first);
  const other = layoutAt(model, pi, view, { width: 1366, room: { width: 400, height: 300 } }, METRICS);
  assert.notDeepEqual(other.room, first.room, "another room: another layout");
  const forward = layoutAt(model, model.phases.findIndex((p) => p.name === "forward"), view, { width: 1366, room }, METRICS);
  assert.notDeepEqual(forward.columns, first.columns, "another phase: its own figures");
  assert.equal(layoutAt(model, pi, { ...view, projector: true }, { width: 1366, room }, METRICS).font >= 24, true, "projector mode is not the desktop's layout");
});

test("layoutAt: a trace that fits takes 16 px with room for the tags; one that cannot show a step at 16 px takes 14, then no tags", () => {
  const { model } = modelOf("trace_worked_example.json");
  const view = { ...VIEW, fits: true };
  const pi = model.phases.findIndex((p) => p.name === "backward");
  const roomy = layoutAt(model, pi, view, { width: 1366, room: { width: 1300, height: 600 } }, METRICS);
  assert.equal(roomy.tagged, true);
  assert.ok(roomy.font >= 16, `${roomy.font} px`);
  // rooms from roomy to cramped: the text never grows as the room shrinks, and below
  // 16 px (14) only when no phase could follow at 16, with tags before without
  let last = { font: Infinity, tagged: true };
  const seen = new Set();
  for (let w = 1300; w >= 120; w -= 20) {
    const L = layoutAt(model, pi, view, { width: 1366, room: { width: w, height: Math.round(w / 2) } }, METRICS);
    assert.ok(L.font <= last.font || L.font >= 16, `room ${w}: ${L.font} px after ${last.font} px`);
    assert.ok(L.font >= 14);
    if (!L.tagged) assert.ok(L.font < 16, `room ${w}: tags left out at ${L.font} px`);
    seen.add(`${L.font >= 16 ? 16 : 14}${L.tagged ? "+tags" : ""}`);
    last = L;
  }
  assert.ok(seen.has("16+tags") && seen.size > 1, [...seen].join(", "));
  // projector mode keeps its size, with tags or without
  const projected = layoutAt(model, pi, { ...view, projector: true }, { width: 1280, room: { width: 300, height: 200 } }, METRICS);
  assert.ok(projected.font >= 20);
});

// ---- the stage layout ------------------------------------------------------------------

/** The bounding size of a layout, computed here from the figures and the metrics. */
function boxOf(layout, figures, m) {
  const byName = Object.fromEntries(figures.map((f) => [f.name, f]));
  let width = 0;
  let height = 0;
  for (const c of layout.columns) {
    let w = 0;
    let h = 0;
    for (const n of c.names) {
      const f = byName[n];
      const k = Math.max(1, Math.min(c.perLine, f.slices));
      const lines = Math.ceil(f.slices / k);
      const cell = layout.cells[n];
      const gw = f.cols * cell + (f.cols - 1) * m.gap;
      const gh = f.rows * cell + (f.rows - 1) * m.gap;
      w = Math.max(w, Math.max(m.minFigW, k * gw + (k - 1) * m.sliceGapX) + m.figPadX);
      h += m.captionH + lines * (m.labelH + gh) + (lines - 1) * m.sliceGapY + m.figPadY;
    }
    width += w;
    height = Math.max(height, h + (c.names.length - 1) * m.rowGap);
  }
  return { width: width + (layout.columns.length - 1) * m.colGap, height };
}

function rng(seed) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

/** A seeded draw r() in [0, 1) and int(a, b) in a..b. */
function draws(seed) {
  const r = rng(seed);
  return { r, int: (a, b) => a + Math.floor(r() * (b - a + 1)) };
}

/** fewest..6 random figures of up to 6 slices of up to side×side cells (with their own
 *  widest number, 1–4 characters, if chars). */
function randomFigures(r, int, { fewest, side, chars = false }) {
  return Array.from({ length: int(fewest, 6) }, (_, i) => ({
    name: `t${i}`,
    slices: int(1, 6),
    rows: int(1, side),
    cols: int(1, side),
    ...(chars ? { chars: int(1, 4) } : {}),
    role: r() < 0.5 ? "read" : "write",
  }));
}

test("layoutStage: over random stages, every figure placed once, a layout said to fit does fit, and a larger room never gives smaller cells", () => {
  const { r, int } = draws(7);
  for (let trial = 0; trial < 300; trial++) {
    const figures = randomFigures(r, int, { fewest: 1, side: 9 });
    const room = { width: int(300, 2400), height: int(200, 1400) };
    const opts = { chars: int(1, 4), fontPx: 14, maxCell: 72, fontRatio: 0.4 };
    const L = layoutStage(figures, room, METRICS, opts);
    const placed = L.columns.flatMap((c) => c.names).sort();
    assert.deepEqual(placed, figures.map((f) => f.name).sort());
    const box = boxOf(L, figures, METRICS);
    assert.deepEqual([box.width, box.height], [L.width, L.height], "its size is the figures' size");
    if (L.fits) assert.ok(box.width <= room.width && box.height <= room.height, JSON.stringify({ room, box }));
    assert.ok(L.cell >= minCellFor(opts.chars, 14) && L.cell <= 72);
    assert.ok(L.font >= 14);
    const bigger = layoutStage(figures, { width: room.width * 2, height: room.height * 2 }, METRICS, opts);
    assert.ok(bigger.cell >= L.cell, JSON.stringify({ room, L, bigger }));
    // (a figure the phase writes has room for the tag of what a step added under its digits)
    const lowest = Math.min(...figures.map((f) => minCellFor(opts.chars, 14, f.role === "write")));
    if (!L.fits) assert.equal(L.cell, lowest, "no fit: the smallest legible cell");
  }
});

test("layoutStage: a stage with room to spare gets the largest cell; the gradient stands under its tensor", () => {
  const xp = { name: "xp", slices: 3, rows: 7, cols: 7, role: "read" };
  const w = { name: "w", slices: 6, rows: 3, cols: 3, role: "read" };
  const dz = { name: "dz", slices: 2, rows: 3, cols: 3, role: "read" };
  const dw = { name: "dw", slices: 6, rows: 3, cols: 3, role: "write" };
  const dxp = { name: "dxp", slices: 3, rows: 7, cols: 7, role: "write" };
  assert.deepEqual(arrange([xp, w, dz, dw, dxp], "pairs").map((c) => c.map((f) => f.name)), [["xp", "dxp"], ["w", "dw"], ["dz"]]);
  const huge = layoutStage([xp, w, dz, dw, dxp], { width: 20000, height: 20000 }, METRICS, { chars: 2, fontPx: 14, maxCell: 72 });
  assert.equal(huge.cell, 72);
  assert.ok(huge.fits);
  assert.equal(fontFor(72, 2, 14, 0.4), huge.font);
  const tiny = layoutStage([xp, w, dz, dw, dxp], { width: 300, height: 200 }, METRICS, { chars: 2, fontPx: 14 });
  assert.equal(tiny.fits, false);
  assert.equal(tiny.cell, minCellFor(2, 14));
  // the size of one figure, by hand: 3 slices of 7×7 at 30 px in one line
  assert.deepEqual(figureSize(xp, 30, 3, METRICS), { width: 3 * (7 * 30 + 6 * 3) + 2 * 10 + 12, height: 22 + 16 + 7 * 30 + 6 * 3 + 10 });
});

test("layoutStage: one cell size while there is room; when there is not, figures of short numbers get smaller cells, none too small for its numbers", () => {
  const { r, int } = draws(11);
  let mixed = 0;
  let followed = 0;
  for (let trial = 0; trial < 300; trial++) {
    const figures = randomFigures(r, int, { fewest: 2, side: 11, chars: true });
    // what one step reaches: a window of up to 3×3 on one slice
    for (const f of figures) f.reach = { rows: Math.min(f.rows, int(1, 3)), cols: Math.min(f.cols, int(1, 3)), slices: 1, span: 1 };
    const chars = Math.max(...figures.map((f) => f.chars));
    const room = { width: int(300, 2400), height: int(200, 1400) };
    const opts = { chars: 1, fontPx: 14, maxCell: 72, fontRatio: 0.4 };
    const L = layoutStage(figures, room, METRICS, opts);
    for (const f of figures) {
      assert.ok(L.cells[f.name] >= minCellFor(f.chars, 14, f.role === "write"), `${f.name}: ${L.cells[f.name]} px holds ${f.chars} characters at 14 px`);
      assert.ok(L.cells[f.name] <= 72);
    }
    const sizes = new Set(Object.values(L.cells));
    const uniform = Math.max(minCellFor(chars, 14), ...figures.map((f) => minCellFor(f.chars, 14, f.role === "write")));
    if (L.cell >= uniform) assert.equal(sizes.size, 1, "room for one size: every figure has it");
    else mixed += sizes.size > 1;
    assert.ok(L.font >= 14);
    const box = boxOf(L, figures, METRICS);
    assert.deepEqual([box.width, box.height], [L.width, L.height], "its size is the figures' size, each at its own cell");
    if (L.fits) assert.ok(box.width <= room.width && box.height <= room.height, JSON.stringify({ room, box }));
    const bigger = layoutStage(figures, { width: room.width * 2, height: room.height * 2 }, METRICS, opts);
    // (a stage that scrolls has one cell size, which can be larger than the smaller cells
    // of a larger stage that holds everything at once)
    if (L.fits) for (const f of figures) assert.ok(bigger.cells[f.name] >= L.cells[f.name], JSON.stringify({ room, L, bigger }));
    if (!L.fits && L.scrolls === "columns" && new Set(Object.values(L.cells)).size > 1) followed += 1;
  }
  assert.ok(followed > 0, "some stages follow the step only with smaller cells for short numbers");
  assert.ok(mixed > 20, `cramped stages with mixed cells: ${mixed}`);
});

test("layoutStage: the figures a phase writes have room under their digits for the tag of what a step added, unless told not to", () => {
  const figures = [
    { name: "x", slices: 1, rows: 4, cols: 4, chars: 1, role: "read" },
    { name: "dw", slices: 1, rows: 3, cols: 3, chars: 1, role: "write" },
  ];
  const tight = { width: 200, height: 120 };
  const tagged = layoutStage(figures, tight, METRICS, { chars: 1, fontPx: 16 });
  assert.equal(tagged.tagged, true);
  assert.ok(tagged.cells.dw >= Math.ceil(1.2 * 16 + tagPx(16)), `dw ${tagged.cells.dw} px`);
  assert.ok(tagged.cells.x < tagged.cells.dw, "a figure only read keeps the cell its digits need");
  const bare = layoutStage(figures, tight, METRICS, { chars: 1, fontPx: 16, tagged: false });
  assert.equal(bare.tagged, false);
  assert.equal(bare.cells.dw, minCellFor(1, 16));
});

test("layoutStage: width the stage has to spare goes to the captions it would cut, none where it has none", () => {
  const figures = [
    { name: "b", slices: 1, rows: 1, cols: 2, chars: 1, role: "read" },
    { name: "db", slices: 1, rows: 1, cols: 2, chars: 1, role: "write" },
  ];
  const captions = { b: 150, db: 260 };
  const roomy = layoutStage(figures, { width: 2000, height: 300 }, { ...METRICS, captions }, { chars: 1, fontPx: 16, maxCell: 40 });
  const widths = Object.fromEntries(roomy.columns.flatMap((c) => c.names.map((n) => [n, c.minWidth ?? 0])));
  for (const name of ["b", "db"]) assert.ok(widths[name] >= captions[name], `${name}: ${widths[name]} px for a ${captions[name]} px caption`);
  assert.ok(roomy.width <= roomy.room.width);
  const without = layoutStage(figures, { width: 2000, height: 300 }, METRICS, { chars: 1, fontPx: 16, maxCell: 40 });
  const cramped = layoutStage(figures, { width: without.width, height: 300 }, { ...METRICS, captions }, { chars: 1, fontPx: 16, maxCell: 40 });
  assert.ok(cramped.columns.every((c) => !c.minWidth), "no width to spare: no column widened");
});

// the style sheet's sizes measured in Chromium at 1366×768 (window.convscope.metrics())
const LAPTOP = { figPadX: 13.6, figPadY: 9.6, captionH: 19.9875, labelH: 15.34375, gap: 3, sliceGapX: 9.6, sliceGapY: 3.2, colGap: 19.2, rowGap: 9.6, minFigW: 41, scrollbar: 0 };

test("layoutStage: a backward step over 4 channels of 10×10 and 3 filters follows on a 1366×768 laptop: each column shows one step's reach, no column narrower", () => {
  // (tests/test_browser_fit.py's custom setup 4ch-8x8-108w-pad1: xp and dxp 1×4×10×10,
  // w and dw 3×4×3×3, dout 1×3×8×8; a step reads a 4-channel 3×3 window)
  const window4 = { rows: 3, cols: 3, slices: 4, span: 4 };
  const figures = [
    { name: "xp", slices: 4, band: 4, rows: 10, cols: 10, chars: 2, reach: window4, role: "read" },
    { name: "w", slices: 12, band: 4, rows: 3, cols: 3, chars: 2, reach: window4, role: "read" },
    { name: "dout", slices: 3, band: 3, rows: 8, cols: 8, chars: 1, reach: { rows: 1, cols: 1, slices: 1, span: 1 }, role: "read" },
    { name: "dw", slices: 12, band: 4, rows: 3, cols: 3, chars: 3, reach: window4, role: "write" },
    { name: "dxp", slices: 4, band: 4, rows: 10, cols: 10, chars: 2, reach: window4, role: "write" },
  ];
  const room = { width: 1323, height: 506 };
  const L = layoutStage(figures, room, LAPTOP, { chars: 1, fontPx: 14 });
  assert.equal(L.fits, false);
  assert.equal(L.scrolls, "columns");
  // (the written dxp's two-digit cells are as tall as their digits and the tag under them)
  assert.deepEqual(L.cells, { xp: 24, w: 24, dout: 15, dw: 33, dxp: 27 });
  // the columns at their least width fit the stage, and each shows a 4-channel window
  const least = L.columns.reduce((sum, c) => sum + (c.minWidth ?? figureSize(figures.find((f) => f.name === c.names[0]), L.cells[c.names[0]], c.perLine, LAPTOP).width), 0);
  assert.ok(least + (L.columns.length - 1) * LAPTOP.colGap <= room.width, `${least} px of columns`);
  const xp = L.columns.find((c) => c.names.includes("xp"));
  assert.deepEqual(xp.names, ["xp"]);
  assert.equal(xp.perLine, 2, "two lines of two channels: a window's 4 channels are 13 rows apart at most");
  const pitch = L.cells.xp + LAPTOP.gap;
  assert.ok(xp.minWidth >= 10 * pitch + LAPTOP.sliceGapX + 3 * pitch - LAPTOP.gap, "the window's two slices side by side");
  assert.equal(L.follows, true);
  // one cell size for all (what the page keeps when some phase cannot follow even so): it cannot
  const uniform = layoutStage(figures, room, LAPTOP, { chars: 1, fontPx: 14, perFigure: false });
  assert.deepEqual(new Set(Object.values(uniform.cells)), new Set([minCellFor(3, 14)]));
  assert.equal(uniform.follows, false);
});

import { sliceLayout } from "../../static/js/model/tensor-layout.js";
import { tensorMeta } from "../../static/js/model/trace-model.js";

test("sliceLayout and reachAt: an NHWC filter (kh, kw, c, f) is drawn filter by filter when the header says slice_axes [f, c], and a filter's channels are one reach", () => {
  const data = Array.from({ length: 3 * 2 }, (_, k) => k);
  const hwio = { shape: [1, 1, 3, 2], data, axes: ["kh", "kw", "c", "f"], grid: ["kh", "kw"], role: "input" };
  const byAxes = sliceLayout(tensorMeta("w", hwio));
  assert.deepEqual(byAxes.slices.map((s) => s.shortLabel), ["c=0,f=0", "c=0,f=1", "c=1,f=0", "c=1,f=1", "c=2,f=0", "c=2,f=1"]);
  const byFilter = sliceLayout(tensorMeta("w", { ...hwio, slice_axes: ["f", "c"] }));
  assert.deepEqual(byFilter.slices.map((s) => s.shortLabel), ["f=0,c=0", "f=0,c=1", "f=0,c=2", "f=1,c=0", "f=1,c=1", "f=1,c=2"]);
  // each slice's one cell is w[0, 0, c, f], flat c·2 + f
  assert.deepEqual(byFilter.slices.map((s) => s.cells[0]), [0, 2, 4, 1, 3, 5]);
  assert.deepEqual(byFilter.bands.map((b) => b.slices.length), [3, 3], "a band is one filter");
  assert.throws(() => sliceLayout(tensorMeta("w", { ...hwio, slice_axes: ["f", "kh"] })), /slice_axes/);
  // a step reading filter f: its 3 channels, 3 slices apart in axis order, adjacent by filter
  const reach = (w) => {
    const model = new TraceModel({
      type: "header",
      tensors: { w, z: { shape: [1, 1, 1, 2], data: [0, 0], axes: ["n", "h", "w", "f"], grid: ["h", "w"], role: "result" } },
      phases: [{ name: "forward", start: 0, stop: 2 }],
      total_events: 2,
    });
    model.addEvents([0, 1].map((f) => ({
      phase: "forward",
      loop: { f },
      reads: [{ tensor: "w", start: [0, 0, 0, f], stop: [1, 1, 3, f + 1], step: [1, 1, 1, 1] }],
      writes: [{ tensor: "z", start: [0, 0, 0, f], stop: [1, 1, 1, f + 1], step: [1, 1, 1, 1], delta: [1], value: [1] }],
      text: "",
    })));
    return reachAt(model, 0).w;
  };
  assert.deepEqual(reach(hwio), { rows: 1, cols: 1, slices: 3, span: 5, runs: [[0, 4], [1, 5]] });
  assert.deepEqual(reach({ ...hwio, slice_axes: ["f", "c"] }), { rows: 1, cols: 1, slices: 3, span: 3, runs: [[0, 2], [3, 5]] });
});

// ---- following the step ----------------------------------------------------------------

import { scrollTarget, cellSpan, shift, boxWorth, CAPTION_WORTH } from "../../static/js/model/scroll-target.js";

test("scrollTarget with boxWorth: of written boxes that cannot be in view together, the one of more cells; a read box never over a written one", () => {
  const view = { top: 0, height: 300, maxTop: 3000 };
  // a column holding db (its caption, 1 written cell) over dw, whose written filter
  // (27 cells) is at its bottom, too far below to show with db (the benchmark's trace)
  const db = { lo: 10, hi: 50, worth: boxWorth(true, 1) };
  const dbCaption = { lo: 0, hi: 50, worth: CAPTION_WORTH };
  const dw = { lo: 900, hi: 1150, worth: boxWorth(true, 27) };
  const dwCaption = { lo: 600, hi: 1150, worth: CAPTION_WORTH }; // (taller than the view)
  const t = scrollTarget([db, dbCaption, dw, dwCaption], view);
  assert.ok(t <= 900 && t + 300 >= 1150, `dw's 27 cells in view, not db's 1: ${t}`);
  // a 27-cell read window against a 1-cell write: the write
  const read = { lo: 900, hi: 1150, worth: boxWorth(false, 27) };
  const w = scrollTarget([db, read], { ...view, top: 800 });
  assert.ok(w <= 10 && w + 300 >= 50, `the written cell in view: ${w}`);
  // two written boxes that fit together count more than one bigger alone
  const a = { lo: 1500, hi: 1540, worth: boxWorth(true, 1) };
  const b = { lo: 1700, hi: 1740, worth: boxWorth(true, 2) };
  const big = { lo: 2500, hi: 2750, worth: boxWorth(true, 108) };
  const two = scrollTarget([a, b, big], view);
  assert.ok(two <= 1500 && two + 300 >= 1740, `both small boxes: ${two}`);
  assert.ok(boxWorth(true, 5000) < boxWorth(true, 1) + 1, "a box counts for less than two");
});

test("scrollTarget: stays when the written cells are in view; else shows the written cells first, with the read window if both fit", () => {
  const view = { top: 0, height: 300, maxTop: 2000 };
  const write = { lo: 100, hi: 150, worth: 2 };
  assert.equal(scrollTarget([write], view), null);
  const far = { lo: 900, hi: 960, worth: 2 };
  const read = { lo: 700, hi: 760, worth: 1 };
  const top = scrollTarget([far, read], view);
  assert.ok(top <= 700 - 8 + 0.5 && top + 300 >= 960 + 8 - 0.5, `both in view at ${top}`);
  const readFar = { lo: 100, hi: 160, worth: 1 };
  const t2 = scrollTarget([far, readFar], view);
  assert.ok(t2 <= 900 - 8 && t2 + 300 >= 968, "the written cells win when both cannot be in view");
  assert.equal(scrollTarget([], view), null);
  const end = scrollTarget([{ lo: 1990, hi: 2290, worth: 2 }], { top: 0, height: 400, maxTop: 1900 });
  assert.ok(end <= 1900 && end + 400 >= 2290, `never past the end, in view: ${end}`);
  assert.ok(scrollTarget([{ lo: 5000, hi: 5100, worth: 2 }], { top: 0, height: 400, maxTop: 1900 }) <= 1900);
  // cells as tall as the view less 2 px: no room for the 8 px margins, shown flush
  const tall = { lo: 600, hi: 898, worth: 2 };
  const flush = scrollTarget([tall], view);
  assert.ok(flush <= 600 && flush + 300 >= 898, `all 298 px in the 300 px view: ${flush}`);
  assert.equal(scrollTarget([tall], { ...view, top: 599 }), null, "already in view, flush: stays");
});

test("cellSpan: the rows and columns of cells from the grid geometry; shift scrolls the least", () => {
  const layout = { rows: 3, cols: 4 };
  const posOf = Int32Array.from({ length: 24 }, (_, k) => k); // two slices of 3×4
  const geo = { sliceTop: [0, 200], sliceLeft: [0, 150], gridDy: 20, gridDx: 0, pitch: 30, cell: 28 };
  assert.deepEqual(cellSpan(geo, layout, posOf, [5, 6], "y"), { lo: 50, hi: 78 });
  assert.deepEqual(cellSpan(geo, layout, posOf, [12 + 11], "y"), { lo: 280, hi: 308 });
  assert.deepEqual(cellSpan(geo, layout, posOf, [1, 3], "x"), { lo: 30, hi: 118 });
  assert.equal(cellSpan(geo, layout, Int32Array.from([-1, -1]), [0, 1], "y"), null);
  assert.equal(shift(50, 80, 0, 200), 0);
  assert.equal(shift(250, 280, 0, 200), 88);
  assert.equal(shift(10, 40, 20, 220), -18);
  // a span nearly the box's width: the margins shrink to what is left, both sides
  assert.equal(shift(100, 296, 0, 200), 98);
  assert.equal(shift(0, 400, 100, 300), -100, "longer than the box: its start");
});

import { layoutPhone } from "../../static/js/model/stage-layout.js";

test("layoutPhone: one figure under another, each within the width, each band within the screen's height", () => {
  const r = rng(11);
  const int = (a, b) => a + Math.floor(r() * (b - a + 1));
  for (let trial = 0; trial < 200; trial++) {
    const figures = Array.from({ length: int(1, 6) }, (_, i) => {
      const slices = int(1, 6);
      return { name: `t${i}`, slices, band: int(1, slices), rows: int(1, 8), cols: int(1, 8), role: "read" };
    });
    const room = { width: int(300, 420), height: int(400, 800) };
    const opts = { chars: int(1, 3), fontPx: 10, maxCell: 40 };
    const L = layoutPhone(figures, room, METRICS, opts);
    assert.deepEqual(L.columns.map((c) => c.names), figures.map((f) => [f.name]));
    assert.equal(L.scrolls, "page");
    assert.ok(L.cell >= minCellFor(opts.chars, 10) && L.cell <= 40);
    if (L.fits) {
      L.columns.forEach((c, i) => {
        const f = figures[i];
        assert.ok(figureSize(f, L.cell, c.perLine, METRICS).width <= room.width);
        assert.ok(figureSize({ ...f, slices: f.band }, L.cell, c.perLine, METRICS).height <= room.height);
        // the most slices a line that fit the width
        if (c.perLine < f.slices) assert.ok(figureSize(f, L.cell, c.perLine + 1, METRICS).width > room.width);
      });
    }
    const taller = layoutPhone(figures, { width: room.width, height: room.height * 2 }, METRICS, opts);
    assert.ok(taller.cell >= L.cell);
  }
});

import { layoutCloseUp, NOTE_CELL_SHARE } from "../../static/js/model/stage-layout.js";
import { stepCrop, cropNote, cutsGrid } from "../../static/js/model/step-crop.js";
import { MAX_CELLS_PER_TENSOR } from "../../static/js/model/tensor-layout.js";
import { closeUpAt } from "../../static/js/model/frame.js";

/** Where each flat index of a tensor is drawn: {slice, r, c}, or undefined. */
function placesOf(layout) {
  const at = new Map();
  layout.slices.forEach((sl, k) => sl.cells.forEach((flat, p) => at.set(flat, { slice: k, r: Math.floor(p / layout.cols), c: p % layout.cols })));
  return at;
}

test("stepCrop: every cell a step reads or writes is in its figure's crop; margin 0 is their bounding rectangle, a margin widens it within the grid", () => {
  for (const name of ["trace_worked_example.json", "trace_direct_geometry.json", "trace_groups_mac_separate.json", "trace_transposed.json", "trace_nhwc_same.json"]) {
    const { model } = modelOf(name);
    const layouts = Object.fromEntries(model.names.map((n) => [n, sliceLayout(model.tensors[n], MAX_CELLS_PER_TENSOR)]));
    const places = Object.fromEntries(model.names.map((n) => [n, placesOf(layouts[n])]));
    for (let e = 0; e < model.compiled.length; e += 3) {
      const ev = model.compiled[e];
      const tight = stepCrop(layouts, ev, 0);
      const wide = stepCrop(layouts, ev, 1);
      const whole = stepCrop(layouts, ev, Infinity);
      const touched = new Set([...ev.reads, ...ev.writes].map((b) => b.tensor));
      assert.deepEqual(Object.keys(tight).sort(), [...touched].filter((n) => tight[n]).sort(), `${name} ${e}`);
      const edges = {};
      for (const b of [...ev.reads, ...ev.writes]) {
        const c = tight[b.tensor];
        for (const flat of b.idx) {
          const p = places[b.tensor].get(flat);
          if (!p) continue; // (a slice past what is drawn)
          assert.ok(c && c.slices.includes(p.slice) && p.r >= c.r0 && p.r <= c.r1 && p.c >= c.c0 && p.c <= c.c1, `${name} event ${e}: ${b.tensor}[${flat}] outside its crop ${JSON.stringify(c)}`);
          const seen = (edges[b.tensor] ??= { r0: false, r1: false, c0: false, c1: false });
          seen.r0 ||= p.r === c.r0;
          seen.r1 ||= p.r === c.r1;
          seen.c0 ||= p.c === c.c0;
          seen.c1 ||= p.c === c.c1;
        }
      }
      for (const [t, seen] of Object.entries(edges)) assert.deepEqual(seen, { r0: true, r1: true, c0: true, c1: true }, `${name} ${e} ${t}: a tight crop's edges hold touched cells`);
      for (const t in tight) {
        const { rows, cols } = layouts[t];
        const [a, b, w] = [tight[t], wide[t], whole[t]];
        assert.deepEqual(b.slices, a.slices);
        assert.deepEqual([b.r0, b.r1, b.c0, b.c1], [Math.max(0, a.r0 - 1), Math.min(rows - 1, a.r1 + 1), Math.max(0, a.c0 - 1), Math.min(cols - 1, a.c1 + 1)]);
        assert.deepEqual([w.r0, w.r1, w.c0, w.c1], [0, rows - 1, 0, cols - 1]);
        assert.equal(cutsGrid(w, rows, cols), false);
      }
    }
  }
  assert.equal(cropNote({ r0: 2, r1: 4, c0: 4, c1: 6 }, 7, 7), "rows 2–4 · cols 4–6 of 7×7");
  assert.equal(cropNote({ r0: 0, r1: 0, c0: 1, c1: 1 }, 1, 5), "cols 1 of 5");
  // a sequence's grid has no row axis: its cells are positions
  assert.equal(cropNote({ r0: 0, r1: 0, c0: 2, c1: 4 }, 1, 12, "l"), "positions 2–4 of 12");
  assert.equal(cropNote({ r0: 0, r1: 0, c0: 3, c1: 3 }, 1, 12, "l"), "position 3 of 12");
  // another grid without rows (a bias, axis f): its cells
  assert.equal(cropNote({ r0: 0, r1: 0, c0: 1, c1: 1 }, 1, 2, "f"), "cell 1 of 2");
});

/** An independent flow of `figures` at `cell`: each at the most slices a line within the
 *  width (at least one), wrapped into lines where the next would pass it. */
function flowOf(figures, cell, room, m) {
  const per = figures.map((f) => {
    let k = 1;
    for (let n = 2; n <= f.slices; n++) if (Math.max(figureSize(f, cell, n, m).width, (m.heads?.[f.name] ?? 0) + m.figPadX) <= room.width) k = n;
    return k;
  });
  const sizes = figures.map((f, i) => {
    const s = figureSize(f, cell, per[i], m);
    return { width: Math.max(s.width, (m.heads?.[f.name] ?? 0) + m.figPadX), height: s.height };
  });
  const lines = [[]];
  for (const s of sizes) {
    const line = lines[lines.length - 1];
    const w = line.reduce((x, t) => x + t.width + m.colGap, 0) + s.width;
    if (line.length && w > room.width) lines.push([s]);
    else line.push(s);
  }
  const height = lines.reduce((h, l) => h + Math.max(...l.map((s) => s.height)), 0) + (lines.length - 1) * m.flowRowGap;
  return { per, height, fits: height <= room.height && sizes.every((s) => s.width <= room.width) };
}

test("layoutCloseUp: the figures wrap into lines as a flow does, each within the width, all within the height when it fits, at a cell one larger than which they would not", () => {
  const r = rng(12);
  const int = (a, b) => a + Math.floor(r() * (b - a + 1));
  let fitted = 0;
  for (let trial = 0; trial < 300; trial++) {
    const figures = Array.from({ length: int(1, 6) }, (_, i) => ({ name: `t${i}`, slices: int(1, 4), rows: int(1, 5), cols: int(1, 5), role: r() < 0.5 ? "read" : "write" }));
    const room = { width: int(300, 420), height: int(300, 700) };
    const opts = { chars: int(1, 3), fontPx: 10, maxCell: 40 };
    // (each figure no narrower than its name and scale: a short grid under a long name)
    const m = { ...METRICS, flowRowGap: 6, heads: Object.fromEntries(figures.map((f) => [f.name, int(30, 120)])) };
    const L = layoutCloseUp(figures, room, m, opts);
    assert.deepEqual(L.columns.map((c) => c.names), figures.map((f) => [f.name]));
    const flow = flowOf(figures, L.cell, room, m);
    assert.deepEqual(L.columns.map((c) => c.perLine), flow.per);
    assert.ok(Math.abs(flow.height - L.height) < 1e-6, `${flow.height} vs ${L.height}`);
    assert.equal(L.fits, flow.fits);
    if (L.fits) {
      fitted += 1;
      if (L.cell < opts.maxCell) assert.equal(flowOf(figures, L.cell + 1, room, m).fits, false, "a cell one larger does not fit");
    } else assert.equal(L.cell, minCellFor(opts.chars, 10, figures.some((f) => f.role === "write")));
  }
  assert.ok(fitted > 50, `${fitted} of 300 fit`);
});

test("layoutCloseUp: a figure is as wide as its crop's note at the largest cell down to NOTE_CELL_SHARE of the cell without notes at which all still fit, else as wide as its grid and name", () => {
  const r = rng(29);
  const int = (a, b) => a + Math.floor(r() * (b - a + 1));
  const seen = { noted: 0, smaller: 0, bare: 0 };
  for (let trial = 0; trial < 300; trial++) {
    const figures = Array.from({ length: int(1, 5) }, (_, i) => ({ name: `t${i}`, slices: int(1, 3), rows: int(1, 4), cols: int(1, 4), role: r() < 0.5 ? "read" : "write" }));
    for (const f of figures) if (r() < 0.7) f.note = "rows 0–2 · cols 0–1 of 3×3".slice(0, int(8, 26));
    const room = { width: int(300, 420), height: int(250, 700) };
    const opts = { chars: int(1, 3), fontPx: 10, maxCell: 40 };
    const heads = Object.fromEntries(figures.map((f) => [f.name, int(30, 100)]));
    const m = { ...METRICS, flowRowGap: 6, heads, noteCharPx: 6.5 };
    const L = layoutCloseUp(figures, room, m, opts);
    const bare = layoutCloseUp(figures, room, { ...m, noteCharPx: 0 }, opts);
    assert.ok(bare.columns.every((c) => c.minWidth === undefined));
    // the widths the notes ask for: each figure's name and scale and its note
    const want = Object.fromEntries(figures.map((f) => [f.name, f.note ? heads[f.name] + Math.ceil(f.note.length * 6.5) : heads[f.name]]));
    const notedFits = (cell) => flowOf(figures, cell, room, { ...m, heads: want }).fits;
    const lowest = Math.max(minCellFor(opts.chars, 10, figures.some((f) => f.role === "write")), Math.ceil(bare.cell * NOTE_CELL_SHARE));
    if (L.columns.some((c) => c.minWidth !== undefined)) {
      seen.noted += 1;
      if (L.cell < bare.cell) seen.smaller += 1;
      assert.ok(bare.fits && L.fits && notedFits(L.cell) && L.cell >= lowest && L.cell <= bare.cell, `${L.cell} of ${bare.cell}`);
      for (let c = L.cell + 1; c <= bare.cell; c++) assert.equal(notedFits(c), false, `a larger cell ${c} fits with the notes`);
      L.columns.forEach((c, i) => assert.equal(c.minWidth, figures[i].note ? Math.min(room.width, want[figures[i].name] + m.figPadX) : undefined));
      assert.ok(Math.abs(flowOf(figures, L.cell, room, { ...m, heads: want }).height - L.height) < 1e-6);
    } else {
      assert.deepEqual(L, bare);
      if (figures.some((f) => f.note) && bare.fits) {
        seen.bare += 1;
        for (let c = lowest; c <= bare.cell; c++) assert.equal(notedFits(c), false, `the notes fit at ${c} of ${bare.cell}`);
      }
    }
  }
  assert.ok(seen.noted > 30 && seen.smaller > 3 && seen.bare > 10, JSON.stringify(seen));
});

test("closeUpAt: on a phone each step of a phase in focus is shown cut to its figures' crops, which fit below the player; off a phone, or with All tensors, none", () => {
  const { model } = modelOf("trace_worked_example.json");
  const m = { ...METRICS, flowRowGap: 6 };
  const phone = { projector: false, allTensors: false, fits: false, playing: false };
  const viewport = { width: 390, room: { width: 346, height: 590 } };
  let shown = 0;
  for (let step = 0; step < model.total; step++) {
    const f = frameOf({ model, received: model.received }, step, phone, viewport, m);
    if (f.layout.arrangement !== "close-up") continue;
    shown += 1;
    const names = f.layout.columns.flatMap((c) => c.names);
    const touched = new Set([...f.event.reads, ...f.event.writes].map((b) => b.tensor));
    assert.deepEqual(new Set(names), touched, `step ${step}`);
    assert.ok(f.layout.fits && f.layout.height <= viewport.room.height);
    assert.deepEqual(f.layout.rest, []);
    for (const n of names) assert.ok(f.layout.crop[n] && f.focus.has(n));
  }
  assert.ok(shown >= model.total / 2, `${shown} of ${model.total} steps in close-up`);
  const step = model.phases.find((p) => p.name === "backward").start;
  assert.equal(closeUpAt(model, phaseIndexAt(model.phases, step), model.compiled[step], { ...phone, fits: true }, viewport, m), null);
  assert.equal(closeUpAt(model, phaseIndexAt(model.phases, step), model.compiled[step], { ...phone, allTensors: true }, viewport, m), null);
  assert.equal(closeUpAt(model, phaseIndexAt(model.phases, step), model.compiled[step], phone, viewport, null), null);
});

// ---- the GIF writer --------------------------------------------------------------------

import { encodeGif, paletteOf } from "../../static/js/encode/gif.js";

/** An independent LZW decode of the first image's data (the GIF spec's decoder). */
function decodeFirstFrame(gif) {
  let p = 13 + 3 * (2 << (gif[10] & 7));
  const blocks = [];
  for (;;) {
    if (gif[p] === 0x21) {
      p += 2;
      while (gif[p]) p += gif[p] + 1;
      p += 1;
    } else if (gif[p] === 0x2c) {
      const w = gif[p + 5] | (gif[p + 6] << 8);
      const h = gif[p + 7] | (gif[p + 8] << 8);
      p += 10;
      const min = gif[p++];
      while (gif[p]) {
        blocks.push(...gif.slice(p + 1, p + 1 + gif[p]));
        p += gif[p] + 1;
      }
      const clear = 1 << min;
      let size = min + 1;
      let dict = [];
      const reset = () => {
        dict = Array.from({ length: clear + 2 }, (_, i) => [i]);
        size = min + 1;
      };
      reset();
      const out = [];
      let bitPos = 0;
      let prev = null;
      for (;;) {
        let code = 0;
        for (let b = 0; b < size; b++, bitPos++) code |= ((blocks[bitPos >> 3] >> (bitPos & 7)) & 1) << b;
        if (code === clear) {
          reset();
          prev = null;
          continue;
        }
        if (code === clear + 1) break;
        let entry = code < dict.length ? dict[code] : [...prev, prev[0]];
        out.push(...entry);
        if (prev) dict.push([...prev, entry[0]]);
        if (dict.length === 1 << size && size < 12) size += 1;
        prev = entry;
      }
      return { w, h, pixels: out };
    } else throw new Error(`unexpected block ${gif[p]} at ${p}`);
  }
}

test("encodeGif: a valid GIF89a whose LZW data decodes, by the spec's decoder, to the frame's palette indices", () => {
  const r = rng(3);
  // (big and noisy enough that the code table grows past 512 and 4096 codes: both the
  // code-size steps and the table reset are decoded)
  const width = 211;
  const height = 157;
  const colours = [[255, 255, 255], [26, 77, 135], [127, 61, 8], [0, 0, 0], [240, 240, 240]];
  const frame = new Uint8ClampedArray(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    const c = colours[r() < 0.3 ? 0 : Math.floor(r() * colours.length)];
    frame.set([...c, 255], i * 4);
  }
  const gif = encodeGif([frame, frame], width, height, 500);
  assert.equal(String.fromCharCode(...gif.slice(0, 6)), "GIF89a");
  assert.equal(gif[gif.length - 1], 0x3b);
  const palette = paletteOf(frame);
  const { w, h, pixels } = decodeFirstFrame(gif);
  assert.deepEqual([w, h], [width, height]);
  assert.equal(pixels.length, width * height);
  for (let i = 0; i < width * height; i++) {
    const c = palette[pixels[i]];
    assert.deepEqual([c >> 16, (c >> 8) & 255, c & 255], Array.from(frame.slice(i * 4, i * 4 + 3)), `pixel ${i}`);
  }
});

// ---- the code beside the step ------------------------------------------------------------

import { loopHeaders, codeStep, writesOfLine, nextStepRunning, correctLine, correctUnder, codeOf } from "../../static/js/model/code-view.js";

const LISTING = [
  "import numpy as np",
  "",
  "def conv_backward_naive(dout, cache):",
  "    x, w, b, conv_param = cache",
  "    for n, f, i, j in np.ndindex(*dout.shape):",
  "        g = dout[n, f, i, j]",
  "        db[f] += g  # step: backward",
  "        dw[f] += g * xp[n, :, i:i + 3, j:j + 3]  # step: backward",
  "        dxp[n, :, i:i + 3, j:j + 3] += g * w[f]  # step: backward",
  "    dx = dxp[:, :, 1:-1, 1:-1]  # step: crop",
];

test("loopHeaders: the for lines around a line, outermost first; none at the top level", () => {
  const nested = ["for a in x:", "    y = 1", "    for b in y:", "", "        z = 2", "    w = 3"];
  assert.deepEqual(loopHeaders(nested, 5), [1, 3]);
  assert.deepEqual(loopHeaders(nested, 6), [1]);
  assert.deepEqual(loopHeaders(nested, 1), []);
  assert.deepEqual(loopHeaders(LISTING, 8), [5]);
  assert.deepEqual(loopHeaders(LISTING, 10), []);
  assert.deepEqual(loopHeaders(LISTING, 99), []);
});

test("codeStep: the step's line, every line it runs with what it writes there, its loops, variables and scalars", () => {
  const box = (tensor, start, stop) => ({ tensor, start, stop, step: start.map(() => 1) });
  const event = {
    line: 9,
    lines: [7, 8, 9],
    loop: { n: 0, f: 1, i: 0, j: 2 },
    scalars: { g: 2 },
    writes: [
      { tensor: "db", box: box("db", [1], [2]), idx: [1] },
      { tensor: "dw", box: box("dw", [1, 0, 0, 0], [2, 3, 3, 3]), idx: [27, 28] },
      { tensor: "dxp", box: box("dxp", [0, 0, 0, 2], [1, 3, 3, 5]), idx: [2, 3] },
    ],
  };
  const got = codeStep({ lines: LISTING }, event);
  assert.equal(got.current, 9);
  assert.deepEqual([...got.runs], [7, 8, 9]);
  assert.deepEqual([...got.headers], [5]);
  assert.equal(got.loop, "n=0  f=1  i=0  j=2");
  assert.equal(got.scalars, "g = 2");
  assert.deepEqual(got.notes, { 7: "db[1]", 8: "dw[1,0:3,0:3,0:3]", 9: "dxp[0,0:3,0:3,2:5]" });
  assert.deepEqual(writesOfLine(event, 8).map((w) => w.tensor), ["dw"]);
  assert.deepEqual(writesOfLine(event, 6), []);
  // one line for every write: they are all that line's
  const single = { ...event, lines: undefined, line: 10, writes: event.writes.slice(0, 2) };
  assert.deepEqual(writesOfLine(single, 10).length, 2);
  assert.deepEqual(codeStep({ lines: LISTING }, single).notes, { 10: "db[1], dw[1,0:3,0:3,0:3]" });
  assert.equal(codeStep({ lines: LISTING }, null).current, null);
});

test("nextStepRunning: the next step that runs a line, round to the start; correctLine: a mistake's line against the correct one", () => {
  const compiled = [{ line: 7, lines: [7, 8] }, { line: 9 }, { line: 7, lines: [7] }, { line: 10 }];
  assert.equal(nextStepRunning(compiled, 4, 0, 7), 2);
  assert.equal(nextStepRunning(compiled, 4, 2, 8), 0, "round to the start");
  assert.equal(nextStepRunning(compiled, 4, -1, 7), 0, "before the first step");
  assert.equal(nextStepRunning(compiled, 4, 1, 6), null);
  assert.equal(nextStepRunning(compiled, 3, 1, 10), null, "only what has arrived");
  const code = { lines: ["a", "dx[i] = v", "c"], changed: [2], correct: ["a", "dx[i] += v", "c"] };
  assert.equal(correctLine(code, 2), "dx[i] += v");
  assert.equal(correctLine(code, 1), null);
  assert.equal(correctUnder(code, 2), "dx[i] += v");
  // a mistake that adds code: one correct line stands for a block, shown once under it
  const added = { lines: ["a", "# none here", "b", "loop", "dx[y] = u", "c"], changed: [2, 4, 5], correct_of: [2, 3, 3], correct: ["a", "dx[i] += v", "c"] };
  assert.deepEqual([1, 2, 3, 4, 5, 6].map((n) => correctLine(added, n)), [null, "dx[i] += v", null, "c", "c", null]);
  assert.deepEqual([1, 2, 3, 4, 5, 6].map((n) => correctUnder(added, n)), [null, "dx[i] += v", null, null, "c", null]);
  assert.equal(codeOf({ header: {} }), null);
  assert.equal(codeOf({ header: { code: { lines: [] } } }), null);
  assert.equal(codeOf({ header: { code } }), code);
});
