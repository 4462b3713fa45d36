// The mistakes lab's pure parts: pasted arrays, the compare form, the lab's summary,
// the marked cells and the divergence note.
import test from "node:test";
import assert from "node:assert/strict";
import { parseArray, flatten } from "../../static/js/model/paste-array.js";
import { readCompareForm } from "../../static/js/panels/compare-dialog.js";
import { labSummary, differenceMarks, divergenceNote, mistakeLessons, labKind } from "../../static/js/model/lab.js";

test("arrays pasted as NumPy, PyTorch and JSON print them parse to the same nested lists", () => {
  const want = [[[[1, -2.5], [3, 0.001]]]];
  const forms = [
    "[[[[1, -2.5], [3, 0.001]]]]",
    "[[[[ 1.    -2.5  ]\n   [ 3.     0.001]]]]",
    "array([[[[ 1.   , -2.5  ],\n         [ 3.   ,  0.001]]]])",
    "array([[[[ 1.   , -2.5  ],\n         [ 3.   ,  0.001]]]], dtype=float32)",
    "tensor([[[[ 1.0000, -2.5000],\n          [ 3.0000,  0.0010]]]], grad_fn=<ConvolutionBackward0>)",
    "tensor([[[[1.0, -2.5], [3.0, 1e-3]]]], dtype=torch.float64, requires_grad=True)",
  ];
  for (const text of forms) {
    const r = parseArray(text);
    assert.equal(r.error, undefined, `${text}: ${r.error}`);
    assert.deepEqual(r.value, want, text);
    assert.deepEqual(r.shape, [1, 1, 2, 2]);
  }
});

test("bare numbers take the tensor's shape, and only when their count fits it", () => {
  assert.deepEqual(parseArray("1 2 3 4 5 6", [1, 1, 2, 3]).value, [[[[1, 2, 3], [4, 5, 6]]]]);
  assert.match(parseArray("1 2 3", [1, 1, 2, 2]).error, /3 numbers; shape \(1, 1, 2, 2\) has 4/);
  assert.deepEqual(parseArray("7, 8").value, [7, 8]);
});

test("a pasted array that is not one says what is wrong, and where", () => {
  assert.match(parseArray("[[1, 2], [3, two]]").error, /"two" \(after value 3\) is not a number/);
  assert.match(parseArray("[[1, 2], [3]]").error, /rows differ in length/);
  assert.match(parseArray("[[1, 2], [3, 4]").error, /1 '\[' left open/);
  assert.match(parseArray("[1, 2]]").error, /no '\['/);
  assert.match(parseArray("[[1, 2, ..., 9]]").error, /'\.\.\.'.*threshold/);
  assert.match(parseArray("[1, nan]").error, /nan at value 2/);
  assert.match(parseArray("[1] [2]").error, /2 arrays/);
  assert.match(parseArray("  ").error, /empty/);
});

test("flatten is row-major", () => {
  assert.deepEqual(flatten([[[1, 2], [3, 4]], [[5, 6], [7, 8]]]), [1, 2, 3, 4, 5, 6, 7, 8]);
});

test("the compare form sends the pasted tensors, names each problem, and refuses an empty form", () => {
  const tensors = { out: { shape: [1, 1, 1, 2] }, dx: { shape: [1, 1, 2, 2] }, dw: { shape: [1, 1, 1, 1] } };
  const ok = readCompareForm({ dx: "[[[[1, 2], [3, 4]]]]", dw: "", out: "  " }, tensors);
  assert.deepEqual(ok, { compare: { dx: [[[[1, 2], [3, 4]]]] } });
  const bad = readCompareForm({ dx: "[[1, x]]", db: "[1]" }, tensors);
  assert.match(bad.errors.dx, /^dx: "x"/);
  assert.match(bad.errors.db, /no db \(the layer has no bias\)/);
  assert.ok(readCompareForm({}, tensors).errors._);
});

const tensor = (shape, data) => ({ shape, data, axes: shape.map((_, i) => `a${i}`) });

