// The one draw path: redraw() draws the page from the store's state, once per animation
// frame (requestRedraw), or at once for the ticker's step and an export. drawNow(state,
// prev) is the part a change of mode or form shows in the same tick as its action (a
// key's projector mode, the setup put in the form); redraw draws it too.

import { currentStep, answerHidden, questionOf } from "../model/page-state.js";
import { frameOf } from "../model/frame.js";
import { SPEEDS } from "../model/player.js";
import { pickHeat } from "../model/predict.js";
import { drawPhaseMarks } from "../panels/phase-marks.js";
import { $, store, stage, chrome, inspector, lab, hover, lines, probe, editors, handle, dispatch, codePanel, questionCard } from "./page.js";

const reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");

let metrics = null; // the style sheet's sizes the stage layout needs (measured per trace and mode)
let queued = false;
const drawn = { form: null, notice: null, narration: null, modes: null, follow: null, badge: null, inspect: null, scrubber: null, playing: false };

/** The style sheet's sizes change (a mode, a media query): measure them again. */
export function forgetMetrics() {
  metrics = null;
}

/** Redraw in the next animation frame (once, however many changes come before it). */
export function requestRedraw() {
  if (queued) return;
  queued = true;
  requestAnimationFrame(() => {
    queued = false;
    redraw();
  });
}

/** The view settings and the viewport a frame is drawn for. */
function viewOf(state) {
  // (an animation's frames are a desktop's stage, whatever the window)
  return { projector: state.projector, allTensors: state.allTensors, fits: state.fits || Boolean(state.recording), playing: state.playing };
}

/** The viewport a frame is laid out for: the window and the stage's room, or while an
 *  animation records, its frame's stage (stage.recordingRoom sizes the stage to it). */
function viewportOf(state) {
  const room = stage.recordingRoom(state.recording);
  return state.recording ? { width: state.recording.width, room } : { width: window.innerWidth, room: state.room };
}

/** What follows an action in its own tick: the page's modes and the setup form. */
export function drawNow(state) {
  const modes = `${state.projector}|${state.setupOpen}|${state.allTensors}|${state.speedIndex}|${state.codeOpen}|${state.predict}`;
  if (modes !== drawn.modes) {
    if (drawn.modes !== null && (state.projector !== drawn.projector || state.setupOpen !== drawn.setupOpen)) {
      metrics = null; // another style sheet's sizes
      stage.invalidateGeometry(); // (every figure changes size: what is in view is read again)
    }
    drawn.modes = modes;
    drawn.projector = state.projector;
    drawn.setupOpen = state.setupOpen;
    chrome.drawModes(state);
  }
  drawForm(state.form);
}

/** The setup form: the setup it shows, the trace's header, the errors beside the fields. */
function drawForm(form) {
  const ed = editors();
  if (!ed || form === drawn.form) return;
  const before = drawn.form ?? {};
  drawn.form = form;
  if (form.config && (form.shown !== before.shown)) ed.show(form.config, { fresh: form.fresh });
  if (form.header && form.header !== before.header) ed.showHeader(form.header);
  if (form.errors && (form.errors !== before.errors || form.shown !== before.shown)) ed.showErrors(form.errors);
}

