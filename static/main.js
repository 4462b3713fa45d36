// ConvScope page: wiring. The store (js/model/page-state.js) owns every changing fact; input
// handlers dispatch actions; effects (fetching a trace, the ticker, the address) dispatch
// what they learn; one redraw per frame draws frameOf(trace, step, view, viewport).

import { TraceModel, carryStep, replayCheck, phaseIndexAt } from "./js/model/trace-model.js";
import { createStore } from "./js/model/store.js";
import { initialState, reduce, currentStep, placeOf, classPlace, isSettled } from "./js/model/page-state.js";
import { frameOf } from "./js/model/frame.js";
import { Stage } from "./js/stage/stage.js";
import { Chrome } from "./js/panels/chrome.js";
import { Inspector } from "./js/panels/inspector.js";
import { Classroom } from "./js/io/classroom.js";
import { adoptTeacherToken } from "./js/io/teacher-token.js";
import { AnimationDialog } from "./js/panels/animation-dialog.js";
import { SPEEDS, speedLabel, keyAction, KEY_SHEET, Ticker } from "./js/model/player.js";
import { encodeLesson, decodeLesson } from "./js/model/url-fragment.js";
import { streamTrace, fetchPresets, fetchPreset, fetchMistakes, fetchMeta, fetchLessonFile, errorFields, ApiError } from "./js/io/api.js";
import { mistakeLessons } from "./js/model/lab.js";
import { LabView } from "./js/panels/lab-view.js";
import { CompareDialog } from "./js/panels/compare-dialog.js";
import { Hover } from "./js/stage/hover.js";
import { StageLines } from "./js/stage/lines.js";
import { cellKey } from "./js/stage/cell-keys.js";
import { embeddedLesson, embeddedStep } from "./js/io/lesson-file.js";
import { SetupEditors } from "./js/panels/setup-editors.js";
import { adoptMeta, defaultConfig, clone } from "./js/model/trace-config.js";
import { drawPhaseMarks, fitPhaseMarks } from "./js/panels/phase-marks.js";
import { exportJson, stagePng, download } from "./js/io/export.js";

const $ = (id) => document.getElementById(id);
const reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");
const SETUP_KEY = "convscope.setup";

const store = createStore(reduce, initialState({ setupOpen: initialSetupOpen() }));
const dispatch = (action) => store.dispatch(action);
const stage = new Stage($("stage"));
const chrome = new Chrome();
const inspector = new Inspector({
  onJump: (step) => dispatch({ type: "goto", step }),
  onClose: () => dispatch({ type: "inspect", tensor: null }),
});
const ticker = new Ticker({ getSpeed: () => SPEEDS[store.state.speedIndex], onSteps: (steps) => dispatch({ type: "tick", steps }) });
const classroom = new Classroom({
  // a student's page takes the teacher's place (its own projector mode stays)
  onState: (place) => openPlace({ ...place, speed: null, projector: store.state.projector }),
  onChange: (follow) => dispatch({ type: "follow", follow }),
});
const animations = new AnimationDialog({
  // the current phase, by default
  range: () => {
    const state = store.state;
    const model = state.trace.model;
    const here = currentStep(state);
    const p = model.phases[phaseIndexAt(model.phases, here)] ?? { start: 0, stop: model.total };
    return { from: p.start, to: p.stop - 1, total: model.total };
  },
  show: (step) => {
    dispatch({ type: "goto", step });
    stage.revealAll(); // (slices scrolled away are drawn too)
    redraw("export");
  },
  here: () => currentStep(store.state),
  stage: $("stage"),
});
const cellOf = (tensor, flat) => stage.cellOf(tensor, flat);
const lab = new LabView({
  cellOf,
  onDivergence: () => doAction("divergence"),
  onCompare: () => compareDialog.open(),
  onStopComparing: () => setCompare(null),
});
const compareDialog = new CompareDialog({
  tensors: () => (store.state.trace ? store.state.trace.model.tensors : null),
  onApply: (compare) => setCompare(compare),
  why: () =>
    !store.state.trace
      ? "There is no trace to compare with yet."
      : store.state.config && store.state.config.mistake
        ? "A mistake lesson already compares the mistaken code with the truth: pick a lesson or set up your own case to compare your numbers."
        : "",
});
const hover = new Hover($("stage"), cellOf, () => (store.state.trace ? { model: store.state.trace.model, step: currentStep(store.state) } : null));
const lines = new StageLines($("stage"), cellOf);
let editors = null; // built once the server has published its controls (start)
let controller = null; // the running trace request
let debounce = 0;
let metrics = null; // the style sheet's sizes the stage layout needs (measured per trace and mode)
let pendingNarration = ""; // said with the next step drawn (a trace that stopped midway)
/** Hooks that js/io/debug.js (loaded on ?debug only) sets: frame timing for tests and benchmarks. */
const probe = {
  onFrame: null,
  part: null,
  measureLayout: false,
  runStartedAt: 0,
  firstStepDrawnAt: 0,
  /** onFrame(ms, frame) after each frame drawn; part(name, start) for the breakdown. */
  hook({ onFrame = this.onFrame, part = this.part, measureLayout = this.measureLayout }) {
    Object.assign(this, { onFrame, part, measureLayout });
  },
};

