// Hooks for tests and benchmarks, loaded only when the address has ?debug: a read-only
// view of the page state as window.convscope, the actions the keys trigger, frame times
// and bench/page.py's per-frame breakdown, and the animation export of the command line
// (server/export/animation.py). A page opened without ?debug has none of it.

import { currentStep } from "../model/page-state.js";
import { recordAnimation } from "../encode/animation.js";
import { codeOf, codeLineText } from "../model/code-view.js";
import { buildHandout, handoutTitle } from "../panels/handout.js";
import { SPEEDS } from "../model/player.js";

/** Install window.convscope for `page` = {store, stage, redraw, probe, isSettled, clone,
 *  show (app/redraw.js showForExport: a step drawn for an export, every cell painted)}. */
export function install(page) {
  const { store, stage, redraw, probe, clone, show } = page;
  const state = () => store.state;
  let frameTimes = [];
  // Per-frame breakdown (bench/page.py --breakdown), off unless asked for: each part of
  // the frame forces style and layout and records its time (so frames take longer than
  // without), with the steps the frame covers and the cells it wrote per tensor.
  const breakdown = { on: false, rows: [], row: null, at: 0 };
  let lastFrame = null;
  let recorded = []; // what the last recordAnimation drew, per frame
  const onFrame = (dt, frame) => {
    lastFrame = frame;
    frameTimes.push(dt);
    if (frameTimes.length > 2000) frameTimes.splice(0, 1000);
    if (breakdown.row) {
      Object.assign(breakdown.row, { to: frame.step, total: dt, focus: stage.focusKey, writes: stage.writes, revealed: stage.revealed });
      breakdown.rows.push(breakdown.row);
      breakdown.row = null;
      stage.measureParts(null);
    }
  };
  probe.hook({ onFrame });
  const part = (name, start) => {
    if (!breakdown.on) return;
    if (name === "start") {
      breakdown.row = { cause: start.cause, from: start.from };
      breakdown.at = performance.now();
      stage.measureParts((n) => part(n));
      return;
    }
    const row = breakdown.row;
    if (!row) return;
    void document.body.offsetHeight;
    const t = performance.now();
    row[name] = (row[name] ?? 0) + t - breakdown.at;
    breakdown.at = t;
  };
  window.convscope = {
    get step() {
      const s = state();
      return s.trace && s.trace.received ? currentStep(s) : -1;
    },
    get shownStep() {
      return stage.model ? (stage.lastStep ?? -1) : -1;
    },
    get total() {
      return state().trace ? state().trace.model.total : 0;
    },
    get received() {
      return state().trace ? state().trace.received : 0;
    },
    get complete() {
      return page.isSettled();
    },
    get playing() {
      return state().playing;
    },
    get speed() {
      return SPEEDS[state().speedIndex];
    },
    get preset() {
      return state().lesson;
    },
    get config() {
      return clone(state().config);
    },
    /** The whole page state (a copy without the trace's model). */
    get state() {
      const { trace, ...rest } = state();
      return clone({ ...rest, trace: trace ? { received: trace.received, complete: trace.complete, lesson: trace.lesson } : null });
    },
    document: () => (state().trace ? state().trace.model.toDocument() : null),
    /** The stage layout of the last frame drawn (js/model/stage-layout.js), or null. */
    layout: () => (lastFrame && lastFrame.layout ? clone(lastFrame.layout) : null),
    /** The style sheet's sizes the stage layout was given (js/stage/measure.js). */
    metrics: () => stage.measureMetrics(),
    frameTimes: () => frameTimes.slice(),
    resetFrameTimes: () => (frameTimes = []),
    followTimes: () => stage.followTimes.slice(),
    resetFollowTimes: () => stage.resetFollowTimes(),
    timings: () => ({ runStartedAt: probe.runStartedAt, firstStepDrawnAt: probe.firstStepDrawnAt }),
    seek: (t) => {
      store.dispatch({ type: "goto", step: t });
      redraw();
      return stage.lastStep;
    },
    // (the actions return nothing: a page state handed back to the test or benchmark
    // would be serialized whole, trace and all, on the page's main thread)
    setSpeedIndex: (index) => void store.dispatch({ type: "speed", index }),
    measureLayout: (on) => probe.hook({ measureLayout: Boolean(on) }),
    breakdown: (on) => {
      breakdown.on = Boolean(on);
      breakdown.rows = [];
      stage.resetRevealed();
      probe.hook({ part: breakdown.on ? part : null });
    },
    breakdownRows: () => breakdown.rows.slice(),
    play: () => void store.dispatch({ type: "play" }),
    pause: () => void store.dispatch({ type: "pause" }),
    dispatch: (action) => void store.dispatch(action),
    /**
     * `convscope export anim.gif|anim.webm`: steps from..to (0-based, inclusive) as the
     * Animation dialog makes them (js/encode/animation.js), size {width, height}, fps,
     * format "gif" or "webm", code (the line of code each step runs under its equation);
     * resolves to the file's bytes in base64. The page returns to its step.
     */
    recordAnimation: async ({ from, to, size, fps, format, code = false }) => {
      const back = state().trace ? currentStep(state()) : 0;
      try {
        const { blob, frames } = await recordAnimation({
          from,
          to,
          size,
          fps,
          format,
          show,
          layout: (room) => store.dispatch({ type: "recording", size: room }),
          textAt: (step) => state().trace.model.compiled[step].text,
          codeAt: code ? (step) => codeLineText(codeOf(state().trace.model), state().trace.model.compiled[step]) : null,
          stage: document.getElementById("stage"),
          measure: true,
        });
        recorded = frames;
        return await base64Of(blob);
      } finally {
        show(back);
      }
    },
    /** What the last recordAnimation drew per frame: [{step, phase, lines (the equation,
     *  wrapped: joined, the step's text), scale (the stage's, 1: at its own size),
     *  cellFont (the smallest text of a drawn cell's number, px, in the page it drew),
     *  tags (the cells showing what the step added)}]. */
    recordedFrames: () => clone(recorded),
    /**
     * `convscope export handout.pdf`: the handout's pages (panels/handout.js) built for
     * steps (0-based), after those already built with `append`, ready to print; resolves
     * to the number of pages. The page returns to its step; the handout stays.
     */
    handout: async ({ steps, append = false }) => {
      const back = state().trace ? currentStep(state()) : 0;
      try {
        return await buildHandout({ steps, show, stage: document.getElementById("stage"), model: state().trace.model, title: handoutTitle(state()), append });
      } finally {
        show(back);
      }
    },
  };
}

/** A Blob's bytes in base64 (the command line reads them through the DevTools pipe). */
function base64Of(blob) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).slice(String(reader.result).indexOf(",") + 1));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}
