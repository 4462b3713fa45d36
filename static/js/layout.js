// How a tensor is drawn: which axes are the grid's rows and columns, and one labelled
// slice per combination of the other axes. Pure geometry from the header's axes/grid;
// no special case per tensor name.

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
  const sliceAxes = [];
  for (let a = 0; a < shape.length; a++) if (a !== rowAxis && a !== colAxis) sliceAxes.push(a);
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
    const shortLabel = sliceAxes.filter((a) => shape[a] > 1).map((a) => `${axes[a]}=${key[sliceAxes.indexOf(a)]}`).join(" · ");
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

/**
 * Padding cells of a padded tensor: true where (row, col) of the grid lies in the
 * padding given by spec.padding [top, bottom, left, right]. Used for xp and dxp, which
 * the header marks by having the spec's padded shape; returns null for other tensors.
 */
export function paddingMask(meta, layout, spec) {
  if (!spec || !Array.isArray(spec.padding) || !Array.isArray(spec.padded_shape)) return null;
  if (!["xp", "dxp"].includes(meta.name)) return null;
  const [top, bottom, left, right] = spec.padding;
  if (!(top || bottom || left || right)) return null;
  const { rows, cols } = layout;
  const mask = new Uint8Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      mask[r * cols + c] = r < top || r >= rows - bottom || c < left || c >= cols - right ? 1 : 0;
    }
  }
  return mask;
}

/**
 * The inserted zeros of the transposed view's dilated gradient: true where (row, col)
 * of a dz_dilated slice holds no dz value (the stride−1 rows/columns between dz cells
 * and the kernel−1 frame), i.e. the cells that stay 0 whatever dz is. A dz cell
 * (i, j) sits at (eh − 1 + i·sh, ew − 1 + j·sw), as the header's spec gives eh, ew
 * (kernel_extent), sh, sw (stride) and Ho, Wo (out_shape, in the spec's layout).
 * Returns null for every other tensor.
 */
export function insertedZeroMask(meta, layout, spec) {
  if (meta.name !== "dz_dilated" || !spec || !Array.isArray(spec.kernel_extent) || !Array.isArray(spec.out_shape)) return null;
  const [eh, ew] = spec.kernel_extent;
  const [sh, sw] = spec.stride ?? [1, 1];
  const nhwc = spec.layout === "NHWC";
  const ho = spec.out_shape[nhwc ? 1 : 2];
  const wo = spec.out_shape[nhwc ? 2 : 3];
  const holds = (v, top, step, n) => v >= top && (v - top) % step === 0 && (v - top) / step < n;
  const { rows, cols } = layout;
  const mask = new Uint8Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) mask[r * cols + c] = holds(r, eh - 1, sh, ho) && holds(c, ew - 1, sw, wo) ? 0 : 1;
  }
  return mask;
}
