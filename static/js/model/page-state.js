// Everything the page can change, and every way it changes: reduce(state, action) is
// pure (no DOM, no fetch, no clock); the store in main.js is its only caller. Input
// handlers turn keys, clicks and edits into these actions; effects (fetching a trace,
// the ticker, the address) dispatch what they learn.

import { nextPhaseStart, previousPhaseStart } from "./trace-model.js";
import { SPEEDS, DEFAULT_SPEED } from "./player.js";
import { askable, isRight, scored, NO_SCORE } from "./predict.js";

/** The page before anything has loaded. setupOpen: the drawer at start; predict:
 *  Predict at start. */
export function initialState({ setupOpen = true, predict = false } = {}) {
  return {
    lessons: [], // [{name, title, sentence}] as the server lists them
    lesson: "", // the lesson the form's setup is, unchanged ("": a custom setup)
    config: null, // the setup the form holds
    trace: null, // the trace on screen: {model, received, complete, config, lesson}
    step: -1, // the step asked for; the one shown is within what has arrived
    playing: false,
    speedIndex: DEFAULT_SPEED,
    projector: false,
    allTensors: false, // false: tensors the phase does not use fold to their captions
    codeOpen: false, // the code panel beside the stage (panels/code-panel.js)
    setupOpen,
    run: "idle", // "waiting" (an edit, traced after a pause) | "tracing" (no header yet) | "streaming" | "idle"
    runError: "", // why the last run failed (the form or the server said so)
    formProblems: false, // a field of the form holds what is not a setup
    loadingLesson: false,
    badge: { state: "pending", text: "not checked yet", title: "" },
    room: { width: 0, height: 0 }, // the stage's room (px)
    fits: false, // the style sheet sizes the stage to the window (it scrolls inside itself)
    // an animation being recorded (encode/animation.js): the stage's size in its frames,
    // {width, height} px; the stage is laid out for that size, not the window's
    recording: null,
    scrubbing: false,
    inspect: null, // the cell whose story the inspector shows: {tensor, flat}
    // follow mode: null, {role: "teacher", code, url, followers, trouble}, {role: "student", code,
    // following, status: "following" | "away" | "reconnecting" | "exploring"}, or
    // {role: "ended", message}
    follow: null,
    // the setup form: the setup it shows (`shown` counts each time it is put there; fresh:
    // a new setup, typed values and problems forgotten), the trace's header, the errors
    // beside the fields ({field: message})
    form: { config: null, fresh: false, shown: 0, header: null, errors: null },
    notice: null, // the toast: {text, id}, hidden after a while
    narration: null, // words said once (a run that failed): {text, id}
    pendingNarration: "", // said again with the next step drawn (a trace that stopped midway)
    startError: "", // the page could not start: why
    // Predict (key Q): a step taken forward one at a time is asked before it is shown.
    // asking: null, or {step, questions (the page's, model/predict.js; null until they
    // arrive), pick (the one asked), picked (the flat cells clicked), error (why the
    // typed answer is no answer), verdict: null | {right, given} | {skipped: true},
    // klass: a class question (follow mode), null or {role: "teacher", id, tally} |
    // {role: "student", id, index, sent (the answer sent, null before)}}
    predict,
    asking: null,
    answered: {}, // the steps of this trace asked already: {step: true}
    score: NO_SCORE, // the lesson's, kept in the browser's storage
  };
}

/** The question on show (null: none, or its questions have not arrived). */
export function questionOf(state) {
  const a = state.asking;
  return a && a.questions && a.questions.length ? a.questions[a.pick] : null;
}

/** True while the step's answer is hidden: asked, not yet answered or revealed. */
export function answerHidden(state) {
  return Boolean(state.asking && !state.asking.verdict && state.asking.step === currentStep(state));
}

/** Whether moving from `now` to `to` asks first: Predict on, one step forward, a step
 *  not asked yet, the page not following a teacher. */
function asksAt(state, now, to) {
  const following = state.follow && state.follow.role === "student" && state.follow.following;
  return state.predict && !following && to === now + 1 && to <= lastReachable(state) && !state.answered[to];
}

/** State at `to`, asked before it is shown. */
function ask(state, to) {
  return { ...state, step: to, playing: false, asking: { step: to, questions: null, pick: 0, picked: [], error: "", verdict: null } };
}

/** The end of a question at its step (answered or revealed): {verdict} with the score
 *  (a class question's is the class's, not the lesson's own). */
function settle(state, verdict) {
  const asking = { ...state.asking, verdict, error: "" };
  const score = verdict.skipped || asking.klass ? state.score : scored(state.score, verdict.right);
  return { ...state, asking, score, answered: { ...state.answered, [asking.step]: true } };
}