test("a mistake trace marks the cells that differ from the truth, with the true value; other shapes are not marked", () => {
  const header = {
    tensors: { dx: tensor([1, 1, 2, 2], [1, 5, 3, 4]), dw: tensor([1, 1, 1, 1], [2]), out: tensor([1, 1, 0, 0], []) },
    mistake: { id: "assign_dx", title: "dx with =", wrong: "w.", should: "s." },
    truth: { dx: { shape: [1, 1, 2, 2], data: [1, 2, 3, 7] }, dw: { shape: [1, 1, 1, 1], data: [2] }, out: { shape: [1, 1, 1, 1], data: [9] } },
    differences: {
      dx: { match: false, kind: "wrong values", expected_shape: [1, 1, 2, 2], differing_count: 2, differing_flat: [1, 3], message: "dx: 2 of 4 values differ" },
      dw: { match: true, kind: "match", expected_shape: [1, 1, 1, 1], differing_count: 0, differing_flat: [], message: "dw matches" },
      out: { match: false, kind: "wrong shape", expected_shape: [1, 1, 1, 1], message: "out has shape (1, 1, 0, 0), expected (1, 1, 1, 1)" },
    },
    failures: { db: { kind: "IndexError", message: "index 3 is out of bounds", event: 4 } },
    first_divergence: 6,
    divergence: { event: 6, stopped: false, did: "dx[0,0,0,1] = 5", should: "dx[0,0,0,1] += 2", wrong: "w.", fix: "f." },
  };
  assert.equal(labKind(header), "mistake");
  const marks = differenceMarks(header);
  assert.deepEqual(Object.keys(marks), ["dx"]);
  assert.deepEqual(marks.dx.map((m) => [m.flat, m.other]), [[1, "2"], [3, "7"]]);
  assert.match(marks.dx[0].title, /this code gives 5, the truth is 2/);
  const s = labSummary(header);
  assert.deepEqual(s.lines.map((l) => [l.tensor, l.ok]), [["dx", false], ["dw", true], ["out", false], ["db", false]]);
  assert.match(s.lines[0].text, /2 of 4 cells differ/);
  assert.match(s.lines[3].text, /raised IndexError: index 3/);
  const none = labSummary({ ...header, failures: { dw: { kind: "returned None", message: "conv_backward_naive's dw is None", event: null } } });
  assert.match(none.lines[3].text, /^dw: the code returned None \(conv_backward_naive's dw is None\)$/);
  assert.equal(s.firstDivergence, 6);
  assert.equal(divergenceNote(header, 5), "");
  assert.match(divergenceNote(header, 6), /It did: dx\[0,0,0,1\] = 5\. It should have done: dx\[0,0,0,1\] \+= 2/);
});

test("a comparison marks the trace's cells where the numbers sent differ, with the sent value", () => {
  const header = {
    tensors: { dx: tensor([1, 1, 2, 2], [1, 2, 3, 4]) },
    comparison: { dx: { match: false, kind: "wrong values", expected_shape: [1, 1, 2, 2], differing_count: 1, differing_flat: [2], message: "dx: 1 of 4 values differ" } },
  };
  const marks = differenceMarks(header, { dx: [[[[1, 2], [-3, 4]]]] });
  assert.deepEqual(marks.dx.map((m) => [m.flat, m.other]), [[2, "−3"]]);
  assert.match(marks.dx[0].title, /yours is −3, the truth is 3/);
  assert.equal(labSummary(header).kind, "compare");
  assert.equal(labSummary({ tensors: {} }), null);
  assert.equal(divergenceNote(header, 0), "");
});

test("each catalogued mistake becomes a lesson of the Common mistakes group that opens its own request", () => {
  const [l] = mistakeLessons([{ id: "empty_crop", title: "T", wrong: "W", request: { x: [1], mistake: "empty_crop" }, first_divergence: 6 }]);
  assert.deepEqual(l, { name: "mistake-empty_crop", title: "T", sentence: "W", group: "mistakes", config: { x: [1], mistake: "empty_crop" }, mistake: "empty_crop", firstDivergence: 6 });
});
