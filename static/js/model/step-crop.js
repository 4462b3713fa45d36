// A phone's close-up of one step: of each figure the step touches, only the slices its
// boxes reach, and of those only the rows and columns around what it reads and writes.
// A phone cannot show a backward step's five tensors whole on its first screen (CS231n's
// needs 2800 px of page); cut to the step's neighbourhood they fit under the player.
// Pure: node tests call it; stage/close-up.js applies a crop to the figures.

import { boxOutlines } from "./tensor-layout.js";

/**
 * @typedef {{slices: number[], r0: number, r1: number, c0: number, c1: number}} Crop
 *   (slices: indices into the figure's drawn slices, ascending; r0..r1, c0..c1: the grid
 *   rows and columns shown, inclusive)
 */

/**
 * The crop of every figure `event` (compiled: reads and writes with their boxes) touches:
 * {name: Crop}. layouts: {name: sliceLayout} (model/tensor-layout.js); margin: cells kept
 * around the rectangle the step's boxes cover, on each side, within the grid (Infinity:
 * the whole grid of each slice reached). A figure the step does not touch has no crop.
 */
export function stepCrop(layouts, event, margin) {
  const out = {};
  for (const b of [...event.reads, ...event.writes]) {
    const l = layouts[b.tensor];
    if (!l || !b.box) continue;
    for (const o of boxOutlines(l, b.box)) {
      const c = (out[b.tensor] ??= { slices: new Set(), r0: Infinity, r1: -Infinity, c0: Infinity, c1: -Infinity });
      c.slices.add(o.slice);
      c.r0 = Math.min(c.r0, o.r0);
      c.r1 = Math.max(c.r1, o.r1);
      c.c0 = Math.min(c.c0, o.c0);
      c.c1 = Math.max(c.c1, o.c1);
    }
  }
  const crops = {};
  for (const name in out) {
    const c = out[name];
    const { rows, cols } = layouts[name];
    crops[name] = {
      slices: [...c.slices].sort((a, b) => a - b),
      r0: Math.max(0, c.r0 - margin),
      r1: Math.min(rows - 1, c.r1 + margin),
      c0: Math.max(0, c.c0 - margin),
      c1: Math.min(cols - 1, c.c1 + margin),
    };
  }
  return crops;
}

/** Whether crop `c` leaves out rows or columns of a grid `rows`×`cols` (not only slices). */
export function cutsGrid(c, rows, cols) {
  return c.r0 > 0 || c.c0 > 0 || c.r1 < rows - 1 || c.c1 < cols - 1;
}

/** A grid without a row axis counts its cells by its one axis: a sequence's length
 *  (axis l) in positions, any other (a bias's f) in cells. */
const ROWLESS_WORDS = { l: ["position", "positions"] };

/** What a cropped figure's caption says of its grid: "rows 2–4 · cols 2–4 of 7×7" (a
 *  grid of one row: its columns only; a grid with no row axis, `rowless` naming its one
 *  axis: "positions 2–4 of 12" along a sequence, "cell 1 of 2" of a bias). */
export function cropNote(c, rows, cols, rowless = null) {
  const range = (a, z) => (a === z ? `${a}` : `${a}–${z}`);
  if (rowless) {
    const [one, many] = ROWLESS_WORDS[rowless] ?? ["cell", "cells"];
    return `${c.c0 === c.c1 ? one : many} ${range(c.c0, c.c1)} of ${cols}`;
  }
  const colsText = `cols ${range(c.c0, c.c1)}`;
  return rows > 1 ? `rows ${range(c.r0, c.r1)} · ${colsText} of ${rows}×${cols}` : `${colsText} of ${cols}`;
}

/** What the caption of a figure laid out as `layout` (model/tensor-layout.js's
 *  sliceLayout) of a tensor with axes `axes` says under crop `c`: its cropNote, or ""
 *  when the crop keeps the grid whole (only slices are left out). */
export function cropCaption(c, layout, axes) {
  if (!cutsGrid(c, layout.rows, layout.cols)) return "";
  return cropNote(c, layout.rows, layout.cols, layout.rowAxis < 0 ? axes[layout.colAxis] : null);
}

/** A key that is the same for equal crops (null: none). */
export function cropKey(crops) {
  if (!crops) return "";
  return Object.keys(crops)
    .sort()
    .map((n) => {
      const c = crops[n];
      return `${n}:${c.slices.join(",")}:${c.r0},${c.r1},${c.c0},${c.c1}`;
    })
    .join("|");
}