// ---- effects of a change of state ------------------------------------------------------

store.subscribe((state, prev, action) => {
  if (state.playing !== prev.playing) {
    if (state.playing) ticker.start();
    else {
      ticker.stop();
      chrome.renarrate(); // narrate the step we stopped on
    }
  }
  if (state.projector !== prev.projector || state.setupOpen !== prev.setupOpen) {
    chrome.drawModes(state);
    metrics = null; // another style sheet's sizes
    stage.invalidateGeometry(); // (every figure changes size: what is in view is read again)
  }
  if (state.allTensors !== prev.allTensors || state.speedIndex !== prev.speedIndex) chrome.drawModes(state);
  // a cell's story needs the whole trace: drawn once it has arrived
  if (state.inspect !== prev.inspect || state.trace !== prev.trace) {
    const model = state.trace && state.trace.complete ? state.trace.model : null;
    if (!state.inspect || model) inspector.draw(model, state.inspect);
  }
  if (state.follow !== prev.follow) chrome.drawFollow(state);
  // a teacher's page sends its place to the class
  if (state.follow && state.follow.role === "teacher") {
    const place = JSON.stringify(classPlace(state));
    // a new place, or a session just opened or resumed (not every change of the bar's
    // facts: a count or a trouble message must not send the place again)
    const began = !prev.follow || prev.follow.role !== "teacher";
    if (place !== JSON.stringify(classPlace(prev)) || began) classroom.publish(classPlace(state));
  }
  if (state.formProblems !== prev.formProblems || state.runError !== prev.runError || state.run !== prev.run || state.badge !== prev.badge || state.trace !== prev.trace) chrome.drawBadge(state);
  const place = placeOf(state);
  const before = placeOf(prev);
  if (action.type === "header") writeUrl(true, { push: action.push });
  else if (state.playing !== prev.playing || place.projector !== before.projector || place.allTensors !== before.allTensors) writeUrl(true);
  else if (place.step !== before.step || place.speed !== before.speed) writeUrl(false);
  // the ticker runs at the start of a frame: its step is drawn in that frame
  if (action.type === "tick") redraw("tick");
  else requestRedraw();
});

// ---- running traces ------------------------------------------------------------------

function onConfigEdited(config, { immediate }) {
  breakAwayIfFollowing(); // (a student who edits the setup explores on their own)
  dispatch({ type: "edited", config });
  clearTimeout(debounce);
  debounce = setTimeout(() => run(config, { typed: true }), immediate ? 0 : 350);
}

