// ConvScope page: wiring. Event handlers only change `app`; one redraw reads it.

import { TraceModel, Cursor, carryStep, nextPhaseStart, previousPhaseStart, phaseIndexAt, replayCheck, cellName } from "./js/state.js";
import { Stage } from "./js/render.js";
import { SPEEDS, DEFAULT_SPEED, speedLabel, keyAction, KEY_SHEET, Ticker } from "./js/player.js";
import { encodeLesson, decodeLesson } from "./js/url.js";
import { streamTrace, fetchPresets, fetchPreset, fetchMeta, errorFields, ApiError } from "./js/api.js";
import { SetupEditors } from "./js/editors.js";
import { adoptMeta, defaultConfig, clone } from "./js/setup.js";
import { formatLong } from "./js/format.js";
import { drawPhaseMarks, fitPhaseMarks } from "./js/scrub.js";
import { exportJson, stagePng, download } from "./js/export.js";

const $ = (id) => document.getElementById(id);
const reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");

const app = {
  config: null,
  presetName: "",
  presets: [],
  model: null,
  cursor: null,
  step: -1, // the step asked for; the step shown is the cursor's (clamped to what arrived)
  playing: false,
  speedIndex: DEFAULT_SPEED,
  projector: false,
  allTensors: false, // false: tensors the current phase does not touch fold to their captions
  setupOpen: true, // the settings drawer
  stageFits: false,
  controller: null,
  runStartedAt: 0,
  firstStepDrawnAt: 0,
  frameTimes: [],
  lastNarrated: -2,
  lastPanelEvent: undefined,
  urlTimer: 0,
  debounce: 0,
};

const stage = new Stage($("stage"), { onReveal: () => requestRedraw() });
let editors = null; // built once the server has published its controls (start)
const ticker = new Ticker({ getSpeed: () => SPEEDS[app.speedIndex], onSteps: onTick });

// ---- running traces ------------------------------------------------------------------

function onConfigEdited(config, { immediate }) {
  app.config = config;
  setPreset("");
  clearTimeout(app.debounce);
  app.debouncing = true;
  drawStale();
  app.debounce = setTimeout(() => run(config), immediate ? 0 : 350);
}

/** Fetch and stream the trace of `config`; the previous trace stays until the header arrives. */
async function run(config, { step = null, push = true } = {}) {
  clearTimeout(app.debounce);
  app.debouncing = false;
  app.runError = "";
  app.awaitingHeader = true; // the stage shows the previous trace until this one's header
  if (app.controller) app.controller.abort();
  const controller = new AbortController();
  app.controller = controller;
  app.runStartedAt = performance.now();
  app.firstStepDrawnAt = 0;
  showProgress("Computing the trace…");
  let model = null;
  // the trace on screen before this run: put back if the stream fails after its header
  const previous = app.model ? { model: app.model, config: app.shownConfig, preset: app.shownPreset, step: current() } : null;
  try {
    await streamTrace(
      config,
      {
        onHeader(header) {
          if (controller.signal.aborted) return;
          const old = app.model;
          model = new TraceModel(header);
          const target =
            step != null ? Math.min(step, model.total - 1) : old ? carryStep(old.phases, old.total, app.step, model.phases, model.total) : 0;
          install(model, config, target, { push });
        },
        onEvents(events) {
          if (controller.signal.aborted || !model) return;
          model.addEvents(events);
          showProgress(`Streaming ${model.received} of ${model.total} steps…`);
          requestRedraw();
        },
        onEnd() {
          if (controller.signal.aborted || !model) return;
          showCheck(model);
          stage.forgetFits(); // every value has arrived: the widest number is known
          fitStage();
          prefitPhases();
        },
      },
      controller.signal,
    );
  } catch (err) {
    if (err.name === "AbortError" || controller.signal.aborted) return;
    const midStream = model !== null && app.model === model;
    if (midStream) {
      // a half trace is no lesson: back to the last good one, still with its step
      if (previous) restore(previous);
      else clearStage();
    }
    let fields;
    if (err instanceof ApiError) {
      fields = errorFields(err.detail);
      if (err.status === 413 || midStream) fields._ = err.message;
    } else {
      fields = { _: `The trace could not be loaded: ${err.message}` };
    }
    editors.showErrors(fields);
    app.runError = Object.values(fields).join("; ");
    drawStale();
    const what = midStream ? `The trace stopped after ${model.received} of ${model.total} steps: ${err.message}` : `Not run: ${err.message}`;
    narrate(what);
    if (midStream) app.pendingNarration = what; // said again with the restored step
    if (midStream || app.projector) toast(what);
  } finally {
    if (app.controller === controller) {
      app.controller = null;
      app.awaitingHeader = false;
      showProgress(null);
      drawStale();
    }
  }
}

