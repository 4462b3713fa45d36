// One tensor's figure on the stage, built once per trace: its caption, one grid per
// slice, one element per cell (data-tensor, data-idx), each cell made showing what it
// shows before the first event; and the record the stage keeps of it (what each cell
// shows, where each drawn cell sits, which rows of cells are in view).

import { sliceLayout, gridMarks, MARK_STYLES, MAX_CELLS_PER_TENSOR } from "../model/tensor-layout.js";
import { formatValue, colorLevel, absMax } from "../model/number-format.js";
import { cellName } from "../model/trace-model.js";
import { PUBLISHED } from "../model/trace-config.js";
import { labelCell, CellPaint } from "./cells.js";

export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

function caption(name, meta, scale) {
  const cap = el("figcaption");
  cap.append(el("span", "tname", name));
  // each figure has its own colour scale: the darkest blue is −scale, the darkest brown +scale
  const range = el("span", "tscale", `±${formatValue(scale)}`);
  range.title = `${name}'s colours: the darkest blue is −${formatValue(scale)}, the darkest brown +${formatValue(scale)} (each tensor has its own scale)`;
  cap.append(range);
  const tdesc = el("span", "tdesc", meta.title);
  tdesc.append(el("span", "tdesc-shape", `${meta.title ? " · " : ""}(${meta.shape.join(", ")}) · ${meta.axes.join(",")}`));
  cap.append(tdesc);
  const shape = `${name} (${meta.shape.join(", ")}) · ${meta.axes.join(",")}`;
  cap.title = meta.detail ? `${shape}: ${meta.detail}` : shape;
  return cap;
}

/**
 * The figure of tensor `name` of `model` (a TraceModel) and its view record:
 * {meta, layout, fig, bandsEl, cells: (size,) elements, grids, slicesEls, drawn: (slices *
 * rows * cols,) flat indices, posOf: (size,) drawn position or -1, padFlat, inView:
 * (slices * rows,) a row of cells in view (stage/measure.js), perSlice, scale, paint: what
 * each cell shows and which rows are stale (stage/cells.js CellPaint), outlineSlots,
 * folded, geo, scroller, scrollsX}.
 */