/** The class question open on this page, of `role` ("teacher" | "student"), or null. */
export function classQuestion(state, role) {
  const k = state.asking && state.asking.klass;
  return k && k.role === role ? k : null;
}

/** What a teacher's page tells its class of the question it asks: {id, step, index,
 *  revealed}, or null. */
function classAskOf(state) {
  const k = classQuestion(state, "teacher");
  const q = questionOf(state);
  return k && q ? { id: k.id, step: state.asking.step, index: q.index, revealed: Boolean(state.asking.verdict) } : null;
}

/** A student's page at the teacher's place: its class question opened, or revealed
 *  (judged by what this page sent), or closed (the teacher asks none). */
function followQuestion(state, ask) {
  const k = classQuestion(state, "student");
  if (!ask) return k ? { ...state, asking: null } : state;
  if (!k || k.id !== ask.id) {
    // (a question revealed before this page heard of it: the step, shown)
    if (ask.revealed || ask.step !== currentStep(state) || !state.trace) return k ? { ...state, asking: null } : state;
    const klass = { role: "student", id: ask.id, index: ask.index, sent: null };
    return { ...state, playing: false, asking: { step: ask.step, questions: null, pick: 0, picked: [], error: "", verdict: null, klass } };
  }
  if (!ask.revealed || state.asking.verdict) return state;
  const q = questionOf(state);
  if (!q || k.sent === null) return settle(state, { skipped: true });
  return settle(state, { right: isRight(q, k.sent, q.kind === "reads" ? state.trace.model.tensors[q.answer.tensor] : null), given: k.sent });
}

/** The last step that has arrived (0 with no trace). */
export function lastReachable(state) {
  return state.trace ? Math.max(0, state.trace.received - 1) : 0;
}

/** The step in effect: the one asked for, within what has arrived. */
export function currentStep(state) {
  return Math.max(0, Math.min(state.step, lastReachable(state)));
}

/** True once the whole trace of the form's setup is on screen and nothing is pending. */
export function isSettled(state) {
  return Boolean(state.trace && state.trace.complete && state.run === "idle" && !state.loadingLesson);
}

/** Why the stage does not show the form's setup ("" when it does). */
export function staleReason(state) {
  if (!state.trace) return "";
  if (state.runError || state.formProblems) return "the setup has an error";
  if (state.run === "waiting" || state.run === "tracing") return "the new setup is not traced yet";
  return "";
}

/** What a teacher's page sends its class: the lesson by name (else the setup), the step
 *  and the view settings a student's page takes (not projector mode: that is the room's). */
export function classPlace(state) {
  const p = placeOf(state);
  return { lesson: p.lesson || null, config: p.lesson ? null : p.config, step: p.step, allTensors: p.allTensors, ask: classAskOf(state) };
}

/** What the address holds (model/url-fragment.js) and a teacher's class follows: the
 *  setup of the trace on screen, else (none yet) the one asked for. A setup edited but
 *  not yet traced, or refused, is the form's alone: an address or a class given it would
 *  open a setup that may never run (the form's draft keeps it over a reload). */
export function placeOf(state) {
  const t = state.trace;
  const step = !t ? Math.max(0, state.step) : t.complete ? currentStep(state) : Math.max(0, state.step);
  const setup = t ? { config: t.config, lesson: t.lesson } : { config: state.config, lesson: state.lesson };
  return { ...setup, step, speed: state.speedIndex, projector: state.projector, allTensors: state.allTensors, codeOpen: state.codeOpen };
}

function clampStep(state, t) {
  return Math.max(0, Math.min(lastReachable(state), t));
}

function moveTarget(state, how) {
  const now = currentStep(state);
  const phases = state.trace.model.phases;
  switch (how) {
    case "next":
      return now + 1;
    case "prev":
      return now - 1;
    case "first":
      return 0;
    case "last":
      return state.trace.model.total - 1;
    case "nextPhase":
      return nextPhaseStart(phases, now) ?? now;
    case "prevPhase":
      return previousPhaseStart(phases, now) ?? now;
    default:
      throw new Error(`unknown move ${how}`);
  }
}

/** A question stays on show at its own step only. */
function leaveQuestion(state) {
  return state.asking && state.asking.step !== currentStep(state) ? { ...state, asking: null } : state;
}

const set = (state, changes) => {
  for (const k in changes) if (state[k] !== changes[k]) return { ...state, ...changes };
  return state;
};