/** Put back a trace that was on screen before a run that failed midway. */
function restore({ model, config, preset, step }) {
  pause();
  setPreset(preset ?? "");
  install(model, config, step, { complete: true });
}

function clearStage() {
  pause();
  app.model = null;
  app.cursor = null;
  stage.clear();
  $("eq-phase").textContent = "–";
  $("eq-loop").textContent = "";
  $("eq-text").textContent = "No trace: fix the setup and it runs again.";
  $("eq-writes").replaceChildren();
  $("eq-reads").textContent = "";
  setBadge("pending", "no trace", "");
  drawStale();
}

function install(model, config, target, { complete = false, push = false } = {}) {
  app.awaitingHeader = false;
  app.model = model;
  app.cursor = new Cursor(model);
  app.config = clone(config);
  app.shownConfig = clone(config); // the setup of the trace on screen
  app.step = target;
  app.lastPanelEvent = undefined;
  app.shownPreset = app.presetName;
  stage.build(model);
  editors.show(config);
  editors.showHeader(model.header);
  editors.showErrors({});
  drawStale();
  buildScrubber(model);
  // the legend names only the marks this trace's header uses
  const kinds = new Set(Object.values(model.tensors).flatMap((t) => (t.marks ? Array.from(t.marks.join("")) : [])));
  $("legend-pad").hidden = !kinds.has("p") && !kinds.has("g");
  $("legend-gap").hidden = !kinds.has("z");
  $("legend-unread").hidden = !kinds.has("u") && !kinds.has("n");
  if (complete && model.complete) showCheck(model);
  else setBadge("pending", "checking…", "The replay check runs when the whole trace has arrived.");
  writeUrl(true, { push });
  requestRedraw();
}

function showCheck(model) {
  // Two checks: this page replays every event's deltas and compares with the header;
  // the server verified the header's dx, dw and db against the forward pass.
  const server = model.header.check ?? null;
  const r = replayCheck(model);
  const err = r.maxError === 0 ? "0" : r.maxError.toExponential(1);
  const parts = [r.ok ? (r.maxError === 0 ? "replay-checked" : `replay-checked · max error ${err}`)
                      : `replay mismatch · max error ${err}`];
  let ok = r.ok;
  let title = "Replaying every event's deltas from zero rebuilds every tensor in the header (checked in this page).";
  if (server && Number.isFinite(server.max_rel_error)) {
    const verified = server.max_rel_error < 1e-8;
    ok = ok && verified;
    const rel = server.max_rel_error === 0 ? "0" : server.max_rel_error.toExponential(0);
    parts.push(verified ? `gradients verified to ${rel}` : `gradient mismatch ${rel}`);
    title += ` The server verified dx, dw and db with ${server.method}: largest relative error ${server.max_rel_error.toExponential(1)}.`;
  }
  setBadge(ok ? "ok" : "bad", parts.join(" · "), `${parts.join(" · ")}. ${title}`);
}

function setBadge(state, text, title) {
  app.badge = { state, text, title };
  drawStale();
}

/**
 * The badge, and the stage's banner when what is drawn is not what the form says: the
 * form holds an error (its own or the server's), or an edit not traced yet.
 */
