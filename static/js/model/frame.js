// What the page shows at one step, as data: frameOf(trace, step, view, viewport) is a
// pure function of its arguments (node tests call it without a browser); stage/stage.js
// and panels/chrome.js only copy a frame into the DOM.

import { Cursor, phaseIndexAt, cellName, boxCount, boxText } from "./trace-model.js";
import { sliceLayout, orderedNames, MAX_CELLS_PER_TENSOR } from "./tensor-layout.js";
import { layoutStage, layoutPhone, layoutCloseUp } from "./stage-layout.js";
import { stepCrop, cropKey, cropCaption } from "./step-crop.js";
import { formatLong, maxTextLength } from "./number-format.js";

const cursors = new WeakMap(); // model -> its Cursor (a cache: the values at the last step asked)
const shapes = new WeakMap(); // model -> {name: {slices, band, rows, cols}}
const policies = new WeakMap(); // model -> Map(view and viewport key -> per-figure cells or not)
const legibility = new WeakMap(); // model -> Map(view and viewport key -> {fontPx, tagged})
const reaches = new WeakMap(); // model -> Map(phase -> {name: {rows, cols, slices, span, runs}})
const layouts = new WeakMap(); // model -> Map(the arguments' key -> layout): a phase's layout is found once
const lastLayout = new WeakMap(); // model -> {args, layout} of the last layoutAt call
const grids = new WeakMap(); // model -> {name: sliceLayout}
const closeUps = new WeakMap(); // model -> {room, metrics, known: Map(crop key -> layout or null)}

function cursorOf(model) {
  let c = cursors.get(model);
  if (!c) cursors.set(model, (c = new Cursor(model)));
  return c;
}

function shapesOf(model) {
  let s = shapes.get(model);
  if (!s) {
    s = {};
    for (const name of model.names) {
      const l = gridsOf(model)[name];
      s[name] = { slices: l.slices.length, band: l.bands.length ? l.bands[0].slices.length : 1, rows: l.rows, cols: l.cols, rowAxis: l.rowAxis, colAxis: l.colAxis, sliceAxes: l.sliceAxes };
    }
    shapes.set(model, s);
  }
  return s;
}

function gridsOf(model) {
  let g = grids.get(model);
  if (!g) grids.set(model, (g = Object.fromEntries(model.names.map((n) => [n, sliceLayout(model.tensors[n], MAX_CELLS_PER_TENSOR)]))));
  return g;
}

const MAX_RUNS = 64; // the distinct runs of slices a phase's boxes reach that are kept

/**
 * How far one step of phase `pi` reaches on each figure: the most grid rows, grid
 * columns (extent, first to last cell) and slices (how many; span: first to last) any of
 * its boxes reaches there, and the runs of slices its boxes reach ([first, last] each,
 * or null when there are more than MAX_RUNS). A column of the stage that cannot show
 * that much at once cannot follow the step.
 */
export function reachAt(model, pi) {
  let known = reaches.get(model);
  if (!known) reaches.set(model, (known = new Map()));
  if (known.has(pi) && model.complete) return known.get(pi);
  const out = {};
  const p = model.phases[pi];
  const s = shapesOf(model);
  for (let e = p.start; e < Math.min(p.stop, model.received); e++) {
    const ev = model.compiled[e];
    for (const b of [...ev.reads, ...ev.writes]) {
      const { rowAxis, colAxis, sliceAxes } = s[b.tensor];
      const box = b.box;
      const extent = (a) => (a < 0 ? 1 : Math.max(0, (boxCount(box.start[a], box.stop[a], box.step[a]) - 1) * box.step[a] + 1));
      // the slices the box reaches (how many; from the first to the last, in drawing order)
      let slices = 1;
      let first = 0;
      let last = 0;
      const shape = model.tensors[b.tensor].shape;
      for (const a of sliceAxes) {
        const n = boxCount(box.start[a], box.stop[a], box.step[a]);
        slices *= n;
        first = first * shape[a] + box.start[a];
        last = last * shape[a] + box.start[a] + Math.max(0, n - 1) * box.step[a];
      }
      if (!slices) continue;
      const r = (out[b.tensor] ??= { rows: 0, cols: 0, slices: 0, span: 0, runs: [] });
      r.rows = Math.max(r.rows, extent(rowAxis));
      r.cols = Math.max(r.cols, extent(colAxis));
      r.slices = Math.max(r.slices, slices);
      r.span = Math.max(r.span, last - first + 1);
      // (the distinct runs of slices, first to last, while few: where they fall on the lines)
      if (r.runs && !r.runs.some(([a, z]) => a === first && z === last)) r.runs = r.runs.length < MAX_RUNS ? [...r.runs, [first, last]] : null;
    }
  }
  known.set(pi, out);
  return out;
}

