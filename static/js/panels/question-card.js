// The question card in the step panel, of Predict (key Q) and of a class question: the
// step's question while its answer is hidden (a number or sizes typed, yes or no, cells
// clicked on the stage; a student's sent to the teacher), then the verdict and what the
// answer is made of; on a teacher's page, the count of answers, then the answers. Drawn
// from the page state; its inputs become actions through the callbacks it is made with.

import { questionOf, answerHidden, classQuestion } from "../model/page-state.js";
import { HOW_TO_ANSWER, kindLabel, givenText, answerText, parseNumber, parseShape } from "../model/predict.js";
import { formatLong } from "../model/number-format.js";

const $ = (id) => document.getElementById(id);

/** The part of a question's explanation that is its own (the step's text follows it). */
export function ownExplanation(question, stepText) {
  const e = question.explanation;
  return stepText && e.endsWith(stepText) ? e.slice(0, e.length - stepText.length).trim() : e;
}

/** The verdict line: right, not quite (with what was given), or the answer shown; then
 *  what the answer is made of (the step's own text follows in the step panel). */
export function verdictText(question, verdict, stepText) {
  const why = ownExplanation(question, stepText);
  if (verdict.skipped) return `The answer, ${answerText(question)}: ${why}`;
  if (verdict.right) return `✓ Right, ${answerText(question)}: ${why}`;
  return `✗ Not quite (you said ${givenText(question, verdict.given)}): ${why}`;
}

/** The answers a teacher's card lists (the rest are in the CSV). */
const TALLY_ROWS = 4;

/** An answer of the tally as the card says it (a set of cells: how many, and how many of
 *  the answer's it missed and added). */
function givenOf(question, given) {
  if (question.kind === "value") return formatLong(given);
  if (question.kind !== "reads") return givenText(question, given);
  const want = new Set(question.answer.cells.map((c) => c.join(",")));
  const got = new Set(given.map((c) => c.join(",")));
  const missed = [...want].filter((c) => !got.has(c)).length;
  const extra = [...got].filter((c) => !want.has(c)).length;
  const cells = `${got.size} cell${got.size === 1 ? "" : "s"}`;
  return missed || extra ? `${cells} (${missed} missed, ${extra} extra)` : cells;
}

export class QuestionCard {
  /** on: {answer(given), error(text), reveal(), kind(pick), close(), csv(tally)}: what the
   *  card's inputs ask for (close and csv: a teacher's class question). */
  constructor(on) {
    this.on = on;
    this.drawn = null;
    this.input = $("ask-input");
    $("ask-form").addEventListener("submit", (e) => {
      e.preventDefault();
      this.submit();
    });
    $("ask-yes").addEventListener("click", () => on.answer(true));
    $("ask-no").addEventListener("click", () => on.answer(false));
    $("ask-reveal").addEventListener("click", () => on.reveal());
    for (const id of ["ask-kinds", "ask-class-kinds"]) {
      $(id).addEventListener("click", (e) => {
        const b = e.target.closest("button[data-pick]");
        if (b) on.kind(Number(b.dataset.pick));
      });
    }
    this.kindsDrawn = {};
    $("ask-close").addEventListener("click", () => on.close());
    $("ask-csv").addEventListener("click", () => this.tally && on.csv(this.tally));
    this.tally = null;
    this.question = null;
  }

  /** Check what is typed (or the cells picked) against the question on show. */
  submit() {
    const q = this.question;
    if (!q) return;
    if (q.kind === "reads") return this.on.answer(null);
    if (q.kind === "changes") return;
    const read = q.kind === "shape" ? parseShape(this.input.value) : parseNumber(this.input.value);
    if (read.error) this.on.error(read.error);
    else this.on.answer(read.given);
  }