function drawStale() {
  const problems = editors && editors.hasProblems;
  const why = app.runError || problems ? "the setup has an error" : app.debouncing || app.awaitingHeader ? "the new setup is not traced yet" : "";
  const stale = Boolean(why && app.model);
  const banner = $("stale");
  banner.hidden = !stale;
  if (stale) banner.textContent = `Showing the last good trace, not the form: ${why}.`;
  const b = $("badge");
  const { state, text, title } = app.badge ?? { state: "pending", text: "not checked yet", title: "" };
  b.dataset.state = stale ? "stale" : state;
  b.textContent = stale ? `last good trace, not the form · ${text}` : text;
  b.title = title;
}

function showProgress(text) {
  const p = $("progress");
  p.hidden = !text;
  if (text) $("progress-text").textContent = text;
}

// ---- drawing ---------------------------------------------------------------------

let redrawQueued = false;
function requestRedraw() {
  if (redrawQueued) return;
  redrawQueued = true;
  requestAnimationFrame(() => {
    redrawQueued = false;
    redraw();
  });
}

// Per-frame breakdown (bench/page.py --breakdown), off unless asked for: each redraw
// forces style and layout after each part of the frame and records the part's time with
// its layout (so frames take longer than without), the steps the frame covers, the
// cells it wrote per tensor and the slices content-visibility revealed since the last.
const breakdown = { on: false, rows: [], row: null, at: 0 };

function part(name) {
  const row = breakdown.row;
  if (!row) return;
  void document.body.offsetHeight;
  const t = performance.now();
  row[name] = (row[name] ?? 0) + t - breakdown.at;
  breakdown.at = t;
}

function redraw(cause = "request") {
  const t0 = performance.now();
  const model = app.model;
  if (!model) return;
  if (breakdown.on) {
    breakdown.row = { cause, from: app.cursor.step };
    breakdown.at = t0;
    stage.onPart = part;
    stage.writes = {};
  }
  const shown = app.cursor.seek(app.step);
  part("seek");
  // the phase's tensors in focus (the others fold to their captions, or hide on a projector)
  const pi = shown >= 0 ? phaseIndexAt(model.phases, shown) : -1;
  const focus = focusOf(model, pi);
  if (stage.setFocus(focus)) {
    part("fold");
    fitStage();
    part("fit");
  }
  const slow = SPEEDS[app.speedIndex] <= 8 || !app.playing;
  // Playing too fast to watch, the stage does not follow each event, and the slices
  // content-visibility skips are drawn as well: writing into a skipped slice lays
  // nothing out (the browser lays it out if it comes into view), whereas a slice left
  // undrawn would have every cell written since it was skipped to draw, at once, in
  // the frame after it comes into view (after each phase change: 700-1300 cells).
  const fast = app.playing && SPEEDS[app.speedIndex] > 12;
  stage.draw(
    { step: shown, event: app.cursor.event, values: app.cursor.values, counts: app.cursor.counts },
    { flash: slow && !reducedMotion.matches, skippedToo: fast },
  );
  // keep the event in view (at the next frame), except while playing too fast to watch it
  if (!fast) stage.followEvent();
  drawPanel(shown);
  part("panel");
  drawTransport(shown);
  part("transport");
  if (app.measureLayout) void document.body.offsetHeight; // include style and layout in the frame time
  if (shown >= 0 && !app.firstStepDrawnAt) app.firstStepDrawnAt = performance.now();
  const dt = performance.now() - t0;
  if (breakdown.row) {
    Object.assign(breakdown.row, { to: shown, total: dt, focus: stage.focusKey, writes: stage.writes, revealed: stage.revealed });
    breakdown.rows.push(breakdown.row);
    breakdown.row = null;
    stage.onPart = null;
    stage.revealed = 0;
  }
  app.frameTimes.push(dt);
  if (app.frameTimes.length > 2000) app.frameTimes.splice(0, 1000);
}

function fmtBox(box) {
  const parts = box.start.map((s, a) => {
    const n = Math.ceil((box.stop[a] - s) / box.step[a]);
    if (n === 1) return String(s);
    return box.step[a] === 1 ? `${s}:${box.stop[a]}` : `${s}:${box.stop[a]}:${box.step[a]}`;
  });
  return `${box.tensor}[${parts.join(",")}]`;
}

