// Predict, then reveal on the page: reading a typed answer, judging it by the server's
// `accept` interval and the answer's cells, and the page state's questions (a step taken
// forward one at a time is asked first; a jump is not; a score per lesson).

import { test } from "node:test";
import assert from "node:assert/strict";
import { parseNumber, parseShape, isRight, askable, readScore, scoreKey, NO_SCORE, pickHeat } from "../../static/js/model/predict.js";
import { initialState, reduce, currentStep, answerHidden, questionOf } from "../../static/js/model/page-state.js";
import { TraceModel, tensorMeta } from "../../static/js/model/trace-model.js";
import { loadFixture, headerOf } from "./fixtures.mjs";

test("a typed number: a minus sign, a decimal comma, an exponent; words are no number", () => {
  assert.deepEqual(parseNumber(" −1,5 "), { given: -1.5 });
  assert.deepEqual(parseNumber("2.5e-3"), { given: 0.0025 });
  assert.deepEqual(parseNumber(".5"), { given: 0.5 });
  assert.match(parseNumber("").error, /Type a number/);
  assert.match(parseNumber("five").error, /“five” is not a number/);
  assert.match(parseNumber("1.2.3").error, /not a number/);
  assert.match(parseNumber("Infinity").error, /not a number/);
});

test("a typed shape: ×, x, commas, spaces or brackets between whole sizes", () => {
  for (const text of ["1×2×3×3", "1x2x3x3", "1, 2, 3, 3", "(1 2 3 3)", "[1,2,3,3]"]) assert.deepEqual(parseShape(text), { given: [1, 2, 3, 3] }, text);
  assert.match(parseShape("").error, /Type the sizes/);
  assert.match(parseShape("1×2.5").error, /not a list of sizes/);
});

test("a number is right inside the server's interval, its ends included, and nowhere else", () => {
  const q = { kind: "value", answer: 5.525781709334531, accept: [5.525775, 5.525785] };
  assert.ok(isRight(q, 5.52578) && isRight(q, 5.525775) && isRight(q, 5.525785));
  assert.ok(!isRight(q, 5.5258) && !isRight(q, 5.525774) && !isRight(q, Number.NaN) && !isRight(q, "5.52578"));
});

test("a shape, a yes or no and a set of cells are right whole", () => {
  const shape = { kind: "shape", answer: [1, 2, 3, 3] };
  assert.ok(isRight(shape, [1, 2, 3, 3]) && !isRight(shape, [1, 2, 3]) && !isRight(shape, [1, 2, 3, 4]));
  const changes = { kind: "changes", answer: false };
  assert.ok(isRight(changes, false) && !isRight(changes, true) && !isRight(changes, 0));
  const meta = tensorMeta("xp", { shape: [1, 1, 3, 3], data: new Array(9).fill(0) });
  const reads = { kind: "reads", answer: { tensor: "xp", cells: [[0, 0, 0, 1], [0, 0, 1, 1]] } };
  assert.ok(isRight(reads, [4, 1], meta));
  assert.ok(!isRight(reads, [1], meta) && !isRight(reads, [1, 4, 5], meta) && !isRight(reads, [1, 5], meta));
});

test("the page asks shape, changes, value, reads in that order, never writes", () => {
  const q = (kind) => ({ kind });
  assert.deepEqual(askable([q("value"), q("reads"), q("writes"), q("changes"), q("value")]).map((x) => x.kind), ["changes", "value", "value", "reads"]);
});

test("a score read back from storage: ours, or none", () => {
  assert.deepEqual(readScore('{"right":2,"asked":3}'), { right: 2, asked: 3 });
  for (const bad of [null, "", "{", '{"right":4,"asked":3}', '{"right":-1,"asked":3}', '{"right":1.5,"asked":3}']) assert.deepEqual(readScore(bad), NO_SCORE, bad);
  assert.equal(scoreKey("cs231n"), "convscope.predict.score.cs231n");
  assert.equal(scoreKey(""), "convscope.predict.score.custom");
});