export function buildFigure(model, name) {
  const meta = model.tensors[name];
  const layout = sliceLayout(meta, MAX_CELLS_PER_TENSOR);
  // the header's marks: padding and inserted zeros hatched, cells no window reads
  // dimmed; "fixed" cells are zero by definition, never written, shown as 0 from the
  // start (a padded gradient's padding does receive gradient: it is not fixed)
  const marks = gridMarks(meta, layout);
  // every cell is made showing what it shows before the first event (step -1): an input
  // its value, a written tensor's fixed zeros 0, its other cells empty; so a figure
  // that unfolds for the first time has only the cells written since to draw
  const input = !model.writtenNames.includes(name);
  const scale = absMax(meta.data);
  const shownValue = new Float64Array(meta.size).fill(NaN);
  const shownWritten = new Int8Array(meta.size).fill(-1);
  const shownLevel = new Int8Array(meta.size).fill(-128); // the colour level each cell shows (-128: none yet)
  const fig = el("figure", "tensor");
  fig.dataset.tensor = name;
  fig.dataset.role = meta.role;
  fig.append(caption(name, meta, scale));
  const cells = new Array(meta.size);
  const grids = [];
  const slicesEls = [];
  // (every row counts as in view until the stage has read where the rows are)
  const inView = new Uint8Array(layout.slices.length * layout.rows).fill(1);
  const stale = new Uint8Array(layout.slices.length * layout.rows);
  // every slice in one grid: the stage's layout says how many go on a line
  const bandsEl = el("div", "bands");
  for (const sl of layout.slices) {
    const sliceEl = el("div", "slice");
    // content-visibility: auto lets the browser skip laying out slices far out of view;
    // the stage paints only the rows of cells in view and catches up when they come into it
    sliceEl.style.setProperty("--rows", layout.rows);
    sliceEl.style.setProperty("--cols", layout.cols);
    const sliceIndex = slicesEls.length;
    slicesEls.push(sliceEl);
    const label = el("div", sl.shortLabel ? "slice-label" : "slice-label same-as-caption");
    // (projector mode hides the repeated tensor name: the caption says it)
    label.append(el("span", "slice-name", sl.shortLabel ? `${name} · ` : name), sl.shortLabel);
    sliceEl.append(label);
    const grid = el("div", "grid");
    grid.setAttribute("role", "list"); // (its cells are named: stage/cells.js labelCell)
    grid.setAttribute("aria-label", sl.shortLabel ? `${name} · ${sl.shortLabel}` : name);
    grid.style.gridTemplateColumns = `repeat(${layout.cols}, var(--cell))`;
    grid.dataset.cols = String(layout.cols); // (the arrow keys' rows: stage/cell-keys.js)
    for (let k = 0; k < sl.cells.length; k++) {
      const flat = sl.cells[k];
      const cell = el("div", "cell");
      cell.dataset.tensor = name;
      cell.dataset.idx = String(flat);
      const style = marks ? MARK_STYLES[marks[k]] : undefined;
      if (style) cell.classList.add(style.cls);
      const fixed = Boolean(style && style.fixed);
      if (fixed) cell.classList.add("fixed-zero");
      const val = input ? meta.data[flat] : 0;
      const level = input ? colorLevel(val, scale) : 0;
      cell.dataset.c = String(level);
      if (!input && !fixed) cell.classList.add("empty");
      cell.append(document.createTextNode(input || fixed ? formatValue(val) : ""));
      cell.setAttribute("role", "listitem");
      // (what its accessible name always says: stage/cells.js labelCell)
      cell.cellName = cellName(meta, flat);
      cell.markWords = style ? (PUBLISHED.meta?.mark_kinds?.[marks[k]] ?? "") : "";
      labelCell(cell);
      shownValue[flat] = val;
      shownWritten[flat] = input || fixed ? 1 : 0;
      shownLevel[flat] = level;
      cells[flat] = cell;
      // the figure's one Tab stop: from there the arrow keys move between its cells
      // (js/stage/cell-keys.js) and Enter opens a cell's story
      if (k === 0 && sliceIndex === 0) cell.tabIndex = 0;
      grid.append(cell);
    }
    grids.push(grid);
    sliceEl.append(grid);
    bandsEl.append(sliceEl);
  }
  fig.append(bandsEl);
  if (layout.drawnCells < layout.totalCells) {
    fig.append(el("p", "note", `Showing ${layout.slices.length} slices (${layout.drawnCells} of ${layout.totalCells} cells); the rest are in the exported trace.`));
  }
  const drawn = new Int32Array(layout.slices.length * layout.rows * layout.cols);
  layout.slices.forEach((sl, k) => drawn.set(sl.cells, k * sl.cells.length));
  // where each drawn cell sits: slice * (rows * cols) + row * cols + col (-1: not drawn)
  const posOf = new Int32Array(meta.size).fill(-1);
  for (let k = 0; k < drawn.length; k++) posOf[drawn[k]] = k;
  let padFlat = null;
  if (marks && marks.some((m) => MARK_STYLES[m]?.fixed)) {
    padFlat = new Set();
    for (const sl of layout.slices) for (let k = 0; k < sl.cells.length; k++) if (MARK_STYLES[marks[k]]?.fixed) padFlat.add(sl.cells[k]);
  }
  return {
    meta, layout, fig, bandsEl, cells, grids, slicesEls, drawn, posOf, padFlat, inView, perSlice: layout.rows * layout.cols, scrollsX: false,
    geo: null,
    scroller: null,
    scale,
    paint: new CellPaint({ shownValue, shownWritten, shownLevel, stale }),
    outlineSlots: [], // per slice: the outline elements made in its grid
    folded: false,
  };
}
