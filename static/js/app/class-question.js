// A class question (follow mode, server/follow/question_routes.py): the teacher's page
// asks the class about the next step (Ask, key A), counts the answers while they come,
// closes the question and shows the answers (Reveal, or →); a student's page sends its
// answer once and is shown the step when the teacher reveals it.

import { currentStep, classQuestion, questionOf } from "../model/page-state.js";
import { askable, answerOut } from "../model/predict.js";
import { fetchQuestions } from "../io/api.js";
import { voterToken } from "../io/predict-memory.js";
import { store, dispatch, classroom, handle } from "./page.js";
import { notify } from "./lessons.js";

/** How often (ms) a teacher's page asks how many have answered. */
const TALLY_MS = 800;

let polling = null; // {id, timer}: the count being asked for

/** The teacher asks the class about the step after the one on show (`pick`: which of its
 *  questions; the same step again when a question is open, to ask another of its kinds). */
export async function askClass(pick = 0) {
  const state = store.state;
  const open = classQuestion(state, "teacher");
  if (!state.trace || !state.follow || state.follow.role !== "teacher") {
    notify("Ask the class needs a class session: press Class first.");
    return;
  }
  const step = open && !state.asking.verdict ? state.asking.step : currentStep(state) + 1;
  if (step >= state.trace.model.total) {
    notify("This is the last step: there is no step after it to ask about.");
    return;
  }
  const { config, model } = state.trace;
  try {
    const questions = askable(await fetchQuestions(config, step));
    const question = questions[pick] ?? questions[0];
    if (!question) throw new Error(`step ${step + 1} has nothing a class can be asked`);
    const asked = await classroom.askClass(config, step, question.index);
    if (store.state.trace?.model !== model) return; // (another trace meanwhile)
    dispatch({ type: "classAsked", id: asked.question, step, questions, pick: questions.indexOf(question) });
  } catch (err) {
    notify(`The class was not asked: ${err.message}`);
  }
}

handle("askClass", askClass);

/** The teacher closes the question: the answers, and every page shows the step. */
export async function revealClass() {
  const k = classQuestion(store.state, "teacher");
  if (!k || store.state.asking.verdict) return;
  try {
    dispatch({ type: "classRevealed", id: k.id, tally: await classroom.closeQuestion(k.id) });
  } catch (err) {
    notify(`The answers could not be revealed: ${err.message}`);
  }
}

handle("revealClass", revealClass);

/** What a change of state sets going for a class question (effects.js calls it). */
export function classQuestionEffects(state, prev) {
  // a teacher's open question: its count asked for while it is open
  const k = classQuestion(state, "teacher");
  const counting = k && !state.asking.verdict ? k.id : null;
  if ((polling && polling.id) !== counting) {
    if (polling) clearInterval(polling.timer);
    polling = counting ? { id: counting, timer: setInterval(() => countAnswers(counting), TALLY_MS) } : null;
  }
  // a student's answer: sent once, as it was given
  const s = classQuestion(state, "student");
  const before = classQuestion(prev, "student");
  if (s && s.sent !== null && (!before || before.id !== s.id || before.sent === null)) {
    const q = questionOf(state);
    const meta = q.kind === "reads" ? state.trace.model.tensors[q.answer.tensor] : null;
    classroom.answerClass(s.id, voterToken(), answerOut(q, s.sent, meta)).catch((err) => dispatch({ type: "classSendFailed", id: s.id, message: `Not sent: ${err.message}` }));
  }
}

async function countAnswers(id) {
  try {
    dispatch({ type: "classTally", id, tally: await classroom.tally(id) });
  } catch {
    /* the next count comes in a moment */
  }
}
