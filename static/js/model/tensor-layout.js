// How a tensor is drawn: which axes are the grid's rows and columns, and one labelled
// slice per combination of the other axes. Pure geometry from the header's axes/grid;
// no special case per tensor name.

/** At most this many cells of one tensor are drawn (the rest are in the exported trace). */
export const MAX_CELLS_PER_TENSOR = 2400;

/** The names of `tensors` ({name: meta}) in the header's drawing order. */
export function orderedNames(tensors) {
  return Object.keys(tensors).sort((a, b) => tensors[a].order - tensors[b].order);
}

/**
 * Slices of tensor `meta` for drawing.
 * Returns {rowAxis, colAxis, rows, cols, sliceAxes, bands, slices, drawnCells, totalCells}
 * where slices[k] = {key: [index per slice axis], label, shortLabel (axes of length 1
 * left out), band, cells: Int32Array(rows*cols)}
 * (cells[r*cols+c] = flat index), and bands group slices by the first slice axis (one
 * band per batch item / filter). At most `maxCells` cells are drawn; later slices are
 * left out (counted in totalCells - drawnCells).
 */
export function sliceLayout(meta, maxCells = Infinity) {
  const { shape, strides, axes } = meta;
  const [rowName, colName] = meta.grid ?? [null, axes[axes.length - 1]];
  const colAxis = axes.indexOf(colName);
  const rowAxis = rowName == null ? -1 : axes.indexOf(rowName);
  if (colAxis < 0) throw new Error(`${meta.name}: grid column axis ${colName} is not one of ${axes.join(",")}`);
  if (rowName != null && rowAxis < 0) throw new Error(`${meta.name}: grid row axis ${rowName} is not one of ${axes.join(",")}`);
  const rows = rowAxis >= 0 ? shape[rowAxis] : 1;
  const cols = shape[colAxis];
  // the slice axes, outermost first: in axis order, or the header's slice_axes
  const sliceAxes = meta.slice_axes ? meta.slice_axes.map((n) => axes.indexOf(n)) : [];
  if (!meta.slice_axes) for (let a = 0; a < shape.length; a++) if (a !== rowAxis && a !== colAxis) sliceAxes.push(a);
  if (sliceAxes.some((a) => a < 0 || a === rowAxis || a === colAxis)) throw new Error(`${meta.name}: slice_axes ${meta.slice_axes} are not the axes outside the grid`);
  const nSlices = sliceAxes.reduce((p, a) => p * shape[a], 1);
  const perSlice = rows * cols;
  const slices = [];
  const key = new Array(sliceAxes.length).fill(0);
  let drawn = 0;
  for (let s = 0; s < nSlices; s++) {
    if (drawn + perSlice > maxCells && slices.length > 0) break;
    let base = 0;
    for (let k = 0; k < sliceAxes.length; k++) base += key[k] * strides[sliceAxes[k]];
    const cells = new Int32Array(perSlice);
    const rs = rowAxis >= 0 ? strides[rowAxis] : 0;
    const cs = strides[colAxis];
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) cells[r * cols + c] = base + r * rs + c * cs;
    const label = sliceAxes.map((a, k) => `${axes[a]}=${key[k]}`).join(" · ");
    // the label a person needs: axes of length 1 (n=0 of a single image) say nothing
    const shortLabel = sliceAxes.filter((a) => shape[a] > 1).map((a) => `${axes[a]}=${key[sliceAxes.indexOf(a)]}`).join(","); // (compact: it stands over a small grid)
    slices.push({ key: key.slice(), label, shortLabel, band: sliceAxes.length > 1 ? key[0] : 0, cells });
    drawn += perSlice;
    for (let k = sliceAxes.length - 1; k >= 0; k--) {
      key[k] += 1;
      if (key[k] < shape[sliceAxes[k]]) break;
      key[k] = 0;
    }
  }
  const bands = [];
  for (const sl of slices) {
    if (!bands.length || bands[bands.length - 1].band !== sl.band) {
      bands.push({ band: sl.band, label: sliceAxes.length > 1 ? `${axes[sliceAxes[0]]}=${sl.band}` : "", slices: [] });
    }
    bands[bands.length - 1].slices.push(sl);
  }
  return {
    rowAxis,
    colAxis,
    rows,
    cols,
    sliceAxes,
    bands,
    slices,
    drawnCells: drawn,
    totalCells: nSlices * perSlice,
  };
}

/**
 * The rectangles that outline `box` on the drawn slices of a tensor:
 * [{slice: index into layout.slices, r0, r1, c0, c1}] (inclusive bounds, grid cells).
 * A strided box (dilation) is outlined by its bounding rectangle.
 */
export function boxOutlines(layout, box) {
  const out = [];
  const span = (a) => {
    if (a < 0) return [0, 0];
    const n = Math.ceil((box.stop[a] - box.start[a]) / box.step[a]);
    return n > 0 ? [box.start[a], box.start[a] + (n - 1) * box.step[a]] : null;
  };
  const rs = span(layout.rowAxis);
  const cs = span(layout.colAxis);
  if (!rs || !cs) return out;
  layout.slices.forEach((sl, k) => {
    for (let i = 0; i < layout.sliceAxes.length; i++) {
      const a = layout.sliceAxes[i];
      const v = sl.key[i];
      if (v < box.start[a] || v >= box.stop[a] || (v - box.start[a]) % box.step[a] !== 0) return;
    }
    out.push({ slice: k, r0: rs[0], r1: rs[1], c0: cs[0], c1: cs[1] });
  });
  return out;
}

/** How a header mark character is drawn: its classes, and whether the cell is zero by
 *  definition (never written, shown as 0 from the start). (Its words are the server's:
 *  GET /api/meta's mark_kinds, which a cell's accessible name says.) */
export const MARK_STYLES = {
  p: { cls: "pad", fixed: true },
  g: { cls: "pad", fixed: false },
  z: { cls: "gap", fixed: true },
  u: { cls: "unread", fixed: false },
  n: { cls: "unread", fixed: false },
  c: { cls: "copied", fixed: false },
  f: { cls: "copied", fixed: false },
  k: { cls: "pad", fixed: false },
  o: { cls: "unread", fixed: false },
};

/**
 * The header's marks of tensor `meta` on one slice of its grid: an array (rows*cols)
 * of mark characters ("." ordinary), or null when the header marks no cell.
 * Throws when the marks do not match the grid.
 */
export function gridMarks(meta, layout) {
  if (!meta.marks) return null;
  const { rows, cols } = layout;
  if (meta.marks.length !== rows || meta.marks.some((r) => r.length !== cols)) {
    throw new Error(`${meta.name}: its marks are ${meta.marks.length} rows of ${meta.marks[0]?.length}, its grid is ${rows}×${cols}`);
  }
  return Array.from(meta.marks.join(""));
}
