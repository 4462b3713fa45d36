import { test } from "node:test";
import assert from "node:assert/strict";
import { cellLabel } from "../../static/js/model/cell-label.js";
import { MARK_STYLES } from "../../static/js/model/tensor-layout.js";
import { formatValue, formatDelta } from "../../static/js/model/number-format.js";
import { cellName, tensorMeta } from "../../static/js/model/trace-model.js";
import { loadMeta } from "./fixtures.mjs";

// the words of the header's marks, as the server publishes them (GET /api/meta's mark_kinds)
const WORDS = loadMeta().mark_kinds;

test("a written cell says its tensor, index, value, that the step writes it, and what it added", () => {
  assert.equal(cellLabel({ name: "dw[0,0,2,2]", shown: "3", part: "write", delta: "+2" }), "dw[0,0,2,2] = 3, written by this step, +2");
  // while playing too fast to read, no change is shown: none is said
  assert.equal(cellLabel({ name: "dw[0,0,2,2]", shown: "3", part: "write" }), "dw[0,0,2,2] = 3, written by this step");
});

test("a read cell says so; a cell the step leaves alone says only its value", () => {
  assert.equal(cellLabel({ name: "xp[0,1,2,3]", shown: formatValue(-1), part: "read" }), "xp[0,1,2,3] = −1, read by this step");
  assert.equal(cellLabel({ name: "out[0,0,1,0]", shown: "37" }), "out[0,0,1,0] = 37");
  // a change mark left on a cell no longer written is not said
  assert.equal(cellLabel({ name: "out[0,0,1,0]", shown: "37", part: "read", delta: "+37" }), "out[0,0,1,0] = 37, read by this step");
});

test("a cell whose value a question hides (Predict) says so, not that it is unwritten", () => {
  assert.equal(cellLabel({ name: "out[0,0,1,0]", shown: null, part: "write" }), "out[0,0,1,0] = ? (predict it), written by this step");
});

test("a cell not written yet says so, and the header's mark is said in the server's words", () => {
  assert.equal(cellLabel({ name: "z[0,0,1,1]", shown: "" }), "z[0,0,1,1] = not written yet");
  assert.equal(cellLabel({ name: "xp[0,1,0,0]", mark: WORDS.p, shown: "0", part: "read" }), "xp[0,1,0,0] = 0, padding, read by this step");
  assert.equal(cellLabel({ name: "dxp[0,0,0,0]", mark: WORDS.g, shown: "0.5", part: "write", delta: formatDelta(0) }), "dxp[0,0,0,0] = 0.5, padding (receives gradient, cropped away), written by this step, +0");
  assert.equal(cellLabel({ name: "dz_dilated[0,0,0,1]", mark: WORDS.z, shown: "0" }), "dz_dilated[0,0,0,1] = 0, inserted zero");
  assert.equal(cellLabel({ name: "dx[0,0,4,4]", mark: WORDS.n, shown: "" }), "dx[0,0,4,4] = not written yet, never reached by a window (its gradient is exactly 0)");
  for (const ch of Object.keys(MARK_STYLES)) assert.ok(WORDS[ch], `mark ${ch} has words`);
});

test("the name is the page's cell name: the header's axis order, from the flat index", () => {
  const meta = tensorMeta("dw", { shape: [2, 3, 3, 3], data: new Array(54).fill(0), axes: ["f", "c", "kh", "kw"], grid: ["kh", "kw"], role: "output" });
  const flat = ((0 * 3 + 1) * 3 + 2) * 3 + 2;
  assert.equal(cellLabel({ name: cellName(meta, flat), shown: formatValue(3), part: "write", delta: formatDelta(-2) }), "dw[0,1,2,2] = 3, written by this step, −2");
});