function drawPanel(shown) {
  const ev = app.cursor.event;
  if (ev === app.lastPanelEvent) return;
  app.lastPanelEvent = ev;
  const model = app.model;
  if (!ev) {
    $("eq-phase").textContent = "–";
    $("eq-loop").textContent = "";
    $("eq-text").textContent = model.total ? "Waiting for the first step…" : "This trace has no steps.";
    $("eq-writes").replaceChildren();
    $("eq-reads").textContent = "";
    return;
  }
  $("eq-phase").textContent = ev.phase;
  $("eq-loop").textContent = Object.entries(ev.loop).map(([k, v]) => `${k}=${v}`).join("  ");
  $("eq-text").textContent = ev.text;
  const writes = [];
  let count = 0;
  for (const w of ev.writes) {
    const meta = model.tensors[w.tensor];
    for (let i = 0; i < w.idx.length; i++) {
      if (count++ >= 6) continue;
      const span = document.createElement("span");
      span.className = "w";
      span.textContent = `${cellName(meta, w.idx[i])} = ${formatLong(w.value[i])}`;
      writes.push(span);
    }
  }
  if (count > 6) writes.push(document.createTextNode(`… ${count - 6} more cells`));
  $("eq-writes").replaceChildren(...writes);
  // (projector mode leaves out a long list: the written cells show their values on the stage)
  $("equation").classList.toggle("many-writes", count > 4);
  $("eq-reads").textContent = ev.reads.length ? `reads ${ev.reads.map((r) => fmtBox(r.box)).join(", ")}` : "";
  if (!app.playing || SPEEDS[app.speedIndex] <= 2) {
    const before = app.pendingNarration ? `${app.pendingNarration}. ` : "";
    app.pendingNarration = "";
    narrate(`${before}Step ${shown + 1} of ${model.total}, ${ev.phase}: ${ev.text}`);
  }
}

function narrate(text) {
  $("narration").textContent = text;
}

function drawTransport(shown) {
  const model = app.model;
  const total = model.total;
  const sc = $("scrubber");
  if (document.activeElement !== sc || !app.scrubbing) sc.value = String(Math.max(0, shown));
  $("scrub-loaded").style.width = `${total ? (100 * model.received) / total : 0}%`;
  $("step-counter").textContent = `step ${shown + 1} / ${total}`;
  sc.setAttribute("aria-valuetext", `step ${shown + 1} of ${total}${shown >= 0 && app.cursor.event ? `, ${app.cursor.event.phase}` : ""}`);
  const play = $("btn-play");
  const label = app.playing ? "❚❚ Pause" : "▶ Play";
  if (play.textContent !== label) {
    play.textContent = label;
    play.setAttribute("aria-label", app.playing ? "Pause" : "Play");
  }
}

function buildScrubber(model) {
  $("scrubber").max = String(Math.max(0, model.total - 1));
  drawPhaseMarks($("scrub-phases"), model.phases, model.total);
}

// ---- moving ------------------------------------------------------------------------

function lastReachable() {
  return app.model ? Math.max(0, app.model.received - 1) : 0;
}

/** The step in effect: the one asked for, within what has arrived (drawn at the next frame). */
function current() {
  return Math.max(0, Math.min(app.step, lastReachable()));
}

function setStep(t, { keepPlaying = false } = {}) {
  if (!app.model) return;
  if (!keepPlaying) pause();
  app.step = Math.max(0, Math.min(lastReachable(), t));
  writeUrl(false);
  requestRedraw();
}

function onTick(steps) {
  if (!app.model) return;
  const shown = app.cursor.step;
  const next = shown + steps;
  if (next >= lastReachable()) {
    app.step = lastReachable();
    if (app.model.complete) pause();
  } else app.step = next;
  redraw("tick");
  writeUrl(false);
}

