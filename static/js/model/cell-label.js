// A drawn cell's accessible name: what a screen reader says for it. Pure: the stage
// (stage/cells.js labelCell) hands it what the cell shows.

/** What a screen reader adds for the cell's part in the current step. */
export const PART_WORDS = { read: "read by this step", write: "written by this step" };

/**
 * The accessible name of a drawn cell: its name (trace-model's cellName, "dw[0,0,2,2]"),
 * the header's mark on it in words (GET /api/meta's mark_kinds: "padding", or ""), the
 * value it shows (number-format's formatValue; "" while not written yet; null while a
 * question hides it: Predict), its part in the
 * current step ("read", "write" or "": a cell both read and written is said written),
 * and what the step added to a written cell (formatDelta: "+2"; undefined: not shown).
 *   "dw[0,0,2,2] = 3, written by this step, +2"
 *   "xp[0,1,0,0] = 0, padding, read by this step"
 *   "z[0,0,1,1] = not written yet"
 */
export function cellLabel({ name, mark = "", shown, part = "", delta }) {
  let s = `${name} = ${shown === null ? "? (predict it)" : shown === "" ? "not written yet" : shown}`;
  if (mark) s += `, ${mark}`;
  const words = PART_WORDS[part];
  if (words) s += `, ${words}`;
  if (part === "write" && delta !== undefined) s += `, ${delta}`;
  return s;
}