  /** Draw the card for `state` (the step's event text: `stepText`). */
  draw(state, stepText) {
    const a = state.asking;
    const q = questionOf(state);
    const key = [a, q, stepText, state.score, state.follow];
    if (this.drawn && key.every((v, i) => v === this.drawn[i])) return;
    const before = this.drawn ? this.drawn[0] : null;
    this.drawn = key;
    this.question = q;
    const card = $("ask");
    const hidden = answerHidden(state);
    $("equation").classList.toggle("asking", hidden);
    card.hidden = !a;
    if (!a) return;
    const teacher = classQuestion(state, "teacher");
    const student = classQuestion(state, "student");
    $("ask-tag").textContent = a.klass ? "Class question" : "Predict";
    $("ask-prompt").textContent = q ? q.prompt : "Finding this step's question…";
    $("ask-prompt").hidden = Boolean(a.verdict && q);
    const score = state.score;
    $("ask-score").textContent = !a.klass && score.asked ? `${score.right} of ${score.asked} right` : "";
    const sent = student && student.sent !== null;
    $("ask-form").hidden = !hidden || !q || Boolean(teacher) || sent;
    // (a student's answer sent: said where the verdict comes at the reveal)
    const verdict = a.verdict && q ? verdictText(q, a.verdict, stepText) : sent && q ? `Sent: ${givenText(q, student.sent)}. The answer shows when the teacher reveals it.` : "";
    $("ask-verdict").textContent = verdict;
    $("ask-verdict").title = verdict; // (the whole of it, where the line is cut)
    card.dataset.verdict = a.verdict ? (a.verdict.skipped ? "shown" : a.verdict.right ? "right" : "wrong") : "";
    this.drawClass(teacher, a, q, state.follow);
    const how = $("ask-how");
    if (!hidden || !q || teacher || sent) {
      how.textContent = "";
      return;
    }
    const typed = q.kind === "value" || q.kind === "shape";
    this.input.hidden = !typed;
    this.input.inputMode = q.kind === "value" ? "decimal" : "text";
    this.input.placeholder = q.kind === "value" ? "a number" : "1×2×3×3";
    // a new question starts empty (an error keeps what was typed: nothing typed is lost)
    if (!before || before.step !== a.step || before.pick !== a.pick) this.input.value = "";
    $("ask-yes").hidden = $("ask-no").hidden = q.kind !== "changes";
    $("ask-check").hidden = q.kind === "changes";
    $("ask-check").textContent = student ? "Send" : "Check";
    $("ask-reveal").hidden = Boolean(student); // (the teacher reveals a class question)
    how.textContent = a.error || (q.kind === "reads" ? `${HOW_TO_ANSWER.reads} (${a.picked.length} picked)` : HOW_TO_ANSWER[q.kind]);
    how.classList.toggle("field-error", Boolean(a.error));
    this.input.setAttribute("aria-invalid", a.error ? "true" : "false");
    this.drawKinds("ask-kinds", a, student ? [] : a.questions);
  }

  /** The kinds of the step's questions, to ask another (not on a student's class
   *  question), in element `id` (drawn again only when they or the pick change). */
  drawKinds(id, a, questions) {
    const drawn = this.kindsDrawn[id];
    if (drawn && drawn.questions === questions && drawn.pick === a.pick) return;
    this.kindsDrawn[id] = { questions, pick: a.pick };
    const kinds = questions.map((other, i) => {
      const b = document.createElement("button");
      b.type = "button";
      b.dataset.pick = String(i);
      b.textContent = kindLabel(other);
      b.setAttribute("aria-pressed", String(i === a.pick));
      return b;
    });
    $(id).replaceChildren(...(kinds.length > 1 ? [document.createTextNode("ask about: "), ...kinds] : []));
  }

  /** A teacher's class question: how many answered, Reveal; then the answers. */
  drawClass(teacher, a, q, follow) {
    const box = $("ask-class");
    box.hidden = !teacher;
    if (!teacher) return;
    const tally = teacher.tally;
    const following = follow && follow.followers != null ? ` (${follow.followers} following)` : "";
    $("ask-count").textContent = `${tally ? tally.answered : 0} answered${following}`;
    $("ask-close").hidden = Boolean(a.verdict);
    const shown = Boolean(a.verdict && tally && tally.distribution && q);
    this.tally = shown ? tally : null;
    $("ask-csv").hidden = !shown;
    $("ask-right").textContent = shown && tally.answered ? `${tally.right} of ${tally.answered} right (${Math.round((100 * tally.right) / tally.answered)}%)` : "";
    const most = shown ? Math.max(1, ...tally.distribution.map((d) => d.count)) : 1;
    const rows = shown
      ? tally.distribution.slice(0, TALLY_ROWS).map((d) => {
          const li = document.createElement("li");
          li.dataset.right = String(d.right);
          li.style.setProperty("--share", String(d.count / most));
          // (a wrong number a catalogued mistake's code leaves there: the mistake named)
          li.textContent = `${d.right ? "✓" : "✗"} ${givenOf(q, d.given)}: ${d.count}${d.mistake ? ` · ${d.mistake}` : ""}`;
          if (d.mistake) li.dataset.mistake = d.mistake;
          return li;
        })
      : [];
    if (shown && tally.distribution.length > TALLY_ROWS) rows.push(Object.assign(document.createElement("li"), { textContent: `… ${tally.distribution.length - TALLY_ROWS} other answers (in the CSV)` }));
    $("ask-tally").replaceChildren(...rows);
    this.drawKinds("ask-class-kinds", a, a.verdict ? [] : a.questions);
  }

  /** Put the keys in the answer field (a digit typed on the stage starts the answer). */
  focusInput() {
    if (this.question && !this.input.hidden && !$("ask-form").hidden) this.input.focus({ preventScroll: true });
  }

  /** The question on show takes typed answers. */
  takesTyping() {
    return Boolean(this.question && (this.question.kind === "value" || this.question.kind === "shape") && !$("ask-form").hidden);
  }
}
