// Input: keys, clicks and edits become actions (or the effect they ask for: a lesson, a
// run, a class session, a download). Nothing here draws.

import { currentStep, classPlace, answerHidden, questionOf, classQuestion } from "../model/page-state.js";
import { SPEEDS, speedLabel, keyAction, KEY_SHEET, isTypingField } from "../model/player.js";
import { cellKey } from "../stage/cell-keys.js";
import { fitPhaseMarks } from "../panels/phase-marks.js";
import { fetchLessonFile } from "../io/api.js";
import { embeddedLesson } from "../io/lesson-file.js";
import { exportJson, stagePng, download } from "../io/export.js";
import { rememberSetupOpen } from "../io/setup-memory.js";
import { buildHandout, clearHandout, handoutSteps, handoutTitle } from "../panels/handout.js";
import { $, store, dispatch, stage, classroom, animations, compareDialog, editors, handle, breakAwayIfFollowing, giveKeysToStage, questionCard } from "./page.js";
import { forgetMetrics, requestRedraw, showForExport, shownStep } from "./redraw.js";
import { run } from "./streaming.js";
import { openLesson, notify } from "./lessons.js";
import { askClass, revealClass } from "./class-question.js";
import { writeUrl, readUrl, openPlace } from "./address.js";

const MOVES = new Set(["next", "prev", "first", "last", "nextPhase", "prevPhase"]);

/** What a key or a player button asks for. */
export function doAction(name) {
  const state = store.state;
  // a class question open: the teacher's first step forward reveals its answers; a
  // student's waits for the teacher (B breaks away)
  const following = state.follow && state.follow.role === "student" && state.follow.following;
  if ((name === "next" || name === "toggle") && answerHidden(state) && (classQuestion(state, "teacher") || (classQuestion(state, "student") && following))) {
    if (classQuestion(state, "teacher")) revealClass();
    else notify("The teacher shows this step once the class has answered (B: break away to explore on your own).");
    return;
  }
  // a student who moves the player while following breaks away to explore
  if (MOVES.has(name) || name === "toggle") breakAwayIfFollowing();
  if (MOVES.has(name)) dispatch({ type: "move", how: name });
  else if (name === "toggle" || name === "faster" || name === "slower") dispatch({ type: name });
  else if (name === "projector") dispatch({ type: "projector", on: !state.projector });
  else if (name === "code") dispatch({ type: "codeOpen", on: !state.codeOpen });
  else if (name === "predict") dispatch({ type: "predict", on: !state.predict });
  else if (name === "ask") askClass();
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
    else if (state.trace && state.trace.model.header.mistake?.student) notify("No write of your code is wrong on this case.");
    else if (state.trace && state.trace.model.header.mistake) notify("This setup hides the mistake: the code's steps are the correct ones.");
  } else if (name === "fullscreen") {
    if (document.fullscreenElement) document.exitFullscreen().catch(() => {});
    else if (document.documentElement.requestFullscreen) {
      document.documentElement.requestFullscreen().catch(() => notify("Full screen is not available here."));
    }
  }
}
handle("divergence", () => doAction("divergence"));

/** The stage's room: measured when the window, the drawer or the chrome changes size. */
export function readRoom() {
  if (store.state.recording) return; // (the stage has a frame's size, not the page's: read after)
  const fits = getComputedStyle(document.documentElement).getPropertyValue("--stage-fit").trim() === "1";
  const room = stage.room();
  // a phone: the page scrolls under the player, which stays on top, and over the code
  // strip, which stays at the bottom
  const code = $("code");
  const strip = code.hidden ? 0 : code.getBoundingClientRect().height;
  const height = fits ? room.height : Math.floor(window.innerHeight - document.querySelector(".dock").getBoundingClientRect().height - strip - 16);
  dispatch({ type: "room", ...room, height, fits });
}

async function copyLink() {
  writeUrl(true);
  try {
    await navigator.clipboard.writeText(location.href);
    notify("Link copied: it reopens this lesson at this step.");
  } catch {
    notify("Copy the address bar: it holds this lesson and step.");
  }
}