/** The smallest cell text (px) on a desktop `width` px wide: 16 in normal mode (14 for a
 *  trace too large to show a step at 16: see legibleAt); in projector mode 20 at the
 *  resolutions lecture-hall projectors run (XGA, WXGA: 1024 to 1280 px), 24 from 1900 px
 *  on (a phone: 10, the screen is close). */
export function smallestText(width, projector) {
  if (projector) return width >= 1900 ? 24 : 20;
  return 16;
}

/** Normal mode's smallest cell text for a trace whose steps cannot all be shown (or
 *  followed) at smallestText's. */
const TEXT_FALLBACK = 14;

/**
 * The figures in focus at phase `pi` (-1: none): the phase's tensors, or null for all
 * (no phase, or "All tensors" outside projector mode).
 */
export function focusOf(model, pi, { projector, allTensors }) {
  return pi >= 0 && model.touched[pi].size && (projector || !allTensors) ? model.touched[pi] : null;
}

/**
 * The stage's layout at phase `pi`: the shown figures by their role in the phase (read,
 * or written), laid out in the stage's room (a phone: one under another, each band on
 * the screen below the player; the page scrolls). view: {projector, allTensors, fits};
 * viewport: {width, room: {width, height}}; metrics: the style sheet's sizes
 * (stage/stage.js measureMetrics); null before they are known.
 */
export function layoutAt(model, pi, view, viewport, metrics) {
  if (!metrics || !viewport.room.width) return null;
  // the same phase, view, room and metrics objects as the last call (every frame while
  // playing): its layout, found without building the figures and their key again
  const args = [pi, view.projector, view.allTensors, view.fits, viewport.width, viewport.room, metrics];
  const last = lastLayout.get(model);
  if (last && model.complete && args.every((a, i) => a === last.args[i])) return last.layout;
  const layout = findLayout(model, pi, view, viewport, metrics);
  lastLayout.set(model, { args, layout });
  return layout;
}

/** What the stage lays out at phase `pi`: {figures, opts, phone, focus, used, names};
 *  legible: {fontPx (normal mode's smallest text), tagged} (legibleAt). */
function stageInputs(model, pi, view, viewport, legible = { fontPx: smallestText(viewport.width, false), tagged: true }) {
  const phone = !view.projector && !view.fits;
  const focus = focusOf(model, pi, view);
  // "All tensors": the phase's figures are laid out as in focus, the others follow below
  const used = focus ?? (pi >= 0 && model.touched[pi].size ? model.touched[pi] : null);
  const s = shapesOf(model);
  const wrote = pi >= 0 ? model.wrote[pi] : null;
  const reach = pi >= 0 ? reachAt(model, pi) : {};
  const names = orderedNames(model.tensors);
  const figures = names
    .filter((n) => !used || used.has(n))
    .map((name) => ({
      name,
      slices: s[name].slices,
      band: s[name].band,
      rows: s[name].rows,
      cols: s[name].cols,
      reach: reach[name] ?? null,
      chars: Math.max(1, maxTextLength(model.valueStats[name])),
      role: (wrote ? wrote.has(name) : model.tensors[name].role !== "input") ? "write" : "read",
    }));
  const chars = Math.max(1, ...figures.map((f) => f.chars));
  const opts = view.projector
    ? { chars, fontPx: smallestText(viewport.width, true), maxCell: 160, fontRatio: 0.5, tagged: legible.tagged }
    : phone
      ? { chars, fontPx: 10, maxCell: 40, fontRatio: 0.4 }
      : { chars, fontPx: legible.fontPx, maxCell: 72, fontRatio: 0.4, tagged: legible.tagged };
  return { figures, opts, phone, focus, used, names };
}

/**
 * Whether figures of short numbers may have smaller cells than the others
 * (model/stage-layout.js's perFigure) on this trace, view and viewport: when that lets the stage of every phase fit
 * or follow the step. Else every figure keeps one cell size in every phase: a figure that
 * changed size between phases would be laid out again at each jump across them, for a
 * stage that still cannot show a whole step. A phase that neither lets follow (a copy
 * of a whole large tensor in one step) has no say. Decided once the trace is complete.
 */
