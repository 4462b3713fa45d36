// Predict, then reveal: which of a step's questions the page asks, what a student's
// answer is and whether it is right, and the score kept per lesson. Pure: the questions
// come from the server (POST /api/questions) or the lesson file, both made by
// convcore/trace/questions.py; nothing here knows a rule of its own (a number is right
// inside the question's `accept` interval, which the server computes).

import { unravel } from "./trace-model.js";
import { formatLong } from "./number-format.js";

/** The kinds the page asks, the first a step has is asked first. (`writes` is not: the
 *  page marks the written cells as it hides their values, which would answer it.) */
export const PAGE_KINDS = ["shape", "changes", "value", "reads"];

/** What each kind asks the student to do, as the question card says it. */
export const HOW_TO_ANSWER = {
  value: "Type the number and press Enter.",
  shape: "Type the sizes (1×2×3×3, or 1 2 3 3) and press Enter.",
  changes: "Answer Y (yes) or N (no).",
  reads: "Click (or tap) each cell it reads, then press Enter.",
};

/** The step's questions the page asks, in PAGE_KINDS' order (a value question per
 *  written tensor keeps the step's order), each with `index`: its place in the server's
 *  list (a class question is asked by it). */
export function askable(questions) {
  const indexed = questions.map((q, index) => ({ ...q, index }));
  return PAGE_KINDS.flatMap((kind) => indexed.filter((q) => q.kind === kind));
}

/** An answer as the server takes it: a reads answer's flat cells as indices of `meta`. */
export function answerOut(question, given, meta) {
  return question.kind === "reads" ? given.map((flat) => unravel(flat, meta.shape)) : given;
}

/** The label of a question on the card's kind switch. */
export function kindLabel(question) {
  switch (question.kind) {
    case "value":
      return `${question.cell.tensor}'s value`;
    case "reads":
      return `the cells of ${question.answer.tensor} it reads`;
    case "shape":
      return "out's shape";
    default:
      return "whether it changes anything";
  }
}

/** A typed number: "−1.5", "1,5e-3", " 2 " -> {given: number} or {error}. */
export function parseNumber(text) {
  const t = String(text).trim().replace(/−/g, "-").replace(/,/g, ".");
  if (!t) return { error: "Type a number first." };
  const given = Number(t);
  if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t) || !Number.isFinite(given)) return { error: `“${text.trim()}” is not a number.` };
  return { given };
}

/** A typed shape: "1×2×3×3", "1, 2, 3, 3", "(1 2 3 3)" -> {given: [int]} or {error}. */
export function parseShape(text) {
  const parts = String(text)
    .replace(/[()[\]]/g, " ")
    .split(/[×x*,\s]+/i)
    .filter(Boolean);
  if (!parts.length) return { error: "Type the sizes first, as 1×2×3×3." };
  if (!parts.every((p) => /^\d+$/.test(p))) return { error: `“${String(text).trim()}” is not a list of sizes (whole numbers, as 1×2×3×3).` };
  return { given: parts.map(Number) };
}

/** The key of an index (its numbers joined), for comparing sets of cells. */
const indexKey = (index) => index.join(",");

/**
 * Whether `given` answers `question`: a number inside `accept` (the server's interval:
 * the trace's six significant digits), the same sizes, the same yes or no, the same set
 * of cells (`given`: their flat indices in tensor `meta`).
 */
export function isRight(question, given, meta = null) {
  switch (question.kind) {
    case "value":
      return typeof given === "number" && given >= question.accept[0] && given <= question.accept[1];
    case "shape":
      return Array.isArray(given) && given.length === question.answer.length && given.every((v, i) => v === question.answer[i]);
    case "changes":
      return given === question.answer;
    case "reads": {
      const want = new Set(question.answer.cells.map(indexKey));
      const got = new Set(given.map((flat) => indexKey(unravel(flat, meta.shape))));
      return got.size === want.size && [...got].every((k) => want.has(k));
    }
    default:
      throw new Error(`the page does not ask ${question.kind} questions`);
  }
}

/** What the student gave, as the verdict repeats it. */
export function givenText(question, given) {
  if (question.kind === "changes") return given ? "yes" : "no";
  if (question.kind === "shape") return given.join("×");
  if (question.kind === "reads") return `${given.length} cell${given.length === 1 ? "" : "s"}`;
  return formatLong(given);
}

/** The right answer, as the verdict says it. */
export function answerText(question) {
  if (question.kind === "changes") return question.answer ? "yes" : "no";
  if (question.kind === "shape") return question.answer.join("×");
  if (question.kind === "reads") return `${question.answer.cells.length} cells of ${question.answer.tensor}`;
  return formatLong(question.answer);
}

/** Where a class picked the cells a reads question asks for: [{flat, count, share}] on
 *  tensor `meta` (share: of the pages that answered), from the revealed tally's answers
 *  ({given: [index, ...], count}). */
export function pickHeat(distribution, meta, answered) {
  const counts = new Map();
  for (const { given, count } of distribution) {
    for (const index of given) {
      let flat = 0;
      for (let a = 0; a < index.length; a++) flat = flat * meta.shape[a] + index[a];
      counts.set(flat, (counts.get(flat) ?? 0) + count);
    }
  }
  return [...counts].map(([flat, count]) => ({ flat, count, share: answered ? count / answered : 0 }));
}

/** The score of a lesson: {right, asked}. */
export const NO_SCORE = Object.freeze({ right: 0, asked: 0 });

export function scored(score, right) {
  return { right: score.right + (right ? 1 : 0), asked: score.asked + 1 };
}

/** A score read back from storage (anything else: none yet). */
export function readScore(text) {
  try {
    const s = JSON.parse(text);
    if (Number.isInteger(s.right) && Number.isInteger(s.asked) && s.right >= 0 && s.asked >= s.right) return { right: s.right, asked: s.asked };
  } catch {
    /* none yet, or not ours */
  }
  return NO_SCORE;
}

/** The storage key of a lesson's score (a custom setup's: "custom"). */
export function scoreKey(lesson) {
  return `convscope.predict.score.${lesson || "custom"}`;
}

/** The answers of the question revealed, as CSV (answer, pages, right). */
export function tallyCsv(tally) {
  const cell = (v) => `"${String(typeof v === "string" ? v : JSON.stringify(v)).replace(/"/g, '""')}"`;
  return ["answer,pages,right", ...tally.distribution.map((d) => `${cell(d.given)},${d.count},${d.right}`)].join("\n") + "\n";
}