async function downloadLesson() {
  const state = store.state;
  if (!state.trace) return;
  const lesson = state.lessons.find((p) => p.name === state.trace.lesson);
  const meta = lesson ? { name: lesson.name, title: lesson.title, sentence: lesson.sentence } : { name: "custom", title: "A convolution, step by step", sentence: "" };
  try {
    download(await fetchLessonFile(state.trace.config, meta, currentStep(state), state.codeOpen), `convscope-${meta.name}.html`);
    notify("Lesson file downloaded: it plays offline, from any folder or USB stick.");
  } catch (err) {
    notify(`No lesson file: ${err.message}`);
  }
}

/** Export → Handout: one page per phase built, then the browser's print dialog (its
 *  "Save as PDF"). Nothing is fetched: it works offline and from a lesson file. */
async function printHandout() {
  const trace = store.state.trace;
  if (!trace || !trace.complete) {
    notify("The handout needs the whole trace: print it once the trace has arrived.");
    return;
  }
  if (store.state.projector) {
    notify("Leave projector mode (P) to print a handout: its pictures are drawn dark on light.");
    return;
  }
  const back = currentStep(store.state);
  // (the pictures in the light colours whatever the screen's scheme: style.css html.light)
  document.documentElement.classList.add("light");
  try {
    const steps = handoutSteps(trace.model.phases);
    await buildHandout({ steps, show: showForExport, stage: $("stage"), model: trace.model, title: handoutTitle(store.state) });
  } finally {
    document.documentElement.classList.remove("light");
    showForExport(back);
  }
  window.print();
}

function wireButtons() {
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
  $("code-toggle").addEventListener("click", () => doAction("code"));
  $("predict-toggle").addEventListener("click", () => doAction("predict"));
  $("follow-ask").addEventListener("click", () => doAction("ask"));
  $("toggle-setup").addEventListener("click", () => {
    const open = !store.state.setupOpen;
    rememberSetupOpen(open);
    dispatch({ type: "setupOpen", open });
    // a phone stacks the setup below the stage, out of sight of this button: the page
    // scrolls to it, its top just under the docked player (drawn in this tick: drawNow)
    if (open) showBelowDock($("setup"));
  });
  $("show-keys").addEventListener("click", () => doAction("keys"));
  // a pick in the Export menu closes it (and gives the keys back to the stage)
  $("export-menu").addEventListener("click", (e) => {
    if (e.target.closest(".menu-items button")) $("export-menu").open = false;
  });
  // a lesson file has no server to make another one
  $("download-lesson").hidden = Boolean(embeddedLesson());
  $("download-lesson").addEventListener("click", downloadLesson);
  $("export-anim").addEventListener("click", () => {
    if (store.state.trace && store.state.trace.complete) animations.open();
  });
  $("class-session").addEventListener("click", () => classroom.start(classPlace(store.state)).catch((err) => notify(`No class session: ${err.message}`)));
  $("follow-action").addEventListener("click", (e) => {
    const does = e.currentTarget.dataset.does;
    if (does === "end") classroom.end();
    else if (does === "breakAway") classroom.breakAway();
    else if (does === "rejoin") classroom.rejoin();
    else dispatch({ type: "follow", follow: null });
  });
  $("copy-link").addEventListener("click", copyLink);
  $("compare-open").addEventListener("click", () => compareDialog.open());
  $("apply").addEventListener("click", () => {
    const config = editors().config ?? store.state.config;
    if (config) run(config, { typed: true });
  });
  $("export-handout").addEventListener("click", () => printHandout().catch((err) => notify(`No handout: ${err.message}`)));
  window.addEventListener("afterprint", clearHandout);
  $("export-json").addEventListener("click", () => {
    if (store.state.trace) exportJson(store.state.trace.model.toDocument());
  });
  $("export-png").addEventListener("click", async () => {
    if (!store.state.trace) return;
    // the picture includes slices scrolled out of view, which content-visibility lets
    // the page skip drawing: draw them first
    showForExport(null);
    const blob = await stagePng($("stage"), window.devicePixelRatio || 1);
    download(blob, `convscope-step-${shownStep() + 1}.png`);
  });
  const list = $("keys-list");
  for (const [k, what] of KEY_SHEET) {
    const dt = document.createElement("dt");
    dt.textContent = k;
    const dd = document.createElement("dd");
    dd.textContent = what;
    list.append(dt, dd);
  }
}