function perFigureCells(model, view, viewport, metrics, legible) {
  if (!model.complete) return false;
  let known = policies.get(model);
  if (!known) policies.set(model, (known = new Map()));
  const key = JSON.stringify([view.projector, view.allTensors, viewport.width, viewport.room, metrics, legible]);
  if (!known.has(key)) {
    let all = true;
    for (let pi = 0; pi < model.phases.length && all; pi++) {
      if (!model.touched[pi].size) continue;
      const { figures, opts } = stageInputs(model, pi, view, viewport, legible);
      all =
        layoutStage(figures, viewport.room, metrics, { ...opts, perFigure: true }).follows ||
        !layoutStage(figures, viewport.room, metrics, { ...opts, perFigure: false }).follows;
    }
    known.set(key, all);
  }
  return known.get(key);
}

/**
 * How legible the stage is on this trace, view and viewport: {fontPx: normal mode's
 * smallest cell text, tagged: whether the written cells have room for the tags of what a
 * step added under their numbers (else the page hides the tags)}. The first of 16 px
 * with tags, 14 px with tags, 14 px without, at which every phase's step can be shown
 * whole or followed (a large custom setup on a laptop takes a later one; projector mode
 * keeps its text size, with tags or without), and at that size without tags if that
 * shows every step whole where tags would make them scroll. A phase that can at none has
 * no say.
 * Decided once the trace is complete. (A phone keeps its own sizes: model/stage-layout.js
 * layoutPhone.)
 */
function legibleAt(model, view, viewport, metrics) {
  const phone = !view.projector && !view.fits;
  const text = smallestText(viewport.width, view.projector);
  const choices = view.projector
    ? [{ fontPx: text, tagged: true }, { fontPx: text, tagged: false }]
    : [{ fontPx: text, tagged: true }, { fontPx: TEXT_FALLBACK, tagged: true }, { fontPx: TEXT_FALLBACK, tagged: false }];
  if (phone) return choices[0];
  if (!model.complete) return choices[0];
  let known = legibility.get(model);
  if (!known) legibility.set(model, (known = new Map()));
  const key = JSON.stringify([view.projector, view.allTensors, viewport.width, viewport.room, metrics]);
  if (!known.has(key)) {
    // per choice, the worst of its phases: 2 every step shown whole, 1 followed, 0 neither
    const ranks = choices.map(() => 2);
    for (let pi = 0; pi < model.phases.length; pi++) {
      if (!model.touched[pi].size) continue;
      const rank = choices.map((legible) => {
        const { figures, opts } = stageInputs(model, pi, view, viewport, legible);
        // (as findLayout will lay it out at this choice)
        const perFigure = perFigureCells(model, view, viewport, metrics, legible);
        const layout = layoutStage(figures, viewport.room, metrics, { ...opts, perFigure });
        return layout.fits ? 2 : layout.follows ? 1 : 0;
      });
      if (Math.max(...rank) > 0) rank.forEach((r, i) => (ranks[i] = Math.min(ranks[i], r)));
    }
    // the largest text that shows or follows every step; at that size, whole if it can be
    let pick = Math.max(0, ranks.findIndex((r) => r > 0));
    const whole = ranks.findIndex((r, i) => r === 2 && choices[i].fontPx === choices[pick].fontPx);
    if (ranks[pick] < 2 && whole >= 0) pick = whole;
    known.set(key, choices[pick]);
  }
  return known.get(key);
}

function findLayout(model, pi, view, viewport, metrics) {
  const legible = legibleAt(model, view, viewport, metrics);
  const { figures, opts: base, phone, focus, used, names } = stageInputs(model, pi, view, viewport, legible);
  const opts = phone ? base : { ...base, perFigure: perFigureCells(model, view, viewport, metrics, legible) };
  let known = layouts.get(model);
  if (!known) layouts.set(model, (known = new Map()));
  const key = JSON.stringify([figures.map((f) => [f.name, f.role, f.chars, f.reach]), viewport.room, metrics, opts, Boolean(focus)]);
  let layout = known.get(key);
  if (!layout) {
    const found = phone ? layoutPhone(figures, viewport.room, metrics, opts) : layoutStage(figures, viewport.room, metrics, opts);
    layout = { ...found, rest: focus || !used ? [] : names.filter((n) => !used.has(n)) };
    known.set(key, layout);
  }
  return layout;
}

/** The margins (cells around what a step reads and writes) a phone's close-up tries, the
 *  widest first: the slices the step reaches whole, then a cell of context, then none. */
const CLOSE_UP_MARGINS = [Infinity, 1, 0];