function checkBadge(model) {
  // Two checks: this page replays every event's deltas and compares with the header;
  // the server verified the header's dx, dw and db against the forward pass.
  const server = model.header.check ?? null;
  const r = replayCheck(model);
  const err = r.maxError === 0 ? "0" : r.maxError.toExponential(1);
  const parts = [r.ok ? (r.maxError === 0 ? "replay-checked" : `replay-checked · max error ${err}`) : `replay mismatch · max error ${err}`];
  let ok = r.ok;
  let title = "Replaying every event's deltas from zero rebuilds every tensor in the header (checked in this page).";
  if (server && Number.isFinite(server.max_rel_error)) {
    const verified = server.max_rel_error < 1e-8;
    ok = ok && verified;
    const rel = server.max_rel_error === 0 ? "0" : server.max_rel_error.toExponential(0);
    parts.push(verified ? `gradients verified to ${rel}` : `gradient mismatch ${rel}`);
    title += ` The server verified dx, dw and db with ${server.method}: largest relative error ${server.max_rel_error.toExponential(1)}.`;
  }
  const mistake = Boolean(model.header.mistake);
  if (mistake) {
    // the replay holds for what the mistaken code computes; its results are not the truth's
    parts.unshift("mistaken code");
    title += " This is the mistaken code's trace: the lab bar and the marked cells say where it differs from the truth.";
  }
  return { state: !ok ? "bad" : mistake ? "lab" : "ok", text: parts.join(" · "), title: `${parts.join(" · ")}. ${title}` };
}

/** Fetch and stream the trace of `config`; the previous trace stays until the header
 *  arrives. typed: the setup is what the user typed (kept in the form if the run fails). */
async function run(config, { step = null, push = true, typed = false } = {}) {
  clearTimeout(debounce);
  if (controller) controller.abort();
  const mine = new AbortController();
  controller = mine;
  dispatch({ type: "runStarted" });
  probe.runStartedAt = performance.now();
  probe.firstStepDrawnAt = 0;
  let model = null;
  const before = store.state; // the trace on screen: put back if the stream fails after its header
  const lesson = before.lesson;
  try {
    await streamTrace(
      config,
      {
        onHeader(header) {
          if (mine.signal.aborted) return;
          model = new TraceModel(header);
          const old = store.state.trace;
          const target =
            step != null ? Math.min(step, model.total - 1) : old ? carryStep(old.model.phases, old.model.total, store.state.step, model.phases, model.total) : 0;
          editors.show(config);
          editors.showHeader(header);
          editors.showErrors({});
          buildScrubber(model);
          dispatch({ type: "header", model, config: clone(config), lesson, step: target, push });
        },
        onEvents(events) {
          if (mine.signal.aborted || !model) return;
          model.addEvents(events);
          dispatch({ type: "events", model });
        },
        onEnd(end) {
          if (mine.signal.aborted || !model) return;
          model.addEnd(end);
          dispatch({ type: "checked", badge: checkBadge(model) });
        },
      },
      mine.signal,
    );
  } catch (err) {
    if (err.name === "AbortError" || mine.signal.aborted) return;
    const midStream = model !== null && store.state.trace?.model === model;
    let fields;
    if (err instanceof ApiError) {
      fields = errorFields(err.detail);
      if (err.status === 413 || midStream) fields._ = err.message;
    } else fields = { _: `The trace could not be loaded: ${err.message}` };
    // a half trace is no lesson: back to the last good one, still at its step
    const restore = midStream && before.trace ? { trace: before.trace, step: currentStep(before), badge: before.badge } : null;
    // a lesson picked or a link opened goes back with its trace; a typed setup stays typed
    if (restore && !typed) {
      Object.assign(restore, { config: before.trace.config, lesson: before.trace.lesson });
      editors.show(restore.config, { fresh: true });
    }
    editors.showErrors(fields);
    dispatch({ type: "runFailed", message: Object.values(fields).join("; "), restore, clear: midStream && !before.trace });
    if (restore) buildScrubber(restore.trace.model);
    const what = midStream ? `The trace stopped after ${model.received} of ${model.total} steps: ${err.message}` : `Not run: ${err.message}`;
    chrome.narrate(what);
    if (midStream) pendingNarration = what; // said again with the restored step
    if (midStream || store.state.projector) toast(what);
  } finally {
    if (controller === mine) {
      controller = null;
      dispatch({ type: "runDone" });
    }
  }
}

