// A lesson file (`convscope export`): the page opened from file:// with its trace
// embedded in <script type="application/json" id="convscope-lesson">, no server.
// io/api.js asks this module first; the rest of the page runs as when served.

import { consumeTrace } from "../model/ndjson.js";

const ELEMENT_ID = "convscope-lesson";

export const EDITING_NEEDS_SERVER =
  "This lesson file holds one trace: changing the setup needs the ConvScope server (convscope serve). Choose the lesson again to go back to it.";

export const QUESTIONS_NEED_SERVER =
  "this lesson file is too long to carry its questions: Predict asks them with the ConvScope server (convscope serve).";

let lesson; // undefined: not read yet; null: the page is served

/** The embedded lesson {schema, preset: {name, title, teaches, config}, lines, questions
 *  (each step's, or null: too many to carry)}, or null. */
export function embeddedLesson() {
  if (lesson === undefined) {
    const element = typeof document === "undefined" ? null : document.getElementById(ELEMENT_ID);
    lesson = element ? JSON.parse(element.textContent) : null;
  }
  return lesson;
}

/** The step the lesson file opens at (the page's when it was downloaded; 0 before). */
export function embeddedStep(l) {
  return Number.isInteger(l.step) && l.step > 0 ? l.step : 0;
}

/** The lesson as the page's one preset: {name, title, sentence, config}. */
export function embeddedPreset(l) {
  const p = l.preset;
  return { name: p.name, title: p.title, sentence: p.teaches ?? "", config: p.config };
}

/** JSON text with object keys sorted: two configs are the same lesson when equal. */
export function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object")
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`;
  return JSON.stringify(value);
}

/** Feed the embedded trace lines to the stream handlers ({onHeader, onEvents, onEnd}). */
export async function replayEmbedded(l, handlers) {
  async function* oneBatch() {
    yield l.lines;
  }
  await consumeTrace(oneBatch(), handlers);
}