// ---- the page state --------------------------------------------------------------

function withTrace() {
  const doc = loadFixture("trace_worked_example.json");
  const model = new TraceModel(headerOf(doc));
  model.addEvents(doc.events);
  let s = reduce(initialState(), { type: "edited", config: { x: 1 } });
  s = reduce(s, { type: "header", model, config: { x: 1 }, lesson: "", step: 0 });
  s = reduce(s, { type: "events", model });
  return { s, model, doc };
}

/** Predict on, one step forward from step 0: step 1 asked (with `questions` arrived, if given). */
function askedAtOne(questions = null) {
  const { s, model } = withTrace();
  const t = reduce(reduce(s, { type: "predict", on: true }), { type: "move", how: "next" });
  return { t: questions ? reduce(t, { type: "questions", step: 1, model, questions }) : t, model };
}

const VALUE = { kind: "value", prompt: "?", answer: 37, accept: [36.99995, 37.00005], explanation: "", cell: { tensor: "out", index: [0, 0, 1, 0] } };
const READS = { kind: "reads", prompt: "?", answer: { tensor: "x", cells: [[0, 0, 0, 0]] }, explanation: "" };

test("Predict off: the player moves as ever", () => {
  const { s } = withTrace();
  const t = reduce(s, { type: "move", how: "next" });
  assert.equal(currentStep(t), 1);
  assert.equal(t.asking, null);
});

test("Predict on: one step forward asks first, hides the answer, and stops a play", () => {
  let { t, model } = askedAtOne();
  assert.equal(currentStep(t), 1);
  assert.equal(t.asking.step, 1);
  assert.ok(answerHidden(t));
  assert.equal(questionOf(t), null, "no question until they arrive");
  // an answer before the questions is nothing
  assert.equal(reduce(t, { type: "answer", given: 37 }), t);
  // questions of another trace, or of a step left, are dropped
  assert.equal(reduce(t, { type: "questions", step: 1, model: {}, questions: [VALUE] }), t);
  assert.equal(reduce(t, { type: "questions", step: 2, model, questions: [VALUE] }), t);
  t = reduce(t, { type: "questions", step: 1, model, questions: [READS, { kind: "writes" }, VALUE] });
  // (each keeps its place in the server's list: a class question is asked by it)
  assert.deepEqual(t.asking.questions.map((q) => [q.kind, q.index]), [["value", 2], ["reads", 0]]);
  assert.deepEqual(questionOf(t), { ...VALUE, index: 2 });
  // a play from an asked step stops at the next step, asking
  const played = reduce(reduce(reduce(t, { type: "answer", given: 37 }), { type: "play" }), { type: "tick", steps: 5 });
  assert.equal(currentStep(played), 2);
  assert.equal(played.playing, false);
  assert.ok(answerHidden(played));
});

test("an answer is judged, scored once, and its step is not asked again", () => {
  const { t } = askedAtOne([VALUE]);
  const wrong = reduce(t, { type: "answer", given: 36 });
  assert.deepEqual(wrong.asking.verdict, { right: false, given: 36 });
  assert.deepEqual(wrong.score, { right: 0, asked: 1 });
  assert.ok(!answerHidden(wrong));
  // answered: a second answer changes nothing
  assert.equal(reduce(wrong, { type: "answer", given: 37 }), wrong);
  const right = reduce(t, { type: "answer", given: 37.00001 });
  assert.deepEqual(right.score, { right: 1, asked: 1 });
  // back and forward again: not asked twice
  const again = reduce(reduce(right, { type: "move", how: "prev" }), { type: "move", how: "next" });
  assert.equal(currentStep(again), 1);
  assert.equal(again.asking, null);
});

