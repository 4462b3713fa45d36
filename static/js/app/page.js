// The page's parts, made once: the store (the one state owner, model/page-state.js) and
// the components that draw from it. A component's callback that needs an effect of a
// later module (opening a place, comparing numbers) asks for it by name: `handle(name,
// fn)` registers it, so that no import circle ties this module to those.

import { createStore } from "../model/store.js";
import { initialState, reduce, currentStep, answerHidden, classQuestion } from "../model/page-state.js";
import { tallyCsv } from "../model/predict.js";
import { download } from "../io/export.js";
import { phaseIndexAt } from "../model/trace-model.js";
import { SPEEDS, Ticker } from "../model/player.js";
import { Stage } from "../stage/stage.js";
import { Hover } from "../stage/hover.js";
import { StageLines } from "../stage/lines.js";
import { Chrome } from "../panels/chrome.js";
import { Inspector } from "../panels/inspector.js";
import { AnimationDialog } from "../panels/animation-dialog.js";
import { LabView } from "../panels/lab-view.js";
import { CompareDialog } from "../panels/compare-dialog.js";
import { CodePanel } from "../panels/code-panel.js";
import { QuestionCard } from "../panels/question-card.js";
import { codeOf, codeLineText } from "../model/code-view.js";
import { Classroom } from "../io/classroom.js";
import { initialSetupOpen } from "../io/setup-memory.js";
import { keptPredict } from "../io/predict-memory.js";
import { Probe } from "./probe.js";

export const $ = (id) => document.getElementById(id);

export const store = createStore(reduce, initialState({ setupOpen: initialSetupOpen(), predict: keptPredict() }));
export const dispatch = (action) => store.dispatch(action);

const handlers = new Map();
/** Register what a named request does (a later module: address, lessons, redraw, wiring). */
export function handle(name, fn) {
  handlers.set(name, fn);
}
const ask =
  (name) =>
  (...args) =>
    handlers.get(name)?.(...args);

export const probe = new Probe();
export const stage = new Stage($("stage"));
export const chrome = new Chrome();
export const inspector = new Inspector({
  onJump: (step) => dispatch({ type: "goto", step }),
  onClose: () => dispatch({ type: "inspect", tensor: null }),
});
export const ticker = new Ticker({ getSpeed: () => SPEEDS[store.state.speedIndex], onSteps: (steps) => dispatch({ type: "tick", steps }) });
export const classroom = new Classroom({
  // a student's page takes the teacher's place (its own projector mode stays)
  // (and its class question, once the place's step is on show)
  onState: async (place) => {
    await ask("openPlace")({ ...place, speed: null, projector: store.state.projector });
    dispatch({ type: "classQuestion", ask: place.ask ?? null });
  },
  onChange: (follow) => dispatch({ type: "follow", follow }),
});
export const animations = new AnimationDialog({
  // the current phase, by default
  range: () => {
    const state = store.state;
    const model = state.trace.model;
    const here = currentStep(state);
    const p = model.phases[phaseIndexAt(model.phases, here)] ?? { start: 0, stop: model.total };
    return { from: p.start, to: p.stop - 1, total: model.total };
  },
  show: ask("showForExport"),
  layout: (size) => dispatch({ type: "recording", size }),
  textAt: (step) => store.state.trace.model.compiled[step].text,
  codeAt: (step) => codeLineText(codeOf(store.state.trace.model), store.state.trace.model.compiled[step]),
  codeShown: () => store.state.codeOpen,
  here: () => currentStep(store.state),
  stage: $("stage"),
});
const cellOf = (tensor, flat) => stage.cellOf(tensor, flat);
export const compareDialog = new CompareDialog({
  tensors: () => (store.state.trace ? store.state.trace.model.tensors : null),
  onApply: ask("setCompare"),
  why: () =>
    !store.state.trace
      ? "There is no trace to compare with yet."
      : store.state.config && store.state.config.mistake
        ? "A mistake lesson already compares the mistaken code with the truth: pick a lesson or set up your own case to compare your numbers."
        : "",
});
export const lab = new LabView({
  cellOf,
  onDivergence: ask("divergence"),
  onCompare: () => compareDialog.open(),
  onStopComparing: () => ask("setCompare")(null),
});
// (no links while a question hides the step's answer: they would show what it reads)
export const hover = new Hover($("stage"), cellOf, () => (store.state.trace && !answerHidden(store.state) ? { model: store.state.trace.model, step: currentStep(store.state) } : null));
export const questionCard = new QuestionCard({
  // (answered or shown: the keys go back to the player)
  answer: (given) => {
    dispatch({ type: "answer", given });
    giveKeysToStage();
  },
  error: (text) => dispatch({ type: "answerError", text }),
  reveal: () => {
    dispatch({ type: "reveal" });
    giveKeysToStage();
  },
  // (a teacher's class question: another kind is asked of the class again)
  kind: (pick) => (classQuestion(store.state, "teacher") ? ask("askClass")(pick) : dispatch({ type: "askKind", pick })),
  close: () => {
    ask("revealClass")();
    giveKeysToStage();
  },
  csv: (tally) => download(new Blob([tallyCsv(tally)], { type: "text/csv" }), "class-answers.csv"),
});
export const lines = new StageLines($("stage"), cellOf);
export const codePanel = new CodePanel($("code"), {
  cellOf,
  where: () => {
    const t = store.state.trace;
    if (!t) return null;
    const step = currentStep(store.state);
    return { model: t.model, step, event: t.model.compiled[step] ?? null };
  },
  goto: (step) => {
    breakAwayIfFollowing();
    dispatch({ type: "goto", step });
  },
});

let setupEditors = null; // made once the server has published its controls (boot.js)
/** The setup drawer's editors (panels/setup-editors.js), or null before the page's meta. */
export const editors = () => setupEditors;
export function setEditors(made) {
  setupEditors = made;
}

/** A student who moves the player or edits the setup while following breaks away. */
export function breakAwayIfFollowing() {
  const f = store.state.follow;
  if (f && f.role === "student" && f.following) classroom.breakAway();
}

/** Focus the stage (a pick in a menu, Escape in a field): the keys drive the player. */
export function giveKeysToStage() {
  if (document.activeElement && document.activeElement.blur) document.activeElement.blur();
  $("stage").focus({ preventScroll: true });
}
