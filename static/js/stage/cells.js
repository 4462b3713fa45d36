// Painting a step's values into the cells. paintCell is the one place where a cell's
// number, its colour level and whether it is written yet are set (a mark that depends on
// a cell's value belongs there); the step's own marks (rd, wr, data-delta) are
// stage/marks.js's. Only what differs from what a cell shows is written.

import { formatValue, colorLevel } from "../model/number-format.js";
import { cellLabel } from "../model/cell-label.js";

/**
 * Set `cell`'s accessible name (model/cell-label.js) from what it shows: its name and
 * mark (cell.cellName, cell.markWords: set when the figure is made), its value, and what
 * the step does to it (rd, wr, data-delta). Called where any of these changes (here, and
 * by stage/marks.js): a step touches only the names of the cells it changes.
 */
export function labelCell(cell) {
  const part = cell.classList.contains("wr") ? "write" : cell.classList.contains("rd") ? "read" : "";
  const shown = cell.classList.contains("hidden-answer") ? null : cell.firstChild.nodeValue;
  const next = cellLabel({ name: cell.cellName, mark: cell.markWords, shown, part, delta: cell.dataset.delta });
  if (next !== cell.getAttribute("aria-label")) cell.setAttribute("aria-label", next);
}

/**
 * What the cells of one figure show: shownValue / shownWritten / shownLevel (size,) per
 * flat index, and stale (slices * rows,): a row that may show an older step. Made by
 * stage/figure.js from what the figure is built showing; written only here.
 */
export class CellPaint {
  constructor({ shownValue, shownWritten, shownLevel, stale }) {
    this.shownValue = shownValue;
    this.shownWritten = shownWritten;
    this.shownLevel = shownLevel;
    this.stale = stale;
  }

  /** paintCell for view `v`. */
  cell(v, flat, frame) {
    const { cells, scale, padFlat } = v;
    const { shownValue, shownWritten, shownLevel } = this;
    const val = frame.values[v.meta.name][flat];
    const counts = frame.counts ? frame.counts[v.meta.name] : undefined;
    // cells the header marks zero by definition (padding, inserted zeros), written or not
    const written = counts === undefined || counts[flat] > 0 || (padFlat !== null && padFlat.has(flat)) ? 1 : 0;
    if (shownWritten[flat] === written && (shownValue[flat] === val || (!written && shownWritten[flat] === 0))) return 0;
    const cell = cells[flat];
    // (each write restyles the cell)
    const wasWritten = shownWritten[flat];
    const level = written ? colorLevel(val, scale) : 0;
    if (written) {
      if (shownValue[flat] !== val || wasWritten !== 1) {
        cell.firstChild.nodeValue = formatValue(val);
        labelCell(cell);
      }
    } else if (wasWritten !== 0) {
      cell.firstChild.nodeValue = "";
      labelCell(cell);
    }
    if (shownLevel[flat] !== level) {
      cell.dataset.c = String(level);
      this.shownLevel[flat] = level;
    }
    if (written && wasWritten === 0) cell.classList.remove("empty");
    else if (!written && wasWritten !== 0) cell.classList.add("empty");
    this.shownValue[flat] = val;
    this.shownWritten[flat] = written;
    return 1;
  }

  /** Cell `flat` of view `v` shows no value (a question hides it: stage/marks.js
   *  hideAnswers); the next paint writes it again. Returns 1 if it changed. */
  hide(v, flat) {
    const cell = v.cells[flat];
    if (cell.firstChild.nodeValue === "") return 0;
    cell.firstChild.nodeValue = "";
    this.shownValue[flat] = Number.NaN;
    labelCell(cell);
    return 1;
  }

  /** Paint the cells of row `r` of view `v` for `frame` (it is no longer stale); returns
   *  how many changed. */
  row(v, r, frame) {
    const { drawn } = v;
    const { cols } = v.layout;
    let n = 0;
    for (let i = r * cols, end = Math.min(drawn.length, i + cols); i < end; i++) n += this.cell(v, drawn[i], frame);
    this.stale[r] = 0;
    return n;
  }

  /** Row `r` was left out: it may show an older step until it is painted. */
  markStale(r) {
    this.stale[r] = 1;
  }
}

/**
 * Make cell `flat` of view `v` (stage/figure.js) show its value in `frame` ({values,
 * counts: {name: (size,)}}); returns 1 if it changed. Cells of written tensors that no
 * event has written yet are drawn empty; the header's fixed zeros count as written.
 */
export function paintCell(v, flat, frame) {
  return v.paint.cell(v, flat, frame);
}

/**
 * Paint the drawn cells of view `v` for `frame`, row by row (a row: `cols` cells of one
 * slice; row r holds drawn positions r * cols ..): the rows in view (v.inView,
 * stage/measure.js), or every row (all). A row left out is marked stale (v.paint.stale:
 * it may show an older step) until it is painted. Returns how many cells changed.
 */
export function paintAll(v, frame, all) {
  let n = 0;
  for (let r = 0; r < v.inView.length; r++) {
    if (all || v.inView[r]) n += v.paint.row(v, r, frame);
    else v.paint.markStale(r);
  }
  return n;
}

/** Paint the cells of row `r` of view `v` for `frame`; returns how many changed. */
export function paintRow(v, r, frame) {
  return v.paint.row(v, r, frame);
}

/**
 * Paint the cells that events lo..hi (inclusive) of `compiled` write, in the unfolded
 * views (`views`: {name: view}), in the rows in view; a row out of view that such a
 * cell is in is marked stale instead.
 * counted(name, n): the cells changed per tensor and write (null: not counted).
 */
export function paintWritten(views, compiled, lo, hi, frame, counted) {
  for (let e = Math.max(0, lo); e <= hi && e < compiled.length; e++) {
    for (const w of compiled[e].writes) {
      const v = views[w.tensor];
      if (!v || v.folded) continue;
      let n = 0;
      for (let i = 0; i < w.idx.length; i++) {
        const k = v.posOf[w.idx[i]];
        if (k < 0) continue;
        const r = (k / v.layout.cols) | 0;
        if (!v.inView[r]) v.paint.markStale(r);
        else n += v.paint.cell(v, w.idx[i], frame);
      }
      if (n && counted) counted(w.tensor, n);
    }
  }
}