/**
 * A phone's close-up of `event` at phase `pi` (model/step-crop.js, stage-layout.js
 * layoutCloseUp): the layout, with `crop` ({name: Crop}) and no `rest`, of the widest
 * margin at which every figure the step touches fits the screen below the player; null
 * when none fits (the phone's layout of the whole figures then scrolls to the step), off
 * a phone, outside a phase's focus ("All tensors" shows the figures whole) or before
 * the metrics are known.
 */
export function closeUpAt(model, pi, event, view, viewport, metrics) {
  if (!metrics || !event || view.projector || view.fits || !viewport.room.width || !focusOf(model, pi, view)) return null;
  let cache = closeUps.get(model);
  if (!cache || cache.room !== viewport.room || cache.metrics !== metrics) closeUps.set(model, (cache = { room: viewport.room, metrics, known: new Map() }));
  const layouts = gridsOf(model);
  const crops = CLOSE_UP_MARGINS.map((margin) => stepCrop(layouts, event, margin));
  const key = crops.map(cropKey).join("/");
  if (cache.known.has(key)) return cache.known.get(key);
  const { figures, opts } = stageInputs(model, pi, view, viewport);
  let found = null;
  for (const crop of crops) {
    const shown = figures
      .filter((f) => crop[f.name])
      .map((f) => {
        const c = crop[f.name];
        const note = cropCaption(c, layouts[f.name], model.tensors[f.name].axes);
        return { ...f, slices: c.slices.length, band: 1, rows: c.r1 - c.r0 + 1, cols: c.c1 - c.c0 + 1, reach: null, note };
      });
    if (!shown.length) break;
    const layout = layoutCloseUp(shown, viewport.room, metrics, opts);
    if (layout.fits) {
      found = { ...layout, crop, rest: [] };
      break;
    }
  }
  cache.known.set(key, found);
  return found;
}

/** The step panel's text for event `ev` (compiled) of `model` at `shown`. */
export function panelOf(model, ev, shown) {
  if (!ev) {
    const text = model.total ? "Waiting for the first step…" : "This trace has no steps.";
    return { phase: "–", loop: "", text, writes: [], more: 0, reads: "", narration: text };
  }
  const writes = [];
  let count = 0;
  for (const w of ev.writes) {
    const meta = model.tensors[w.tensor];
    for (let i = 0; i < w.idx.length; i++) if (count++ < 6) writes.push(`${cellName(meta, w.idx[i])} = ${formatLong(w.value[i])}`);
  }
  return {
    phase: ev.phase,
    loop: Object.entries(ev.loop).map(([k, v]) => `${k}=${v}`).join("  "),
    text: ev.text,
    writes,
    more: Math.max(0, count - 6),
    reads: ev.reads.length ? `reads ${ev.reads.map((r) => boxText(r.box)).join(", ")}` : "",
    narration: `Step ${shown + 1} of ${model.total}, ${ev.phase}: ${ev.text}`,
  };
}

/**
 * The frame at `step` of `trace` ({model, received}): {step (the one shown: within what
 * has arrived), phase (index or -1), event (compiled, or null), values / counts (per
 * tensor, at that step; the cursor's buffers, valid until the next frameOf of this
 * model), focus (Set of the figures in focus, or null), layout (model/stage-layout.js, or
 * null), panel, transport}.
 * view: {projector, allTensors, fits, playing}; viewport: {width, room}; metrics: see layoutAt.
 */
export function frameOf(trace, step, view, viewport, metrics = null) {
  const model = trace.model;
  const cursor = cursorOf(model);
  const shown = cursor.seek(step);
  const event = cursor.event;
  const pi = shown >= 0 ? phaseIndexAt(model.phases, shown) : -1;
  const total = model.total;
  return {
    step: shown,
    phase: pi,
    event,
    values: cursor.values,
    counts: cursor.counts,
    focus: focusOf(model, pi, view),
    layout: closeUpAt(model, pi, event, view, viewport, metrics) ?? layoutAt(model, pi, view, viewport, metrics),
    panel: panelOf(model, event, shown),
    transport: {
      value: Math.max(0, shown),
      max: Math.max(0, total - 1),
      loaded: total ? (100 * model.received) / total : 0,
      counter: `step ${shown + 1} / ${total}`,
      valuetext: `step ${shown + 1} of ${total}${shown >= 0 && event ? `, ${event.phase}` : ""}`,
      playLabel: view.playing ? "❚❚ Pause" : "▶ Play",
      playAria: view.playing ? "Pause" : "Play",
    },
  };
}