function play() {
  if (!app.model || app.playing) return;
  if (app.cursor.step >= app.model.total - 1) app.step = 0; // play again from the start
  app.playing = true;
  ticker.start();
  requestRedraw();
}

function pause() {
  if (!app.playing) return;
  app.playing = false;
  ticker.stop();
  app.lastPanelEvent = undefined; // narrate the step we stopped on
  writeUrl(true);
  requestRedraw();
}

function setSpeed(index) {
  app.speedIndex = Math.max(0, Math.min(SPEEDS.length - 1, index));
  $("speed").value = String(app.speedIndex);
  writeUrl(false);
}

const actions = {
  toggle: () => (app.playing ? pause() : play()),
  next: () => setStep(current() + 1),
  prev: () => setStep(current() - 1),
  first: () => setStep(0),
  last: () => setStep(app.model.total - 1),
  nextPhase: () => {
    const s = nextPhaseStart(app.model.phases, current());
    if (s != null) setStep(s);
  },
  prevPhase: () => {
    const s = previousPhaseStart(app.model.phases, current());
    if (s != null) setStep(s);
  },
  faster: () => setSpeed(app.speedIndex + 1),
  slower: () => setSpeed(app.speedIndex - 1),
  fullscreen: () => {
    if (document.fullscreenElement) document.exitFullscreen().catch(() => {});
    else if (document.documentElement.requestFullscreen) {
      document.documentElement.requestFullscreen().catch(() => toast("Full screen is not available here."));
    }
  },
  projector: () => setProjector(!app.projector),
  keys: () => {
    const d = $("keys-dialog");
    if (d.open) d.close();
    else d.showModal();
  },
};

function doAction(name) {
  if (!actions[name]) return;
  if (!app.model && !["projector", "keys", "fullscreen", "faster", "slower"].includes(name)) return;
  actions[name]();
}

function setProjector(on) {
  app.projector = on;
  document.body.classList.toggle("projector", on);
  document.documentElement.classList.toggle("projector", on);
  $("projector").setAttribute("aria-pressed", String(on));
  stage.revealAll(); // projector draws every slice (no content-visibility skipping)
  stage.forgetFits();
  fitStage();
  prefitPhases();
  writeUrl(true);
  requestRedraw();
}

/** Show every tensor in full (on) or fold those the current phase does not touch. */
function setAllTensors(on) {
  app.allTensors = on;
  $("all-tensors").setAttribute("aria-pressed", String(on));
  prefitPhases();
  writeUrl(true);
  requestRedraw();
}

/** The figures in focus at a step of phase `pi` (-1: none): the phase's tensors (the
 *  others fold to their captions, or hide on a projector), or null for all. */
function focusOf(model, pi) {
  return pi >= 0 && model.touched[pi].size && (app.projector || !app.allTensors) ? model.touched[pi] : null;
}

let prefitRound = 0;
// a long idle period (no frame due for 40 ms): fitting one phase lays the stage out a
// few times (30-60 ms here), which would delay a frame while playing
const whenIdle = window.requestIdleCallback
  ? (f) => requestIdleCallback((d) => (d.timeRemaining() >= 40 ? f() : whenIdle(f)))
  : (f) => setTimeout(f, 50);

/**
 * Once every step has arrived (and again when the sizes are forgotten), find the cell
 * size of every phase's figures in idle time, one phase per idle callback, so that a
 * phase change while playing finds its size known. Only on a desktop whose stage
 * scrolls inside itself: there the stage's room is the same at every step, so a size
 * does not depend on where it is found. (On a projector the step's text panel grows
 * and shrinks with the text, and the stage with it: a size found at another step's
 * text could be too large at this one, so a phase's size is found when it is shown.)
 */
function prefitPhases() {
  const round = ++prefitRound; // (a round still running stops)
  const model = app.model;
  if (!model || !model.complete || !app.stageFits || app.projector) return;
  let pi = 0;
  const next = () => {
    if (round !== prefitRound || app.model !== model) return;
    while (pi < model.phases.length && !stage.prefit(focusOf(model, pi), fitStage)) pi++;
    pi++;
    if (pi < model.phases.length) whenIdle(next);
  };
  whenIdle(next);
}

