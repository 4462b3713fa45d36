// The question card of Predict (key Q) in the step panel: the step's question while its
// answer is hidden (a number or sizes typed, yes or no, cells clicked on the stage), then
// the verdict and what the answer is made of. Drawn from the page state; its inputs
// become actions through the callbacks it is made with.

import { questionOf, answerHidden } from "../model/page-state.js";
import { HOW_TO_ANSWER, kindLabel, givenText, answerText, parseNumber, parseShape } from "../model/predict.js";

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

export class QuestionCard {
  /** on: {answer(given), error(text), reveal(), kind(pick)}: what the card's inputs ask for. */
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
    $("ask-kinds").addEventListener("click", (e) => {
      const b = e.target.closest("button[data-pick]");
      if (b) on.kind(Number(b.dataset.pick));
    });
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
    const key = [a, q, stepText, state.score];
    if (this.drawn && key.every((v, i) => v === this.drawn[i])) return;
    const before = this.drawn ? this.drawn[0] : null;
    this.drawn = key;
    this.question = q;
    const card = $("ask");
    const hidden = answerHidden(state);
    $("equation").classList.toggle("asking", hidden);
    card.hidden = !a;
    if (!a) return;
    $("ask-prompt").textContent = q ? q.prompt : "Finding this step's question…";
    $("ask-prompt").hidden = Boolean(a.verdict && q);
    const score = state.score;
    $("ask-score").textContent = score.asked ? `${score.right} of ${score.asked} right` : "";
    $("ask-form").hidden = !hidden || !q;
    const verdict = a.verdict && q ? verdictText(q, a.verdict, stepText) : "";
    $("ask-verdict").textContent = verdict;
    $("ask-verdict").title = verdict; // (the whole of it, where the line is cut)
    card.dataset.verdict = a.verdict ? (a.verdict.skipped ? "shown" : a.verdict.right ? "right" : "wrong") : "";
    if (!hidden || !q) {
      $("ask-how").textContent = "";
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
    const how = $("ask-how");
    how.textContent = a.error || (q.kind === "reads" ? `${HOW_TO_ANSWER.reads} (${a.picked.length} picked)` : HOW_TO_ANSWER[q.kind]);
    how.classList.toggle("field-error", Boolean(a.error));
    this.input.setAttribute("aria-invalid", a.error ? "true" : "false");
    const kinds = a.questions.map((other, i) => {
      const b = document.createElement("button");
      b.type = "button";
      b.dataset.pick = String(i);
      b.textContent = kindLabel(other);
      b.setAttribute("aria-pressed", String(i === a.pick));
      return b;
    });
    $("ask-kinds").replaceChildren(...(kinds.length > 1 ? [document.createTextNode("ask about: "), ...kinds] : []));
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
