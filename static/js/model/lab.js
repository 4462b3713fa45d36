// The mistakes lab and "compare your numbers", read from a trace's header: what the bar
// above the stage says, which cells are marked as differing (with the other value), and
// what the step panel adds at the first divergence. Pure: the header says it all
// (docs/trace-format.md, "Mistake traces"; docs/grader.md, "Compare your numbers").

import { formatValue } from "./number-format.js";
import { flatten } from "./paste-array.js";

/** The menu name of a catalogued mistake's lesson (and back). */
export const mistakeLessonName = (id) => `mistake-${id}`;

/** A lesson entry of the Lesson menu for each GET /api/mistakes entry. */
export function mistakeLessons(entries) {
  return entries.map((m) => ({
    name: mistakeLessonName(m.id),
    title: m.title,
    sentence: m.wrong,
    group: "mistakes",
    config: m.request,
    mistake: m.id,
    firstDivergence: m.first_divergence,
  }));
}

/** Which kind of lab a header is: "mistake", "compare" or "" (neither). */
export function labKind(header) {
  if (header && header.mistake) return "mistake";
  if (header && header.comparison) return "compare";
  return "";
}

function comparisonLine(name, c) {
  if (c.match) return { tensor: name, ok: true, text: `${name} matches` };
  if (c.kind === "wrong values") return { tensor: name, ok: false, text: `${name}: ${c.differing_count} of ${c.expected_shape.reduce((a, b) => a * b, 1)} cells differ` };
  return { tensor: name, ok: false, text: c.message };
}

/**
 * What the lab bar says for `header`: {kind, student, title, wrong, should, lines:
 * [{tensor, ok, text}], firstDivergence} or null when the trace is neither a mistake nor
 * a comparison (student: the trace of a student's own code, `convscope trace-code`).
 */
export function labSummary(header) {
  const kind = labKind(header);
  if (!kind) return null;
  if (kind === "compare") {
    const lines = Object.entries(header.comparison).map(([name, c]) => comparisonLine(name, c));
    return { kind, title: "Your numbers against this trace", wrong: "", should: "", lines, firstDivergence: null };
  }
  const m = header.mistake;
  const lines = Object.entries(header.differences ?? {}).map(([name, c]) => comparisonLine(name, c));
  for (const [name, f] of Object.entries(header.failures ?? {})) {
    const said = { "empty array": `${name}: an empty array (${f.message})`, "returned None": `${name}: the code returned None (${f.message})` };
    lines.push({ tensor: name, ok: false, text: said[f.kind] ?? `${name}: the code raised ${f.kind}: ${f.message}` });
  }
  return { kind, student: Boolean(m.student), title: m.title, wrong: m.wrong, should: m.should, lines, firstDivergence: header.first_divergence ?? null };
}

/**
 * The cells to mark: {tensor: [{flat, other, title}]}. A mistake trace marks the
 * mistaken code's cells that differ from the truth (other: the true value); a
 * comparison marks the trace's cells where the numbers sent differ (other: yours, from
 * `sent`, the request's compare object). Tensors of another shape have no marks.
 */
export function differenceMarks(header, sent = null) {
  const kind = labKind(header);
  const marks = {};
  if (kind === "mistake") {
    for (const [name, c] of Object.entries(header.differences ?? {})) {
      const truth = header.truth && header.truth[name];
      if (c.kind !== "wrong values" || !truth || !header.tensors[name]) continue;
      const got = header.tensors[name].data;
      marks[name] = (c.differing_flat ?? []).map((flat) => ({
        flat,
        other: formatValue(truth.data[flat]),
        title: `${name}: this code gives ${formatValue(got[flat])}, the truth is ${formatValue(truth.data[flat])}`,
      }));
    }
  } else if (kind === "compare") {
    for (const [name, c] of Object.entries(header.comparison)) {
      if (c.kind !== "wrong values" || !header.tensors[name]) continue;
      const yours = sent && sent[name] != null ? flatten(sent[name]) : [];
      const truth = header.tensors[name].data;
      marks[name] = (c.differing_flat ?? []).map((flat) => ({
        flat,
        other: yours[flat] == null ? "?" : formatValue(yours[flat]),
        title: `${name}: yours is ${yours[flat] == null ? "?" : formatValue(yours[flat])}, the truth is ${formatValue(truth[flat])}`,
      }));
    }
  }
  return marks;
}

/** What the step panel adds at `step` of a mistake trace ("" elsewhere). */
export function divergenceNote(header, step) {
  const d = header && header.mistake ? header.divergence : null;
  if (!d || d.event !== step) return "";
  if (header.mistake.student) return `Your code's first wrong write. It did: ${d.did}. ${d.should}.`;
  if (d.stopped) return `Here the code stops: ${d.did}. The correct code goes on: ${d.should}. Fix: ${d.fix}`;
  return `Here the code leaves the correct code. It did: ${d.did}. It should have done: ${d.should}. Fix: ${d.fix}`;
}