/** The next state after `action` ({type, ...}). Unknown types are a bug: they throw. */
export function reduce(state, action) {
  switch (action.type) {
    case "lessonsLoaded":
      return set(state, { lessons: action.lessons });
    case "lessonLoading":
      return set(state, { loadingLesson: action.on });
    case "lessonOpened": // a lesson's setup put in the form (its trace runs next)
      return set(state, { lesson: action.name, config: action.config, playing: false, loadingLesson: false });
    case "customOpened": // a setup from an address put in the form
      return set(state, { lesson: "", config: action.config, playing: false });
    case "edited":
      return set(state, { lesson: "", config: action.config, run: "waiting" });
    case "formShow":
      return { ...state, form: { ...state.form, config: action.config, fresh: Boolean(action.fresh), shown: state.form.shown + 1 } };
    case "notice":
      return { ...state, notice: { text: action.text, id: (state.notice ? state.notice.id : 0) + 1 } };
    case "noticeDone":
      return state.notice && state.notice.id === action.id ? { ...state, notice: null } : state;
    case "narrated":
      return set(state, { pendingNarration: "" });
    case "startFailed":
      return set(state, { startError: action.message });
    case "formProblems":
      return set(state, { formProblems: action.has });
    case "runStarted":
      return set(state, { run: "tracing", runError: "" });
    case "header": {
      const { model } = action;
      const trace = { model, received: model.received, complete: model.complete, config: action.config, lesson: action.lesson };
      const form = { config: action.config, fresh: false, shown: state.form.shown + 1, header: model.header, errors: {} };
      return { ...state, trace, form, inspect: null, asking: null, answered: {}, step: action.step, run: "streaming", badge: { state: "pending", text: "checking…", title: "The replay check runs when the whole trace has arrived." } };
    }
    case "events": {
      if (!state.trace || state.trace.model !== action.model) return state;
      return { ...state, trace: { ...state.trace, received: action.model.received, complete: action.model.complete } };
    }
    case "checked":
      return set(state, { badge: action.badge });
    case "runFailed": {
      const r = action.restore;
      const restored = r ? { trace: r.trace, step: r.step, badge: r.badge, ...(r.config ? { config: r.config, lesson: r.lesson } : {}) } : {};
      const cleared = action.clear ? { trace: null, badge: { state: "pending", text: "no trace", title: "" } } : {};
      // the form: the errors beside its fields; a lesson or link put back shows its setup
      // and the header of the trace put back
      const form =
        r && r.config
          ? { config: r.config, fresh: true, shown: state.form.shown + 1, header: r.trace.model.header, errors: action.errors ?? {} }
          : { ...state.form, header: r ? r.trace.model.header : state.form.header, errors: action.errors ?? {} };
      const said = action.said ? { narration: { text: action.said, id: (state.narration ? state.narration.id : 0) + 1 }, pendingNarration: action.sayAgain ? action.said : state.pendingNarration } : {};
      const notice = action.notice ? { notice: { text: action.said, id: (state.notice ? state.notice.id : 0) + 1 } } : {};
      return { ...state, ...restored, ...cleared, ...said, ...notice, form, playing: action.restore || action.clear ? false : state.playing, runError: action.message };
    }
    case "runDone":
      return set(state, { run: "idle" });
    case "goto":
      if (!state.trace) return state;
      return leaveQuestion(set(state, { step: clampStep(state, action.step), playing: action.keepPlaying ? state.playing : false }));
    case "move": {
      if (!state.trace) return state;
      const now = currentStep(state);
      // an open question: the first step forward shows its answer
      if (answerHidden(state) && (action.how === "next" || action.how === "nextPhase")) return settle(state, { skipped: true });
      const to = clampStep(state, moveTarget(state, action.how));
      if (asksAt(state, now, to)) return ask(state, to);
      return leaveQuestion(set(state, { step: to, playing: false }));
    }
    case "tick": {
      if (!state.trace || !state.playing) return state;
      const last = lastReachable(state);
      if (asksAt(state, currentStep(state), currentStep(state) + 1)) return ask(state, currentStep(state) + 1);
      const next = currentStep(state) + action.steps;
      if (next >= last) return leaveQuestion(set(state, { step: last, playing: state.trace.complete ? false : state.playing }));
      return leaveQuestion(set(state, { step: next }));
    }
    case "play": {
      if (!state.trace || state.playing) return state;
      if (answerHidden(state)) return settle(state, { skipped: true }); // (Space on a question shows it)
      const again = currentStep(state) >= state.trace.model.total - 1; // play again from the start
      return set(state, { playing: true, step: again ? 0 : state.step });
    }
    case "pause":
      return set(state, { playing: false });
    case "toggle":
      return reduce(state, { type: state.playing ? "pause" : "play" });
    case "speed":
      return set(state, { speedIndex: Math.max(0, Math.min(SPEEDS.length - 1, action.index)) });
    case "faster":
      return reduce(state, { type: "speed", index: state.speedIndex + 1 });
    case "slower":
      return reduce(state, { type: "speed", index: state.speedIndex - 1 });
    case "projector":
      return set(state, { projector: action.on });
    case "allTensors":
      return set(state, { allTensors: action.on });
    case "codeOpen":
      return set(state, { codeOpen: action.on });
    case "setupOpen":
      return set(state, { setupOpen: action.open });
    case "room":
      if (state.room.width === action.width && state.room.height === action.height && state.fits === action.fits) return state;
      return { ...state, room: { width: action.width, height: action.height }, fits: action.fits };
    case "recording":
      return set(state, { recording: action.size ? { width: action.size.width, height: action.size.height } : null });
    case "scrubbing":
      return set(state, { scrubbing: action.on });
    case "follow": {
      // a class question lasts as long as its page's part in the session
      const k = state.asking && state.asking.klass;
      const ends = k && !(action.follow && action.follow.role === k.role);
      return set(state, { follow: action.follow, ...(ends ? { asking: null } : {}) });
    }
    case "inspect":
      return set(state, { inspect: action.tensor == null ? null : { tensor: action.tensor, flat: action.flat } });
    case "predict":
      return set(state, { predict: action.on, asking: action.on || (state.asking && state.asking.klass) ? state.asking : null });
    case "questions": {
      // (a question of a step left already, or of another trace: dropped)
      if (!state.asking || state.asking.step !== action.step || state.asking.questions || !state.trace || state.trace.model !== action.model) return state;
      const questions = action.questions ? askable(action.questions) : [];
      if (!questions.length) return { ...state, asking: null, answered: { ...state.answered, [action.step]: true }, ...(action.error ? { notice: { text: action.error, id: (state.notice ? state.notice.id : 0) + 1 } } : {}) };
      // (a class question is the one the teacher asked)
      const k = state.asking.klass;
      const pick = k ? Math.max(0, questions.findIndex((q) => q.index === k.index)) : 0;
      return { ...state, asking: { ...state.asking, questions, pick } };
    }
    case "askKind":
      if (!answerHidden(state) || state.asking.klass || !state.asking.questions || !state.asking.questions[action.pick]) return state;
      return { ...state, asking: { ...state.asking, pick: action.pick, picked: [], error: "" } };
    case "pickCell": {
      const q = answerHidden(state) ? questionOf(state) : null;
      if (!q || q.kind !== "reads" || q.answer.tensor !== action.tensor) return state;
      const picked = state.asking.picked.includes(action.flat) ? state.asking.picked.filter((f) => f !== action.flat) : [...state.asking.picked, action.flat];
      return { ...state, asking: { ...state.asking, picked, error: "" } };
    }
    case "answerError":
      return answerHidden(state) ? { ...state, asking: { ...state.asking, error: action.text } } : state;
    case "answer": {
      const q = answerHidden(state) ? questionOf(state) : null;
      if (!q) return state;
      // (no cell picked is no answer yet: Enter pressed too soon)
      if (q.kind === "reads" && !state.asking.picked.length) return { ...state, asking: { ...state.asking, error: "Click (or tap) the cells it reads first." } };
      const given = q.kind === "reads" ? state.asking.picked : action.given;
      // a class question's answer is sent (app/class-question.js), judged at the reveal
      const k = state.asking.klass;
      if (k) return k.role === "student" && k.sent === null ? { ...state, asking: { ...state.asking, error: "", klass: { ...k, sent: given } } } : state;
      return settle(state, { right: isRight(q, given, q.kind === "reads" ? state.trace.model.tensors[q.answer.tensor] : null), given });
    }
    case "reveal":
      return answerHidden(state) ? settle(state, { skipped: true }) : state;
    case "scoreLoaded":
      return set(state, { score: action.score });
    case "classAsked": {
      // the teacher's page: the class is asked about step `step` (shown hidden here too)
      if (!state.trace || action.step > lastReachable(state)) return state;
      const klass = { role: "teacher", id: action.id, tally: null };
      return { ...state, step: action.step, playing: false, asking: { step: action.step, questions: action.questions, pick: action.pick, picked: [], error: "", verdict: null, klass } };
    }
    case "classTally": {
      const k = classQuestion(state, "teacher");
      return k && k.id === action.id ? { ...state, asking: { ...state.asking, klass: { ...k, tally: action.tally } } } : state;
    }
    case "classRevealed": {
      const k = classQuestion(state, "teacher");
      if (!k || k.id !== action.id) return state;
      return settle({ ...state, asking: { ...state.asking, klass: { ...k, tally: action.tally } } }, { skipped: true });
    }
    case "classQuestion":
      return followQuestion(state, action.ask);
    case "classSendFailed": {
      const k = classQuestion(state, "student");
      return k && k.id === action.id && !state.asking.verdict ? { ...state, asking: { ...state.asking, error: action.message, klass: { ...k, sent: null } } } : state;
    }
    default:
      throw new Error(`unknown action ${action.type}`);
  }
}