/**
 * Cell size: on a projector, and on a desktop whose stage scrolls inside itself (the
 * style sheet says so with --stage-fit: 1), the largest size at which the figures on
 * show fit the stage; elsewhere the style sheet's.
 */
function fitStage() {
  if (app.projector) stage.fitCells(true);
  else if (app.stageFits) stage.fitCells(true, { fontPx: smallestCellText(window.innerWidth), maxCell: 72, fontRatio: 0.4 });
  else stage.fitCells(false);
}

/** The smallest cell text (px) on a desktop of `width` px: 12 on a small projector or
 *  laptop, 14 from 1300 px on. */
function smallestCellText(width) {
  return width >= 1300 ? 14 : 12;
}

function readStageFits() {
  app.stageFits = getComputedStyle(document.documentElement).getPropertyValue("--stage-fit").trim() === "1";
}

// ---- the URL -----------------------------------------------------------------------

/** The step the address holds: the one asked for until the trace has arrived (a reload
 *  asks for a step that has not streamed in yet), then the one shown. */
function urlStep() {
  if (!app.model) return Math.max(0, app.step);
  return app.model.complete ? current() : Math.max(0, app.step);
}

/** Write the place into the address: `push` for a new setup (back/forward move
 *  between setups), a replacement for a new step or view setting. */
function writeUrl(now, { push = false } = {}) {
  if (!app.config) return;
  clearTimeout(app.urlTimer);
  const write = () => {
    const hash = encodeLesson({
      config: app.config, lesson: app.presetName, step: urlStep(), speed: app.speedIndex,
      projector: app.projector, allTensors: app.allTensors,
    });
    if (location.hash === hash) return;
    try {
      if (push && location.hash) history.pushState(null, "", hash);
      else history.replaceState(null, "", hash);
    } catch {
      // a page that cannot keep its URL (a lesson in a notebook's iframe srcdoc) still plays
    }
  };
  if (now) write();
  else app.urlTimer = setTimeout(write, app.playing ? 1000 : 150);
}

function readUrl() {
  try {
    return decodeLesson(location.hash);
  } catch (err) {
    toast(err.message);
    return decodeLesson("");
  }
}

/** Go to the place the address names (a reopened link, back/forward, an edited address). */
async function openPlace(place, { first = false } = {}) {
  if (place.speed != null) setSpeed(place.speed);
  if (place.projector !== app.projector) setProjector(place.projector);
  if (place.allTensors !== app.allTensors) setAllTensors(place.allTensors);
  const step = place.step ?? 0;
  if (place.lesson) {
    if (place.lesson !== app.presetName || first) await choosePreset(place.lesson, { step, push: false });
    else if (app.cursor && step !== current()) setStep(step);
  } else if (place.config) {
    if (first || app.presetName || JSON.stringify(place.config) !== JSON.stringify(app.config)) {
      setPreset("");
      app.config = place.config;
      editors.show(place.config, { fresh: true });
      await run(place.config, { step });
    } else if (app.cursor && step !== current()) setStep(step);
  }
}

// ---- presets -----------------------------------------------------------------------

function setPreset(name) {
  app.presetName = name;
  $("preset").value = name;
  const p = app.presets.find((q) => q.name === name);
  // the lesson's title in full, then its whole description (the menu may be narrower)
  const line = $("preset-sentence");
  line.replaceChildren();
  if (p) {
    const title = document.createElement("strong");
    title.className = "preset-title";
    title.textContent = p.title;
    line.append(title, ` — ${p.sentence}`);
  }
}

async function loadPresets() {
  try {
    app.presets = await fetchPresets();
  } catch (err) {
    toast(`Presets could not be loaded: ${err.message}`);
    return;
  }
  const sel = $("preset");
  for (const p of app.presets) sel.append(new Option(p.title, p.name));
}