export function redraw(cause = "request") {
  const t0 = performance.now();
  const state = store.state;
  drawNow(state);
  drawNotices(state);
  chrome.drawLesson(state);
  chrome.drawProgress(state);
  if (state.follow !== drawn.follow) {
    drawn.follow = state.follow;
    chrome.drawFollow(state);
  }
  const badgeKey = [state.formProblems, state.runError, state.run, state.badge, state.trace];
  if (!drawn.badge || badgeKey.some((v, i) => v !== drawn.badge[i])) {
    drawn.badge = badgeKey;
    chrome.drawBadge(state);
  }
  // a cell's story needs the whole trace: drawn once it has arrived
  const inspectKey = [state.inspect, state.trace];
  if (!drawn.inspect || inspectKey.some((v, i) => v !== drawn.inspect[i])) {
    const model = state.trace && state.trace.complete ? state.trace.model : null;
    if (!state.inspect || model) {
      drawn.inspect = inspectKey;
      inspector.draw(model, state.inspect);
    }
  }
  const trace = state.trace;
  if (state.startError) {
    chrome.drawStartError(state.startError);
    return;
  }
  if (!trace) {
    lab.draw(null, -1, null);
    codePanel.draw(null, null, { open: state.codeOpen, brief: state.projector || !state.fits });
    lines.draw(null, -1, false);
    if (stage.model) {
      stage.clear();
      chrome.drawNoTrace();
      chrome.drawLegend(null);
    }
    return;
  }
  if (trace.model !== drawn.scrubber) {
    drawn.scrubber = trace.model;
    drawPhaseMarks($("scrub-phases"), trace.model.phases, trace.model.total);
  }
  if (stage.model !== trace.model) {
    stage.build(trace.model);
    chrome.drawLegend(trace.model);
    chrome.renarrate();
    metrics = null;
  }
  // a pause narrates the step it stopped on
  if (drawn.playing && !state.playing) chrome.renarrate();
  drawn.playing = state.playing;
  if (!metrics) metrics = stage.measureMetrics();
  probe.part?.("start", { cause, from: stage.lastStep ?? -1 });
  const frame = frameOf(trace, state.step, viewOf(state), viewportOf(state), metrics);
  probe.part?.("seek");
  if (stage.setFocus(frame.focus)) probe.part?.("fold");
  stage.applyLayout(frame.layout);
  probe.part?.("fit");
  const speed = SPEEDS[state.speedIndex];
  // Playing too fast to watch, the stage does not follow each event. The written cells
  // flash when one step was taken (a step, a play slow enough to watch), not after a
  // jump: there is no "just" to show then, and the flash costs the jump's frame.
  const fast = state.playing && speed > 12;
  // Predict: the question open on this step hides its answer (model/page-state.js)
  const hidden = answerHidden(state);
  const question = questionOf(state);
  const asking = state.asking && state.asking.step === frame.step ? askingMarks(state, question, hidden, trace.model) : null;
  stage.draw(frame, { flash: (speed <= 8 || !state.playing) && !reducedMotion.matches, changes: !fast, asking });
  if (!fast) stage.followEvent();
  lab.draw(trace.model, frame.step, trace.config.compare);
  // (brief where the stage needs the room: the current line and its loops)
  codePanel.draw(trace.model, frame.event, { open: state.codeOpen, brief: state.projector || !state.fits, diverges: frame.step === trace.model.header.first_divergence });
  if (!state.playing) hover.follow();
  // (after this frame, from its layout; not on a phone's stacked stage, where they would
  // cross the figures between)
  lines.draw(trace.model, frame.step, state.fits && !(state.playing && speed > 2) && !hidden);
  questionCard.draw(state, frame.event ? frame.event.text : "");
  // (the step's text and written values would answer the question: drawn once it is)
  if (hidden) chrome.renarrate();
  else if (chrome.drawPanel(frame, state, state.pendingNarration)) {
    if (state.pendingNarration) dispatch({ type: "narrated" });
  }
  probe.part?.("panel");
  chrome.drawTransport(frame, state);
  probe.part?.("transport");
  if (probe.measureLayout) void document.body.offsetHeight; // include style and layout in the frame time
  probe.frameDrawn(performance.now() - t0, frame);
}

/** What a question open on the step marks on the stage: its answer hidden, a reads
 *  question's own marks off, the cells picked, and once a class's reads question is
 *  revealed on the teacher's page, how many pages picked each cell. */
function askingMarks(state, question, hidden, model) {
  const reads = Boolean(question && question.kind === "reads");
  const tensor = reads ? question.answer.tensor : null;
  const picked = reads ? state.asking.picked.map((flat) => ({ tensor, flat })) : [];
  const tally = state.asking.klass && state.asking.klass.tally;
  const heat = reads && tally && tally.distribution ? pickHeat(tally.distribution, model.tensors[tensor], tally.answered).map((h) => ({ tensor, ...h })) : [];
  return { hide: hidden, reads, picked, heat };
}

/** The toast and the words said once (a run that failed). */
function drawNotices(state) {
  if (state.notice !== drawn.notice) {
    drawn.notice = state.notice;
    chrome.drawToast(state.notice ? state.notice.text : "");
  }
  if (state.narration !== drawn.narration) {
    drawn.narration = state.narration;
    if (state.narration) chrome.narrate(state.narration.text);
  }
}

/** A step drawn for an export (a PNG, an animation's frame): every cell painted. */
export function showForExport(step) {
  if (step != null) dispatch({ type: "goto", step });
  stage.revealAll(); // (slices scrolled away are drawn too)
  redraw("export");
  // (an animation's frame: its columns scrolled to the step now, not in the next frame)
  if (store.state.recording) stage.follow();
}
handle("showForExport", showForExport);

/** The step of the last frame drawn (the PNG's name). */
export const shownStep = () => stage.lastStep;
export { currentStep };
