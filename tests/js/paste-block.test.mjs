// A paste into a tensor editor's cell (static/js/model/paste-block.js): a block of rows
// lands as a block from the cell, whatever separates its numbers; one that does not fit
// is refused whole, naming its size and the room; a single row goes along the row.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parsePaste, roomFrom, placeBlock, placePaste } from "../../static/js/model/paste-block.js";

const BLOCK = { rows: [[9, 8, 7], [6, 5, 4]] };
// x of shape (1, 1, 5, 5) holding 0..24: x[0,0,r,c] = 5r + c
const SHAPE = [1, 1, 5, 5];
const X = Array.from({ length: 25 }, (_, k) => k);

test("a block of rows is one, whatever separates its numbers", () => {
  for (const text of [
    "9 8 7\n6 5 4",
    "9\t8\t7\n6\t5\t4",
    "9\t8\t7\r\n6\t5\t4\r\n", // a spreadsheet's copy: tabs, CRLF, a last line end
    "9,8,7\n6,5,4",
    "9, 8, 7,\n6, 5, 4,",
    "[[9 8 7]\n [6 5 4]]", // NumPy's print
    "[[9., 8., 7.],\n [6., 5., 4.]]",
    "array([[9, 8, 7],\n       [6, 5, 4]])",
    "[[9, 8, 7], [6, 5, 4]]", // a list of lists on one line
    "[9, 8, 7]\n[6, 5, 4]", // rows printed one by one
    "tensor([[9., 8., 7.],\n        [6., 5., 4.]], requires_grad=True)",
    "tensor([[9., 8., 7.],\n        [6., 5., 4.]], dtype=torch.float64)",
  ]) {
    assert.deepEqual(parsePaste(text), BLOCK, JSON.stringify(text));
  }
});

test("NumPy's rows wrapped over lines stay rows: the brackets say where a row ends", () => {
  const wrapped = "[[ 9.  8.\n   7.]\n [ 6.  5.\n   4.]]";
  assert.deepEqual(parsePaste(wrapped), BLOCK);
  // as NumPy prints np.random.randn(2, 8) at its 75 characters a line
  const randn = `[[ 0.49671415 -0.1382643   0.64768854  1.52302986 -0.23415337 -0.23413696
   1.57921282  0.76743473]
 [-0.46947439  0.54256004 -0.46341769 -0.46572975  0.24196227 -1.91328024
  -1.72491783 -0.56228753]]`;
  const { rows } = parsePaste(randn);
  assert.equal(rows.length, 2);
  assert.deepEqual(rows.map((r) => r.length), [8, 8]);
  assert.equal(rows[1][6], -1.72491783);
});

test("a single row, rows of different lengths, a deeper nesting paste in reading order", () => {
  assert.deepEqual(parsePaste("9 8 7 6"), { numbers: [9, 8, 7, 6] });
  assert.deepEqual(parsePaste("9\t8\t7\n"), { numbers: [9, 8, 7] });
  assert.deepEqual(parsePaste("[[9, 8, 7]]"), { numbers: [9, 8, 7] });
  assert.deepEqual(parsePaste("7 8\n9"), { numbers: [7, 8, 9] });
  assert.deepEqual(parsePaste("[[[1, 2]], [[3, 4]]]"), { numbers: [1, 2, 3, 4] });
  assert.deepEqual(parsePaste("5"), { numbers: [5] });
  assert.deepEqual(parsePaste("−1\t2\n3\t−4"), { rows: [[-1, 2], [3, -4]] }); // a typeset minus
  assert.deepEqual(parsePaste(""), { numbers: [] });
});

test("a word or an empty spreadsheet cell is refused, never skipped (that would shift the row)", () => {
  assert.deepEqual(parsePaste("1 two 3"), { error: '"two" (token 2 of 3) is not a number' });
  assert.equal(parsePaste("1 2\n3 x").error, '"x" (token 2 of 2) is not a number in line 2');
  assert.equal(parsePaste("9\t\t7\n6\t5\t4").error, "row 1, column 2 of the pasted block is empty");
  assert.equal(parsePaste("9\t8\t7\n\t5\t4").error, "row 2, column 1 of the pasted block is empty");
  assert.equal(parsePaste("9,,7\n6,5,4").error, "row 1, column 2 of the pasted block is empty");
  assert.equal(parsePaste("9\t8\tn/a\n6\t5\t4").error, '"n/a" at row 1, column 3 of the pasted block is not a number');
});