async function choosePreset(name, { step = 0, push = true } = {}) {
  if (!name) {
    setPreset("");
    return;
  }
  app.loadingPreset = true;
  try {
    const p = await fetchPreset(name);
    setPreset(name);
    app.config = p.config;
    editors.show(p.config, { fresh: true });
    pause();
    await run(p.config, { step, push });
  } catch (err) {
    toast(`Preset ${name}: ${err.message}`);
  } finally {
    app.loadingPreset = false;
  }
}

// ---- small UI helpers ----------------------------------------------------------------

const SETUP_KEY = "convscope.setup";

/** Open or close the settings drawer; `remember`: the user's choice, kept for next time. */
function setSetupOpen(open, { remember = false } = {}) {
  app.setupOpen = open;
  document.body.classList.toggle("setup-closed", !open);
  $("toggle-setup").setAttribute("aria-expanded", String(open));
  if (remember) {
    try {
      localStorage.setItem(SETUP_KEY, open ? "open" : "closed");
    } catch {
      /* storage refused: the choice lasts this visit */
    }
  }
  readStageFits();
  stage.forgetFits();
  fitStage();
  requestRedraw();
}

/** The drawer at start: as the user last left it, else open only on wide screens. */
function initialSetupOpen() {
  let kept = null;
  try {
    kept = localStorage.getItem(SETUP_KEY);
  } catch {
    kept = null;
  }
  return kept ? kept === "open" : window.innerWidth >= 1440;
}

/** Focus the stage (a pick in a menu, Escape in a field): the keys drive the player. */
function giveKeysToStage() {
  if (document.activeElement && document.activeElement.blur) document.activeElement.blur();
  $("stage").focus({ preventScroll: true });
}

let toastTimer = 0;
function toast(text) {
  const t = $("toast");
  t.textContent = text;
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (t.hidden = true), 3500);
}

async function copyLink() {
  writeUrl(true);
  try {
    await navigator.clipboard.writeText(location.href);
    toast("Link copied: it reopens this lesson at this step.");
  } catch {
    toast("Copy the address bar: it holds this lesson and step.");
  }
}

// ---- wiring ------------------------------------------------------------------------

function wire() {
  const speed = $("speed");
  SPEEDS.forEach((_, i) => speed.append(new Option(speedLabel(i), String(i))));
  speed.value = String(app.speedIndex);
  speed.addEventListener("change", () => {
    setSpeed(Number(speed.value));
    giveKeysToStage();
  });
  $("btn-play").addEventListener("click", () => doAction("toggle"));
  $("btn-next").addEventListener("click", () => doAction("next"));
  $("btn-prev").addEventListener("click", () => doAction("prev"));
  $("btn-first").addEventListener("click", () => doAction("first"));
  $("btn-last").addEventListener("click", () => doAction("last"));
  $("btn-next-phase").addEventListener("click", () => doAction("nextPhase"));
  $("btn-prev-phase").addEventListener("click", () => doAction("prevPhase"));
  const sc = $("scrubber");
  sc.addEventListener("input", () => {
    app.scrubbing = true;
    setStep(Number(sc.value));
  });
  sc.addEventListener("change", () => (app.scrubbing = false));
  $("preset").addEventListener("change", (e) => {
    choosePreset(e.target.value);
    giveKeysToStage();
  });
  $("projector").addEventListener("click", () => doAction("projector"));
  $("all-tensors").addEventListener("click", () => setAllTensors(!app.allTensors));
  $("toggle-setup").addEventListener("click", () => setSetupOpen(!app.setupOpen, { remember: true }));
  $("show-keys").addEventListener("click", () => doAction("keys"));
  $("copy-link").addEventListener("click", copyLink);
  $("apply").addEventListener("click", () => {
    const config = editors.config ?? app.config;
    if (config) run(config);
  });
  $("export-json").addEventListener("click", () => {
    if (app.model) exportJson(app.model.toDocument());
  });
  $("export-png").addEventListener("click", async () => {
    if (!app.model) return;
    // the picture includes slices scrolled out of view, which content-visibility lets
    // the page skip drawing: draw them first
    stage.revealAll();
    redraw();
    const blob = await stagePng($("stage"), window.devicePixelRatio || 1);
    download(blob, `convscope-step-${app.cursor.step + 1}.png`);
  });
  const list = $("keys-list");
  for (const [k, what] of KEY_SHEET) {
    const dt = document.createElement("dt");
    dt.textContent = k;
    const dd = document.createElement("dd");
    dd.textContent = what;
    list.append(dt, dd);
  }
  // capture phase: a focused select, range or button never sees the player's keys
  window.addEventListener(
    "keydown",
    (e) => {
      if ($("keys-dialog").open && e.key !== "?") return;
      const action = keyAction(e);
      if (!action) return;
      e.preventDefault();
      e.stopPropagation();
      if (action === "leaveField") giveKeysToStage();
      else doAction(action);
    },
    true,
  );
  // the stage's room changed (window, drawer, a lesson's sentence, projector): the cell
  // sizes found for the old room are forgotten and found again before the next paint
  let room = "";
  new ResizeObserver(() => {
    readStageFits();
    const c = $("stage");
    const now = `${c.clientWidth}x${app.stageFits || app.projector ? c.clientHeight : 0}`;
    if (now === room) return;
    room = now;
    stage.forgetFits();
    fitStage();
    prefitPhases();
  }).observe($("stage"));
  new ResizeObserver(() => fitPhaseMarks($("scrub-phases"))).observe($("scrub-phases"));
  // back/forward between setups, and an address edited by hand
  window.addEventListener("popstate", () => openPlace(readUrl()));
}