test("the first step forward on an open question reveals it, unscored; the next moves on", () => {
  const { t } = askedAtOne([VALUE]);
  const shown = reduce(t, { type: "move", how: "next" });
  assert.equal(currentStep(shown), 1);
  assert.deepEqual(shown.asking.verdict, { skipped: true });
  assert.deepEqual(shown.score, NO_SCORE);
  const on = reduce(shown, { type: "move", how: "next" });
  assert.equal(currentStep(on), 2);
  assert.ok(answerHidden(on));
});

test("Space on an open question shows it; a play on from there leaves it behind", () => {
  const { t } = askedAtOne([VALUE]);
  const shown = reduce(t, { type: "toggle" });
  assert.equal(shown.playing, false);
  assert.deepEqual(shown.asking.verdict, { skipped: true });
  // answered steps ahead are played through; the question of the step left goes
  const ahead = { ...reduce(shown, { type: "play" }), answered: { 1: true, 2: true, 3: true } };
  const played = reduce(ahead, { type: "tick", steps: 1 });
  assert.equal(currentStep(played), 2);
  assert.equal(played.asking, null);
});

test("a jump, a step back or Predict off closes an open question; it is asked again later", () => {
  const { t } = askedAtOne([VALUE]);
  for (const away of [{ type: "goto", step: 5 }, { type: "move", how: "prev" }, { type: "move", how: "last" }, { type: "predict", on: false }]) {
    const left = reduce(t, away);
    assert.equal(left.asking, null, JSON.stringify(away));
  }
  const back = reduce(reduce(t, { type: "move", how: "prev" }), { type: "move", how: "next" });
  assert.ok(answerHidden(back), "left unanswered: asked again");
});

test("cells are picked on the asked tensor only, a second click unpicks, and the set is judged", () => {
  let { t } = askedAtOne([VALUE, READS]);
  assert.equal(reduce(t, { type: "pickCell", tensor: "x", flat: 0 }), t, "the value question takes no cells");
  t = reduce(t, { type: "askKind", pick: 1 });
  assert.deepEqual(questionOf(t), { ...READS, index: 1 });
  const early = reduce(t, { type: "answer" });
  assert.match(early.asking.error, /Click \(or tap\) the cells it reads first/);
  assert.ok(answerHidden(early) && early.score === t.score);
  assert.equal(reduce(t, { type: "pickCell", tensor: "w", flat: 0 }), t);
  t = reduce(t, { type: "pickCell", tensor: "x", flat: 0 });
  t = reduce(t, { type: "pickCell", tensor: "x", flat: 4 });
  t = reduce(t, { type: "pickCell", tensor: "x", flat: 4 });
  assert.deepEqual(t.asking.picked, [0]);
  const judged = reduce(t, { type: "answer" });
  assert.deepEqual(judged.asking.verdict, { right: true, given: [0] });
});

test("a step with nothing the page asks is shown at once; a new trace forgets what was asked", () => {
  let { t, model } = askedAtOne();
  const none = reduce(t, { type: "questions", step: 1, model, questions: [{ kind: "writes" }] });
  assert.equal(none.asking, null);
  assert.ok(none.answered[1]);
  const failed = reduce(t, { type: "questions", step: 1, model, questions: null, error: "No questions: the server is away." });
  assert.equal(failed.asking, null);
  assert.equal(failed.notice.text, "No questions: the server is away.");
  t = reduce(none, { type: "header", model, config: { x: 1 }, lesson: "", step: 0 });
  assert.deepEqual(t.answered, {});
});

// ---- a class question (follow mode) --------------------------------------------