function wireStage() {
  // a click on a cell never focuses it: the keys stay the player's (js/stage/cell-keys.js)
  $("stage").addEventListener("mousedown", (e) => {
    if (e.target.closest(".cell")) {
      e.preventDefault();
      $("stage").focus({ preventScroll: true });
    }
  });
  // a click on any cell opens its story (picks it, while a question asks for cells)
  $("stage").addEventListener("click", (e) => {
    const cell = e.target.closest(".cell");
    if (cell) clickCell(cell.dataset.tensor, Number(cell.dataset.idx));
  });
}

/** A cell clicked (or Enter on a focused cell): its story, or an answer's pick. */
function clickCell(tensor, flat) {
  if (picksCells()) dispatch({ type: "pickCell", tensor, flat });
  else dispatch({ type: "inspect", tensor, flat });
}

const picksCells = () => answerHidden(store.state) && questionOf(store.state)?.kind === "reads";

/** Keys a question on show takes (Predict): Y / N answer a yes-or-no question, Enter
 *  checks the cells picked, and a number typed on the stage goes to the answer's field.
 *  True when the key was the question's. */
function questionKey(e) {
  if (e.ctrlKey || e.metaKey || e.altKey || !answerHidden(store.state)) return false;
  const q = questionOf(store.state);
  if (!q || isTypingField(e.target)) return false;
  if (q.kind === "changes" && /^[yn]$/i.test(e.key)) {
    e.preventDefault();
    dispatch({ type: "answer", given: e.key.toLowerCase() === "y" });
    return true;
  }
  if (q.kind === "reads" && e.key === "Enter" && !e.target.closest?.("button, a, select, summary")) {
    e.preventDefault();
    dispatch({ type: "answer" });
    return true;
  }
  // (the key itself lands in the field it focuses)
  if (questionCard.takesTyping() && e.key.length === 1 && /[\d.,\-−(\[]/.test(e.key)) {
    questionCard.focusInput();
    return true;
  }
  return false;
}

/** Scroll the page so that `e`, when it starts below the screen or in its last fifth,
 *  starts just under what sticks at the page's top (a phone's docked player), or at the top. */
function showBelowDock(e) {
  const top = e.getBoundingClientRect().top;
  if (top < 0.8 * window.innerHeight) return;
  const dock = document.querySelector(".dock");
  const covered = dock && getComputedStyle(dock).position === "sticky" ? dock.getBoundingClientRect().height : 0;
  const smooth = !window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  window.scrollBy({ top: top - covered - 8, behavior: smooth ? "smooth" : "auto" });
}

/** The player's keys, whatever has focus (capture phase: a focused select, range or
 *  button never sees them). */
function onKey(e) {
  if ($("keys-dialog").open && e.key !== "?") return;
  if ($("anim-dialog").open || compareDialog.isOpen) return; // (their fields and buttons take the keys)
  // a cell focused from the keyboard: the arrows move between cells, Enter opens its story
  const onCell = cellKey(e);
  if (onCell) {
    e.preventDefault();
    e.stopPropagation();
    if (onCell === "inspect") clickCell(e.target.dataset.tensor, Number(e.target.dataset.idx));
    else if (onCell === "leave") {
      if (store.state.inspect) dispatch({ type: "inspect", tensor: null });
      giveKeysToStage();
    }
    return;
  }
  if (questionKey(e)) {
    e.stopPropagation();
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
}

export function wire() {
  wireButtons();
  wireStage();
  window.addEventListener("keydown", onKey, true);
  const roomChanged = new ResizeObserver(() => {
    forgetMetrics(); // (a window crossing a media query changes the style sheet's sizes)
    readRoom();
    requestRedraw();
  });
  roomChanged.observe($("stage"));
  roomChanged.observe(document.querySelector(".dock")); // (on a phone the room is the screen below it)
  roomChanged.observe($("code")); // (and above the code strip)
  new ResizeObserver(() => fitPhaseMarks($("scrub-phases"))).observe($("scrub-phases"));
  window.addEventListener("resize", () => readRoom()); // (a phone's screen height is the room)
  // back/forward between setups, and an address edited by hand
  window.addEventListener("popstate", () => openPlace(readUrl()));
}