test("the room from a cell runs to the last row and column of its grid", () => {
  assert.deepEqual(roomFrom(SHAPE, 8), { row: 1, col: 3, rows: 4, cols: 2 }); // x[0,0,1,3]
  assert.deepEqual(roomFrom(SHAPE, 0), { row: 0, col: 0, rows: 5, cols: 5 });
  assert.deepEqual(roomFrom([2, 3, 4], 12 + 4 + 3), { row: 1, col: 3, rows: 2, cols: 1 }); // second slice
  assert.deepEqual(roomFrom([4], 1), { row: 0, col: 1, rows: 1, cols: 3 }); // a vector is one row
});

test("a block lands as a block from the cell: row r of it r rows below, same columns", () => {
  const { data, cells } = placeBlock(X, SHAPE, 5, BLOCK.rows, "x[0,0,1,0]");
  const grid = [0, 1, 2, 3, 4].map((r) => data.slice(5 * r, 5 * r + 5));
  assert.deepEqual(grid, [
    [0, 1, 2, 3, 4],
    [9, 8, 7, 8, 9],
    [6, 5, 4, 13, 14],
    [15, 16, 17, 18, 19],
    [20, 21, 22, 23, 24],
  ]);
  assert.deepEqual(cells, [5, 6, 7, 10, 11, 12]);
  assert.deepEqual(X.slice(5, 8), [5, 6, 7]); // a copy: the data given is not changed
  // the block may end on the grid's last row and column
  assert.deepEqual(placeBlock(X, SHAPE, 17, BLOCK.rows).cells, [17, 18, 19, 22, 23, 24]); // x[0,0,3,2]
});

test("a block that does not fit is refused whole, naming its size and the room", () => {
  const refused = placeBlock(X, SHAPE, 8, BLOCK.rows, "x[0,0,1,3]");
  assert.equal(refused.error, "The pasted block is 2×3; from x[0,0,1,3] there is room for 4×2. Nothing was pasted.");
  assert.deepEqual(refused.size, [2, 3]);
  assert.deepEqual(refused.room, [4, 2]);
  assert.equal(refused.data, undefined);
  // too many rows: the block never spills into the next slice
  const tall = placeBlock(Array(2 * 3 * 4).fill(0), [2, 3, 4], 4, [[1], [2], [3]], "t[0,1,0]");
  assert.equal(tall.error, "The pasted block is 3×1; from t[0,1,0] there is room for 2×4. Nothing was pasted.");
});

test("placePaste: a block as a block, numbers along the row, a column into a vector along it", () => {
  assert.deepEqual(placePaste(X, SHAPE, 5, BLOCK).cells, [5, 6, 7, 10, 11, 12]);
  const row = placePaste(X, SHAPE, 3, { numbers: [-1, -2, -3] });
  assert.deepEqual(row.cells, [3, 4, 5]); // a single row reads on, as before
  assert.deepEqual(row.data.slice(0, 7), [0, 1, 2, -1, -2, -3, 6]);
  assert.equal(placePaste(X, SHAPE, 23, { numbers: [1, 2, 3] }).error, "3 values pasted, but only 2 cells from here to the end; nothing was pasted");
  assert.deepEqual(placePaste([0, 0, 0], [3], 0, { rows: [[4], [5], [6]] }), { data: [4, 5, 6], cells: [0, 1, 2] });
  assert.match(placePaste([0, 0, 0], [3], 0, { rows: [[4, 5], [6, 7]] }, "b[0]").error, /^The pasted block is 2×2; from b\[0\] there is room for 1×3\./);
  assert.deepEqual(placePaste(X, SHAPE, 0, { error: "no" }), { error: "no" });
});