test("a student's page opens the teacher's question at its step, sends once, and is judged at the reveal", () => {
  const { s, model } = withTrace();
  const at = reduce(s, { type: "goto", step: 1 });
  const ask = { id: 7, step: 1, index: 2, revealed: false };
  let t = reduce(at, { type: "classQuestion", ask });
  assert.ok(answerHidden(t));
  assert.deepEqual(t.asking.klass, { role: "student", id: 7, index: 2, sent: null });
  // the question the teacher asked (by its place in the server's list), not the page's first
  t = reduce(t, { type: "questions", step: 1, model, questions: [READS, { kind: "writes" }, VALUE] });
  assert.equal(questionOf(t).kind, "value");
  assert.equal(reduce(t, { type: "askKind", pick: 1 }), t, "a class question's kind is the teacher's");
  const sent = reduce(t, { type: "answer", given: 36 });
  assert.equal(sent.asking.klass.sent, 36);
  assert.ok(answerHidden(sent), "nothing is shown before the reveal");
  assert.equal(reduce(sent, { type: "answer", given: 37 }), sent, "sent once");
  // a refused send: the answer may be given again, with why
  const failed = reduce(sent, { type: "classSendFailed", id: 7, message: "Not sent: the teacher has closed question 7" });
  assert.equal(failed.asking.klass.sent, null);
  assert.match(failed.asking.error, /closed question 7/);
  // the place again (a heartbeat) changes nothing; Predict off keeps the class's question
  assert.equal(reduce(sent, { type: "classQuestion", ask }), sent);
  assert.equal(reduce(sent, { type: "predict", on: false }).asking, sent.asking);
  const revealed = reduce(sent, { type: "classQuestion", ask: { ...ask, revealed: true } });
  assert.deepEqual(revealed.asking.verdict, { right: false, given: 36 });
  assert.deepEqual(revealed.score, s.score, "a class question is not the lesson's own score");
  // nothing sent: the reveal shows the answer; a place with no question closes it
  assert.deepEqual(reduce(t, { type: "classQuestion", ask: { ...ask, revealed: true } }).asking.verdict, { skipped: true });
  assert.equal(reduce(t, { type: "classQuestion", ask: null }).asking, null);
  // a question revealed before this page heard of it (a late join, a rejoin) opens nothing
  assert.equal(reduce(at, { type: "classQuestion", ask: { ...ask, revealed: true } }).asking, null);
  // the session over, or broken away from: the question goes, the step shows
  const following = reduce(t, { type: "follow", follow: { role: "student", code: "ABC", following: true } });
  assert.equal(following.asking, t.asking);
  assert.equal(reduce(t, { type: "follow", follow: { role: "ended", message: "over" } }).asking, null);
});

test("a teacher's page moves to the asked step once the server asked it, counts, and reveals", () => {
  const { s } = withTrace();
  const questions = [{ ...VALUE, index: 2 }];
  let t = reduce(s, { type: "classAsked", id: 3, step: 1, questions, pick: 0 });
  assert.equal(currentStep(t), 1);
  assert.ok(answerHidden(t));
  assert.equal(reduce(t, { type: "answer", given: 37 }), t, "the teacher does not answer");
  assert.equal(reduce(t, { type: "classTally", id: 2, tally: { answered: 5 } }), t, "another question's count");
  t = reduce(t, { type: "classTally", id: 3, tally: { answered: 5, open: true } });
  assert.equal(t.asking.klass.tally.answered, 5);
  const shown = reduce(t, { type: "classRevealed", id: 3, tally: { answered: 5, open: false, distribution: [], right: 0 } });
  assert.deepEqual(shown.asking.verdict, { skipped: true });
  assert.equal(shown.asking.klass.tally.open, false);
});

test("a class's picks of a reads question: how many pages picked each cell, and their share", () => {
  const meta = tensorMeta("xp", { shape: [1, 1, 3, 3], data: new Array(9).fill(0) });
  const distribution = [
    { given: [[0, 0, 0, 0], [0, 0, 1, 1]], count: 3 },
    { given: [[0, 0, 1, 1]], count: 1 },
  ];
  assert.deepEqual(pickHeat(distribution, meta, 4), [
    { flat: 0, count: 3, share: 0.75 },
    { flat: 4, count: 4, share: 1 },
  ]);
  assert.deepEqual(pickHeat([], meta, 0), []);
});