function buildScrubber(model) {
  $("scrubber").max = String(Math.max(0, model.total - 1));
  drawPhaseMarks($("scrub-phases"), model.phases, model.total);
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

/** The view settings and the viewport a frame is drawn for. */
function viewOf(state) {
  return { projector: state.projector, allTensors: state.allTensors, fits: state.fits, playing: state.playing };
}

function redraw(cause = "request") {
  const t0 = performance.now();
  const state = store.state;
  chrome.drawLesson(state);
  chrome.drawProgress(state);
  const trace = state.trace;
  if (!trace) {
    lab.draw(null, -1, null);
    lines.draw(null, -1, false);
    if (stage.model) {
      stage.clear();
      chrome.drawNoTrace();
      chrome.drawLegend(null);
    }
    return;
  }
  if (stage.model !== trace.model) {
    stage.build(trace.model);
    chrome.drawLegend(trace.model);
    chrome.renarrate();
    metrics = null;
  }
  if (!metrics) metrics = stage.measureMetrics();
  probe.part?.("start", { cause, from: stage.lastStep ?? -1 });
  const frame = frameOf(trace, state.step, viewOf(state), { width: window.innerWidth, room: state.room }, metrics);
  probe.part?.("seek");
  if (stage.setFocus(frame.focus)) probe.part?.("fold");
  stage.applyLayout(frame.layout);
  probe.part?.("fit");
  const speed = SPEEDS[state.speedIndex];
  // Playing too fast to watch, the stage does not follow each event. The written cells
  // flash when one step was taken (a step, a play slow enough to watch), not after a
  // jump: there is no "just" to show then, and the flash costs the jump's frame.
  const fast = state.playing && speed > 12;
  stage.draw(frame, { flash: (speed <= 8 || !state.playing) && !reducedMotion.matches, changes: !fast });
  if (!fast) stage.followEvent();
  lab.draw(trace.model, frame.step, trace.config.compare);
  if (!state.playing) hover.follow();
  // (after this frame, from its layout; not on a phone's stacked stage, where they would
  // cross the figures between)
  lines.draw(trace.model, frame.step, state.fits && !(state.playing && speed > 2));
  const said = chrome.drawPanel(frame, state, pendingNarration);
  if (said) pendingNarration = "";
  probe.part?.("panel");
  chrome.drawTransport(frame, state);
  probe.part?.("transport");
  if (probe.measureLayout) void document.body.offsetHeight; // include style and layout in the frame time
  if (frame.step >= 0 && !probe.firstStepDrawnAt) probe.firstStepDrawnAt = performance.now();
  probe.onFrame?.(performance.now() - t0, frame);
}

// ---- the address ---------------------------------------------------------------------

let urlTimer = 0;
/** Write the place into the address: `push` for a new setup (back/forward move between
 *  setups), a replacement for a new step or view setting. */
function writeUrl(now, { push = false } = {}) {
  if (!store.state.config) return;
  clearTimeout(urlTimer);
  const write = () => {
    const hash = encodeLesson(placeOf(store.state));
    if (location.hash === hash) return;
    try {
      if (push && location.hash) history.pushState(null, "", `${location.search}${hash}`);
      else history.replaceState(null, "", `${location.search}${hash}`);
    } catch {
      // a page that cannot keep its URL (a lesson in a notebook's iframe srcdoc) still plays
    }
  };
  if (now) write();
  else urlTimer = setTimeout(write, store.state.playing ? 1000 : 150);
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
  const state = store.state;
  if (place.speed != null) dispatch({ type: "speed", index: place.speed });
  dispatch({ type: "projector", on: place.projector });
  dispatch({ type: "allTensors", on: place.allTensors });
  const step = place.step ?? 0;
  const sameStep = () => state.trace && step === currentStep(store.state);
  if (place.lesson) {
    if (place.lesson !== state.lesson || first) await openLesson(place.lesson, { step, push: false });
    else if (!sameStep()) dispatch({ type: "goto", step });
  } else if (place.config) {
    if (first || state.lesson || JSON.stringify(place.config) !== JSON.stringify(state.config)) {
      dispatch({ type: "customOpened", config: place.config });
      editors.show(place.config, { fresh: true });
      await run(place.config, { step, push: false });
    } else if (!sameStep()) dispatch({ type: "goto", step });
  }
}

// ---- lessons -------------------------------------------------------------------------

async function loadLessons() {
  const [presets, mistakes] = await Promise.allSettled([fetchPresets(), fetchMistakes()]);
  if (presets.status === "rejected") toast(`Presets could not be loaded: ${presets.reason.message}`);
  else if (mistakes.status === "rejected") toast(`The mistakes lab could not be loaded: ${mistakes.reason.message}`);
  const lessons = [...(presets.value ?? []), ...mistakeLessons(mistakes.value ?? [])];
  if (lessons.length) dispatch({ type: "lessonsLoaded", lessons });
}

/** Compare your numbers (null: stop): the setup's trace runs again with them. */
function setCompare(compare) {
  const state = store.state;
  if (!state.config) return;
  const config = clone(state.config);
  if (compare) config.compare = compare;
  else delete config.compare;
  editors.show(config);
  onConfigEdited(config, { immediate: true });
}

async function openLesson(name, { step = 0, push = true } = {}) {
  if (!name) return;
  dispatch({ type: "lessonLoading", on: true });
  try {
    const mistake = store.state.lessons.find((q) => q.name === name && q.group === "mistakes");
    const p = mistake ?? (await fetchPreset(name));
    dispatch({ type: "lessonOpened", name, config: p.config });
    editors.show(p.config, { fresh: true });
    await run(p.config, { step, push });
  } catch (err) {
    toast(`Preset ${name}: ${err.message}`);
  } finally {
    dispatch({ type: "lessonLoading", on: false });
  }
}

// ---- small UI helpers ----------------------------------------------------------------

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

function rememberSetupOpen(open) {
  try {
    localStorage.setItem(SETUP_KEY, open ? "open" : "closed");
  } catch {
    /* storage refused: the choice lasts this visit */
  }
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

// ---- input: keys, clicks and edits become actions --------------------------------------

const MOVES = new Set(["next", "prev", "first", "last", "nextPhase", "prevPhase"]);

function breakAwayIfFollowing() {
  const f = store.state.follow;
  if (f && f.role === "student" && f.following) classroom.breakAway();
}

/** What a key or a player button asks for. */
function doAction(name) {
  const state = store.state;
  // a student who moves the player while following breaks away to explore
  if (MOVES.has(name) || name === "toggle") breakAwayIfFollowing();
  if (MOVES.has(name)) dispatch({ type: "move", how: name });
  else if (name === "toggle" || name === "faster" || name === "slower") dispatch({ type: name });
  else if (name === "projector") dispatch({ type: "projector", on: !state.projector });
  else if (name === "keys") {
    const d = $("keys-dialog");
    if (d.open) d.close();
    else d.showModal();
  } else if (name === "follow") {
    if (state.follow && state.follow.role === "student") {
      if (state.follow.following) classroom.breakAway();
      else classroom.rejoin();
    }
  } else if (name === "inspect") {
    // the story of the first cell the step writes (else the first it reads)
    const ev = state.trace ? state.trace.model.compiled[currentStep(state)] : null;
    const box = ev ? ev.writes[0] ?? ev.reads[0] : null;
    if (box && box.idx.length) dispatch({ type: "inspect", tensor: box.tensor, flat: box.idx[0] });
  } else if (name === "divergence") {
    const d = state.trace ? state.trace.model.header.first_divergence : null;
    if (d != null) dispatch({ type: "goto", step: d });
    else if (state.trace && state.trace.model.header.mistake) toast("This setup hides the mistake: the code's steps are the correct ones.");
  } else if (name === "fullscreen") {
    if (document.fullscreenElement) document.exitFullscreen().catch(() => {});
    else if (document.documentElement.requestFullscreen) {
      document.documentElement.requestFullscreen().catch(() => toast("Full screen is not available here."));
    }
  }
}

/** The stage's room: measured when the window, the drawer or the chrome changes size. */
function readRoom() {
  const fits = getComputedStyle(document.documentElement).getPropertyValue("--stage-fit").trim() === "1";
  const room = stage.room();
  // a phone: the page scrolls under the player, which stays on top
  if (!fits) room.height = Math.floor(window.innerHeight - document.querySelector(".dock").getBoundingClientRect().height - 16);
  dispatch({ type: "room", ...room, fits });
}

function wire() {
  const speed = $("speed");
  SPEEDS.forEach((_, i) => speed.append(new Option(speedLabel(i), String(i))));
  speed.value = String(store.state.speedIndex);
  speed.addEventListener("change", () => {
    dispatch({ type: "speed", index: Number(speed.value) });
    giveKeysToStage();
  });
  const buttons = { "btn-play": "toggle", "btn-next": "next", "btn-prev": "prev", "btn-first": "first", "btn-last": "last", "btn-next-phase": "nextPhase", "btn-prev-phase": "prevPhase" };
  for (const [id, name] of Object.entries(buttons)) $(id).addEventListener("click", () => doAction(name));
  const sc = $("scrubber");
  sc.addEventListener("input", () => {
    dispatch({ type: "scrubbing", on: true });
    dispatch({ type: "goto", step: Number(sc.value) });
  });
  sc.addEventListener("change", () => dispatch({ type: "scrubbing", on: false }));
  $("preset").addEventListener("change", (e) => {
    breakAwayIfFollowing(); // (a student who picks a lesson explores on their own)
    openLesson(e.target.value);
    giveKeysToStage();
  });
  $("projector").addEventListener("click", () => doAction("projector"));
  $("all-tensors").addEventListener("click", () => dispatch({ type: "allTensors", on: !store.state.allTensors }));
  $("toggle-setup").addEventListener("click", () => {
    const open = !store.state.setupOpen;
    rememberSetupOpen(open);
    dispatch({ type: "setupOpen", open });
  });
  $("show-keys").addEventListener("click", () => doAction("keys"));
  // a pick in the Export menu closes it (and gives the keys back to the stage)
  $("export-menu").addEventListener("click", (e) => {
    if (e.target.closest(".menu-items button")) $("export-menu").open = false;
  });
  // a lesson file has no server to make another one
  $("download-lesson").hidden = Boolean(embeddedLesson());
  $("download-lesson").addEventListener("click", async () => {
    const state = store.state;
    if (!state.trace) return;
    const lesson = state.lessons.find((p) => p.name === state.trace.lesson);
    const meta = lesson ? { name: lesson.name, title: lesson.title, sentence: lesson.sentence } : { name: "custom", title: "A convolution, step by step", sentence: "" };
    try {
      download(await fetchLessonFile(state.trace.config, meta, currentStep(state)), `convscope-${meta.name}.html`);
      toast("Lesson file downloaded: it plays offline, from any folder or USB stick.");
    } catch (err) {
      toast(`No lesson file: ${err.message}`);
    }
  });
  $("export-anim").addEventListener("click", () => {
    if (store.state.trace && store.state.trace.complete) animations.open();
  });
  $("class-session").addEventListener("click", () =>
    classroom.start(classPlace(store.state)).catch((err) => toast(`No class session: ${err.message}`)),
  );
  $("follow-action").addEventListener("click", (e) => {
    const does = e.currentTarget.dataset.does;
    if (does === "end") classroom.end();
    else if (does === "breakAway") classroom.breakAway();
    else if (does === "rejoin") classroom.rejoin();
    else dispatch({ type: "follow", follow: null });
  });
  // a click on a cell never focuses it: the keys stay the player's (js/stage/cell-keys.js)
  $("stage").addEventListener("mousedown", (e) => {
    if (e.target.closest(".cell")) {
      e.preventDefault();
      $("stage").focus({ preventScroll: true });
    }
  });
  // a click on any cell opens its story
  $("stage").addEventListener("click", (e) => {
    const cell = e.target.closest(".cell");
    if (cell) dispatch({ type: "inspect", tensor: cell.dataset.tensor, flat: Number(cell.dataset.idx) });
  });
  $("copy-link").addEventListener("click", copyLink);
  $("compare-open").addEventListener("click", () => compareDialog.open());
  $("apply").addEventListener("click", () => {
    const config = editors.config ?? store.state.config;
    if (config) run(config, { typed: true });
  });
  $("export-json").addEventListener("click", () => {
    if (store.state.trace) exportJson(store.state.trace.model.toDocument());
  });
  $("export-png").addEventListener("click", async () => {
    if (!store.state.trace) return;
    // the picture includes slices scrolled out of view, which content-visibility lets
    // the page skip drawing: draw them first
    stage.revealAll();
    redraw();
    const blob = await stagePng($("stage"), window.devicePixelRatio || 1);
    download(blob, `convscope-step-${stage.lastStep + 1}.png`);
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
      if ($("anim-dialog").open || compareDialog.isOpen) return; // (their fields and buttons take the keys)
      // a cell focused from the keyboard: the arrows move between cells, Enter opens its story
      const onCell = cellKey(e);
      if (onCell) {
        e.preventDefault();
        e.stopPropagation();
        if (onCell === "inspect") dispatch({ type: "inspect", tensor: e.target.dataset.tensor, flat: Number(e.target.dataset.idx) });
        else if (onCell === "leave") {
          if (store.state.inspect) dispatch({ type: "inspect", tensor: null });
          giveKeysToStage();
        }
        return;
      }
      if (e.key === "Escape" && store.state.inspect) {
        dispatch({ type: "inspect", tensor: null });
        return;
      }
      const action = keyAction(e);
      if (!action) return;
      e.preventDefault();
      e.stopPropagation();
      if (action === "leaveField") giveKeysToStage();
      else doAction(action);
    },
    true,
  );
  const roomChanged = new ResizeObserver(() => {
    metrics = null; // (a window crossing a media query changes the style sheet's sizes)
    readRoom();
    requestRedraw();
  });
  roomChanged.observe($("stage"));
  roomChanged.observe(document.querySelector(".dock")); // (on a phone the room is the screen below it)
  new ResizeObserver(() => fitPhaseMarks($("scrub-phases"))).observe($("scrub-phases"));
  window.addEventListener("resize", () => readRoom()); // (a phone's screen height is the room)
  // back/forward between setups, and an address edited by hand
  window.addEventListener("popstate", () => openPlace(readUrl()));
}

/** What js/io/debug.js reads and drives (tests and benchmarks only). */
const page = { store, stage, redraw, probe, isSettled: () => isSettled(store.state) && controller === null, clone };

async function start() {
  adoptTeacherToken(); // (before anything reads or writes the address)
  if (new URLSearchParams(location.search).has("debug")) (await import("./js/io/debug.js")).install(page);
  const lessonsLoaded = loadLessons();
  try {
    adoptMeta(await fetchMeta());
  } catch (err) {
    $("eq-text").textContent = `The page could not load its controls from the server: ${err.message}`;
    return;
  }
  editors = new SetupEditors($("setup-form"), { onChange: onConfigEdited, onProblem: () => dispatch({ type: "formProblems", has: editors.hasProblems }) });
  wire();
  chrome.drawModes(store.state);
  readRoom();
  // a student's link: follow the class session (the teacher's place arrives first)
  const code = new URLSearchParams(location.search).get("follow");
  if (code) {
    await lessonsLoaded;
    try {
      await classroom.join(code);
      return;
    } catch (err) {
      toast(`Could not join class session ${code}: ${err.message}`);
    }
  }
  const place = readUrl();
  if (place.lesson || place.config) {
    await lessonsLoaded; // (the lesson menu and its sentence need the list)
    await openPlace(place, { first: true });
    await classroom.resume(classPlace(store.state)); // a teacher's reload: the class follows on
    return;
  }
  if (place.projector) dispatch({ type: "projector", on: true });
  await lessonsLoaded;
  const lessons = store.state.lessons;
  const first = lessons.find((p) => p.name === "d2l") ?? lessons[0];
  const embedded = embeddedLesson(); // (a lesson file opens where it was downloaded)
  if (first) await openLesson(first.name, { push: false, ...(embedded ? { step: embeddedStep(embedded) } : {}) });
  else {
    const config = defaultConfig();
    dispatch({ type: "customOpened", config });
    editors.show(config, { fresh: true });
    await run(config, { step: 0, push: false });
  }
  await classroom.resume(classPlace(store.state));
}

start();
