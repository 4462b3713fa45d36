// A paste into one cell of a tensor editor's grid: what the pasted text holds (a block of
// rows, or numbers in reading order), the room a block has from that cell, and the
// tensor's values after the paste. Rows stay rows: row r of a block lands r rows below
// the cell, from the same column, in the grid of the tensor's last two axes. What does
// not fit is refused whole, saying the block's size and the room; nothing is cut,
// shifted or written in part. Pure.

import { parseArray, flatten } from "./paste-array.js";
import { parseCells, pasteCells } from "./trace-config.js";

/** "row 2, column 3" (both from 1) of a pasted block. */
const place = (r, c) => `row ${r + 1}, column ${c + 1}`;

/**
 * The numbers of one line of a spreadsheet or a print: number[] or {error}. Tabs (a
 * spreadsheet's copy) and commas (CSV) separate cells, so two of them with nothing
 * between are an empty cell, refused (skipping it would shift the row); spaces and
 * brackets only separate.
 */
function lineNumbers(line, r, many) {
  const tabbed = line.includes("\t");
  if (tabbed || (line.includes(",") && !/[[\]]/.test(line))) {
    const fields = line.split(tabbed ? "\t" : ",");
    if (!tabbed && fields.length > 1 && !fields[fields.length - 1].trim()) fields.pop(); // "1, 2," as a list prints
    const numbers = [];
    for (let c = 0; c < fields.length; c++) {
      const field = fields[c].trim();
      if (!field) return { error: `${place(r, c)} of the pasted block is empty` };
      const parsed = parseCells(field);
      if (parsed.error || parsed.numbers.length !== 1) {
        return { error: `"${field.slice(0, 20)}" at ${place(r, c)} of the pasted block is not a number` };
      }
      numbers.push(parsed.numbers[0]);
    }
    return numbers;
  }
  const parsed = parseCells(line);
  return parsed.error ? { error: many ? `${parsed.error} in line ${r + 1}` : parsed.error } : parsed.numbers;
}

/**
 * What a pasted `text` holds:
 * - {rows: number[][]}: a block, two rows or more of one length (rows: (h, w)): lines
 *   of cells separated by tabs (a spreadsheet), commas or spaces; a NumPy or PyTorch
 *   print of a matrix, its long rows wrapped over lines or not; a list of lists;
 * - {numbers: number[]}: numbers in reading order (one row; rows of different lengths;
 *   an array of three axes or more);
 * - {error}: a sentence naming the token that is not a number, or the empty cell.
 * "9\t8\t7\n6\t5\t4" -> {rows: [[9, 8, 7], [6, 5, 4]]}; "9 8 7" -> {numbers: [9, 8, 7]}.
 */
export function parsePaste(text) {
  // only line ends and spaces are trimmed: a leading or trailing tab is an empty cell
  const t = String(text ?? "").replace(/−/g, "-").replace(/^[\r\n ]+|[\r\n ]+$/g, "");
  if (/[[\]]/.test(t)) {
    // brackets say the nesting, whatever the line breaks (NumPy wraps long rows)
    const nested = parseArray(t);
    if (!nested.error) {
      if (nested.shape.length === 2 && nested.shape[0] >= 2 && nested.shape[1] >= 1) return { rows: nested.value };
      return { numbers: flatten(nested.value) };
    }
  }
  const rows = [];
  const lines = t.split(/\r?\n/).map((line) => line.replace(/^[\r ]+|[\r ]+$/g, "")).filter(Boolean);
  for (const line of lines) {
    const numbers = lineNumbers(line, rows.length, lines.length > 1);
    if (numbers.error) return numbers;
    if (numbers.length) rows.push(numbers);
  }
  if (rows.length >= 2 && rows.every((row) => row.length === rows[0].length)) return { rows };
  // one row, or rows of different lengths: reading order, as a single row pastes
  return { numbers: rows.flat() };
}

/**
 * Where flat index `at` of a tensor of `shape` sits in its grid (the last two axes; a
 * vector is one row) and the room from there to the grid's last row and column:
 * {row, col, rows, cols}. shape (1, 1, 5, 5), at 8 (x[0,0,1,3]) -> {row: 1, col: 3,
 * rows: 4, cols: 2}.
 */
export function roomFrom(shape, at) {
  const nd = shape.length;
  const width = shape[nd - 1];
  const height = nd >= 2 ? shape[nd - 2] : 1;
  const col = at % width;
  const row = Math.floor(at / width) % height;
  return { row, col, rows: height - row, cols: width - col };
}

/**
 * A copy of `data` with the block `rows` written from flat index `at`, rows staying
 * rows. data: (size,), a tensor of `shape` in row-major order; rows: (h, w). Returns
 * {data: (size,), cells: (h*w,) the flat indices written}, or {error, size: [h, w],
 * room: [rows, cols]} when the block does not fit (nothing written). `where` names the
 * cell in the error ("x[0,0,1,3]").
 */
export function placeBlock(data, shape, at, rows, where = "this cell") {
  const h = rows.length;
  const w = rows[0].length;
  const room = roomFrom(shape, at);
  if (h > room.rows || w > room.cols) {
    return {
      error: `The pasted block is ${h}×${w}; from ${where} there is room for ${room.rows}×${room.cols}. Nothing was pasted.`,
      size: [h, w],
      room: [room.rows, room.cols],
    };
  }
  const width = shape[shape.length - 1];
  const out = Array.from(data);
  const cells = [];
  rows.forEach((numbers, r) =>
    numbers.forEach((v, c) => {
      out[at + r * width + c] = v;
      cells.push(at + r * width + c);
    }),
  );
  return { data: out, cells };
}

/**
 * A copy of `data` (size,) (a tensor of `shape`, row-major) with what parsePaste found
 * (`pasted`) written from flat index `at`: a block as a block (a one-column block into
 * a vector goes along it: a vector has no rows to keep), numbers in reading order.
 * {data: (size,), cells: the flat indices written}, or {error} with nothing written.
 */
export function placePaste(data, shape, at, pasted, where = "this cell") {
  if (pasted.error) return { error: pasted.error };
  if (pasted.rows && !(shape.length === 1 && pasted.rows[0].length === 1)) return placeBlock(data, shape, at, pasted.rows, where);
  const numbers = pasted.rows ? pasted.rows.flat() : pasted.numbers;
  const written = pasteCells(data, at, numbers);
  if (written.error) return written;
  return { data: written.data, cells: numbers.map((_, k) => at + k) };
}