async function start() {
  const presetsLoaded = loadPresets();
  try {
    adoptMeta(await fetchMeta());
  } catch (err) {
    $("eq-text").textContent = `The page could not load its controls from the server: ${err.message}`;
    return;
  }
  editors = new SetupEditors($("setup-form"), { onChange: onConfigEdited, onProblem: drawStale });
  wire();
  setSetupOpen(initialSetupOpen());
  const place = readUrl();
  if (place.lesson || place.config) {
    await presetsLoaded; // (the lesson menu and its sentence need the list)
    await openPlace(place, { first: true });
    return;
  }
  if (place.projector) setProjector(true);
  await presetsLoaded;
  const first = app.presets.find((p) => p.name === "d2l") ?? app.presets[0];
  if (first) await choosePreset(first.name, { push: false });
  else {
    app.config = defaultConfig();
    editors.show(app.config, { fresh: true });
    await run(app.config, { step: 0, push: false });
  }
}

// A small handle for tests and benchmarks: read-only views of the state, and the same
// actions the keys trigger.
window.convscope = {
  get step() {
    return app.model && app.model.received ? current() : -1;
  },
  get shownStep() {
    return app.cursor ? app.cursor.step : -1;
  },
  get total() {
    return app.model ? app.model.total : 0;
  },
  get received() {
    return app.model ? app.model.received : 0;
  },
  get complete() {
    return Boolean(app.model && app.model.complete && !app.controller && !app.debouncing && !app.loadingPreset);
  },
  get playing() {
    return app.playing;
  },
  get speed() {
    return SPEEDS[app.speedIndex];
  },
  get preset() {
    return app.presetName;
  },
  get config() {
    return clone(app.config);
  },
  document: () => (app.model ? app.model.toDocument() : null),
  frameTimes: () => app.frameTimes.slice(),
  resetFrameTimes: () => (app.frameTimes = []),
  followTimes: () => stage.followTimes.slice(),
  resetFollowTimes: () => (stage.followTimes = []),
  timings: () => ({ runStartedAt: app.runStartedAt, firstStepDrawnAt: app.firstStepDrawnAt }),
  seek: (t) => {
    setStep(t);
    redraw();
    return app.cursor.step;
  },
  setSpeedIndex: setSpeed,
  measureLayout: (on) => (app.measureLayout = Boolean(on)),
  breakdown: (on) => {
    breakdown.on = Boolean(on);
    breakdown.rows = [];
    stage.revealed = 0;
  },
  breakdownRows: () => breakdown.rows.slice(),
  play,
  pause,
};

start();
