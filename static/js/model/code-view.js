// The code beside the step, as data: the trace header's listing (header.code: the plain
// Python a student writes for this setting, in a convention) and, per step, the line it
// runs, the loop variables and scalars it uses, what it writes on each line, and, in a
// mistake lesson, the lines where the mistaken code differs from the correct code.
// Pure: node tests call it; panels/code-panel.js draws it.

import { boxText } from "./trace-model.js";
import { formatLong } from "./number-format.js";

/**
 * @typedef {{convention: string, name: string, lines: string[], changed?: number[],
 *            correct_of?: number[], correct?: string[]}} Code
 *   (the header's `code`: lines of the listing, 1-based as events' `line` counts them;
 *   changed: the mistaken lines, in a mistake lesson; correct_of: the correct line each
 *   stands for; correct: the correct listing)
 */

/** The listing of `model`'s trace (header.code), or null when its setting has none. */
export function codeOf(model) {
  const c = model && model.header ? model.header.code : null;
  return c && Array.isArray(c.lines) && c.lines.length ? c : null;
}

const indentOf = (text) => text.length - text.trimStart().length;

/** The `for` lines that enclose line `n` (1-based) of `lines`, outermost first: a line
 *  starting with `for ` less indented than every line between it and `n`. */
export function loopHeaders(lines, n) {
  const out = [];
  if (!(n >= 1 && n <= lines.length)) return out;
  let indent = indentOf(lines[n - 1]);
  for (let k = n - 1; k >= 1 && indent > 0; k--) {
    const text = lines[k - 1];
    if (!text.trim()) continue;
    const at = indentOf(text);
    if (at < indent) {
      if (/^\s*for\s/.test(text)) out.unshift(k);
      indent = at;
    }
  }
  return out;
}

/** The number in `code.correct` of the correct line a mistaken line `n` stands for
 *  (`code.correct_of`, parallel to `changed`; without it a replaced line keeps its
 *  number), or null when line `n` is not a changed line. */
function correctNumber(code, n) {
  const at = code.correct && code.changed ? code.changed.indexOf(n) : -1;
  if (at < 0) return null;
  return Array.isArray(code.correct_of) ? code.correct_of[at] ?? null : n;
}

/** The correct line a mistaken line `n` stands for, or null. */
export function correctLine(code, n) {
  const k = correctNumber(code, n);
  return k === null ? null : code.correct[k - 1] ?? null;
}

/** The correct line to show under mistaken line `n`: its correct line, once under the
 *  last line of a block of changed lines standing for it (a mistake that adds code
 *  replaces one line with several); null elsewhere. */
export function correctUnder(code, n) {
  const k = correctNumber(code, n);
  if (k === null || correctNumber(code, n + 1) === k) return null;
  return code.correct[k - 1] ?? null;
}

/**
 * What the code panel shows at `event` (compiled; null before the first step): {current
 * (the line the step runs, where it writes last; null), runs (Set of every line it
 * runs), headers (Set of the loops around the current line), loop ("n=0  f=1  i=0
 * j=0"), scalars ("g = 2"), notes ({line: "dw[1,0:3,0:3,0:3]"}: what the step writes
 * on each line it runs)}.
 */
export function codeStep(code, event) {
  if (!event || !event.line) return { current: null, runs: new Set(), headers: new Set(), loop: "", scalars: "", notes: {} };
  const runs = new Set(event.lines && event.lines.length ? event.lines : [event.line]);
  const notes = {};
  // (an event's lines pair with its writes, in order: one line per write)
  const lines = event.lines && event.lines.length === event.writes.length ? event.lines : null;
  event.writes.forEach((w, k) => {
    const at = lines ? lines[k] : event.line;
    notes[at] = notes[at] ? `${notes[at]}, ${boxText(w.box)}` : boxText(w.box);
  });
  return {
    current: event.line,
    runs,
    headers: new Set(loopHeaders(code.lines, event.line)),
    loop: Object.entries(event.loop ?? {}).map(([k, v]) => `${k}=${v}`).join("  "),
    scalars: Object.entries(event.scalars ?? {}).map(([k, v]) => `${k} = ${typeof v === "number" ? formatLong(v) : v}`).join("  "),
    notes,
  };
}

/** The writes of `event` that line `n` makes (for lighting its cells): the event's
 *  writes paired with its lines, or every write when the step runs line `n` alone. */
export function writesOfLine(event, n) {
  if (!event || !event.line) return [];
  const lines = event.lines && event.lines.length === event.writes.length ? event.lines : null;
  if (lines) return event.writes.filter((_, k) => lines[k] === n);
  return event.line === n ? event.writes : [];
}

/** The line `event` runs as an animation's frame says it: "27  dx = dxp[...]" (its
 *  number, then the line without its indent); null without a listing or a line. */
export function codeLineText(code, event) {
  if (!code || !event || !event.line || !code.lines[event.line - 1]) return null;
  return `${event.line}  ${code.lines[event.line - 1].trim()}`;
}

/** The first step after `from` (wrapping round to the start) whose event runs line `n`
 *  of the listing, among the `received` events of `compiled`; null if none does. */
export function nextStepRunning(compiled, received, from, n) {
  const runs = (ev) => ev.line === n || (ev.lines && ev.lines.includes(n));
  for (let k = 1; k <= received; k++) {
    const s = (from + k) % received;
    if (runs(compiled[s])) return s;
  }
  return null;
}
