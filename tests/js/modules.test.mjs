import { test } from "node:test";
import assert from "node:assert/strict";
import { sliceLayout, boxOutlines, gridMarks } from "../../static/js/model/tensor-layout.js";
import { tensorMeta } from "../../static/js/model/trace-model.js";
import { formatValue, colorLevel, absMax } from "../../static/js/model/number-format.js";
import { splitLines, readNdjsonBatches, consumeTrace, detailMessage } from "../../static/js/model/ndjson.js";
import { encodeLesson, decodeLesson } from "../../static/js/model/url-fragment.js";
import {
  dimsOf, withDims, withDoutFreed, withBias, withLayer, shapesFor, paddingOf, paddingValue, parseNumbers, pasteInto,
  nestFlat, flattenNested, shapeOf, adoptMeta, defaultConfig, parseCells, pasteCells, wholeNumber, resizeTyped,
  oversizedInput,
} from "../../static/js/model/trace-config.js";
import { loadFixture, loadMeta } from "./fixtures.mjs";

adoptMeta(loadMeta()); // what the server publishes (tests/fixtures/page/meta.json)
const DEFAULT_CONFIG = defaultConfig();

const meta = (name, shape, axes, grid) =>
  tensorMeta(name, { shape, axes, grid, data: new Array(shape.reduce((p, v) => p * v, 1)).fill(0) });

test("sliceLayout: one labelled slice per (n, c), cells map to flat indices", () => {
  const m = meta("x", [2, 3, 4, 5], ["n", "c", "h", "w"], ["h", "w"]);
  const L = sliceLayout(m);
  assert.equal(L.slices.length, 6);
  assert.equal(L.rows, 4);
  assert.equal(L.cols, 5);
  assert.equal(L.slices[4].label, "n=1 · c=1");
  assert.equal(L.bands.length, 2);
  assert.equal(L.bands[1].label, "n=1");
  // cell (r=2, c=3) of slice n=1,c=1 -> flat ((1*3+1)*4+2)*5+3
  assert.equal(L.slices[4].cells[2 * 5 + 3], ((1 * 3 + 1) * 4 + 2) * 5 + 3);
});

test("sliceLayout: NHWC grid axes in the middle, 1-D tensors, and the cell cap", () => {
  const m = meta("x", [1, 3, 4, 2], ["n", "h", "w", "c"], ["h", "w"]);
  const L = sliceLayout(m);
  assert.equal(L.slices.length, 2);
  assert.equal(L.slices[1].label, "n=0 · c=1");
  assert.equal(L.slices[1].cells[1 * 4 + 2], (1 * 4 + 2) * 2 + 1);
  const b = sliceLayout(meta("b", [3], ["f"], [null, "f"]));
  assert.equal(b.rows, 1);
  assert.deepEqual(Array.from(b.slices[0].cells), [0, 1, 2]);
  assert.equal(b.slices[0].label, "");
  const big = sliceLayout(meta("z", [4, 4, 10, 10], ["n", "f", "h", "w"], ["h", "w"]), 1000);
  assert.equal(big.slices.length, 10);
  assert.equal(big.drawnCells, 1000);
  assert.equal(big.totalCells, 1600);
});

test("boxOutlines: a dilated window is outlined by its bounding rectangle on its slice", () => {
  const m = meta("xp", [1, 2, 7, 7], ["n", "c", "h", "w"], ["h", "w"]);
  const L = sliceLayout(m);
  const box = { start: [0, 1, 2, 0], stop: [1, 2, 7, 5], step: [1, 1, 2, 2] };
  assert.deepEqual(boxOutlines(L, box), [{ slice: 1, r0: 2, r1: 6, c0: 0, c1: 4 }]);
  const all = { start: [0, 0, 0, 0], stop: [1, 2, 2, 2], step: [1, 1, 1, 1] };
  assert.equal(boxOutlines(L, all).length, 2);
});

test("gridMarks reads the header's marks of a padded input, and refuses marks of another grid", () => {
  const doc = loadFixture("trace_direct_geometry.json"); // padding [1, 0, 0, 1]
  const m = tensorMeta("xp", doc.tensors.xp);
  const L = sliceLayout(m);
  const marks = gridMarks(m, L);
  assert.equal(marks.length, L.rows * L.cols);
  const row = (r) => marks.slice(r * L.cols, (r + 1) * L.cols).join("");
  assert.match(row(0), /^p+$/);
  assert.equal(row(1).at(-1), "p");
  assert.notEqual(row(1)[0], "p");
  assert.equal(gridMarks(tensorMeta("z", doc.tensors.z), sliceLayout(tensorMeta("z", doc.tensors.z))), null);
  assert.throws(() => gridMarks({ ...m, marks: ["pp"] }, L), /marks/);
});

test("formatValue and colour levels", () => {
  assert.equal(formatValue(37), "37");
  assert.equal(formatValue(-2), "−2");
  assert.equal(formatValue(0.125), "0.125");
  assert.equal(formatValue(1 / 3), "0.333");
  assert.equal(formatValue(-12.5), "−12.5");
  assert.equal(formatValue(1e-5), "1e-5");
  assert.equal(formatValue(0), "0");
  assert.equal(formatValue(1234.5), "1235");
  assert.equal(formatValue(99.95), "100");
  assert.equal(colorLevel(0, 5), 0);
  assert.equal(colorLevel(5, 5), 6);
  assert.equal(colorLevel(-5, 5), -6);
  assert.equal(colorLevel(0.01, 5), 1, "a tiny non-zero is not painted as zero");
  assert.equal(absMax([1, -7, 3]), 7);
});

test("splitLines keeps partial lines", () => {
  let r = splitLines("", '{"a":1}\n{"b"');
  assert.deepEqual(r.lines, ['{"a":1}']);
  r = splitLines(r.rest, ":2}\n\n");
  assert.deepEqual(r.lines, ['{"b":2}']);
  assert.equal(r.rest, "");
});

function streamOf(chunks) {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(enc.encode(c));
      controller.close();
    },
  });
}

test("consumeTrace reads a chunked NDJSON stream with batched and single events", async () => {
  const doc = loadFixture("trace_worked_example.json");
  const { events, ...header } = doc;
  const lines = [JSON.stringify({ type: "header", ...header })];
  lines.push(JSON.stringify({ type: "events", first: 0, events: events.slice(0, 5) }));
  for (const e of events.slice(5)) lines.push(JSON.stringify({ type: "event", ...e }));
  lines.push(JSON.stringify({ type: "end", total_events: events.length }));
  const text = lines.join("\n") + "\n";
  const chunks = [];
  for (let i = 0; i < text.length; i += 97) chunks.push(text.slice(i, i + 97));
  const got = [];
  let head = null;
  let end = null;
  await consumeTrace(readNdjsonBatches(streamOf(chunks)), {
    onHeader: (h) => (head = h),
    onEvents: (evs) => got.push(...evs),
    onEnd: (m) => (end = m),
  });
  assert.equal(head.schema, "convscope.trace/3");
  assert.equal(got.length, events.length);
  assert.deepEqual(got[7], events[7]);
  assert.equal(end.total_events, events.length);
});

test("consumeTrace raises the server's error line and a cut stream", async () => {
  const err = '{"type":"header","tensors":{}}\n{"type":"error","detail":[{"loc":["body","x"],"msg":"x is too large"}]}\n';
  await assert.rejects(
    consumeTrace(readNdjsonBatches(streamOf([err])), { onHeader() {}, onEvents() {}, onEnd() {} }),
    (e) => e.message === "x is too large" && e.detail[0].loc[1] === "x",
  );
  await assert.rejects(
    consumeTrace(readNdjsonBatches(streamOf(['{"type":"header","tensors":{}}\n'])), { onHeader() {}, onEvents() {}, onEnd() {} }),
    /before its end line/,
  );
  assert.equal(detailMessage([{ msg: "a" }, { msg: "b" }]), "a; b");
});

test("the lesson URL round-trips config, step and speed (unicode too)", () => {
  const config = { ...DEFAULT_CONFIG, x: [[[[1, -2.5], [3, 4]]]], note: "Σ·−" };
  const hash = encodeLesson({ config, step: 42, speed: 3 });
  assert.match(hash, /^#s=42&x=3&c=[A-Za-z0-9_-]+$/);
  const back = decodeLesson(hash);
  assert.deepEqual(back.config, config);
  assert.equal(back.step, 42);
  assert.equal(back.speed, 3);
  assert.equal(back.lesson, null);
  assert.deepEqual(decodeLesson(""), { config: null, lesson: null, step: null, speed: null, projector: false, allTensors: false, codeOpen: false });
  assert.throws(() => decodeLesson("#s=-1"), /step/);
  assert.throws(() => decodeLesson("#c=%%%"), /damaged/);
});

test("an unchanged lesson is addressed by name, with projector, all-tensors and code flags", () => {
  const hash = encodeLesson({ config: { x: [[[[1]]]] }, lesson: "cs231n", step: 49, projector: true, allTensors: true, codeOpen: true });
  assert.equal(hash, "#s=49&p=1&a=1&k=1&l=cs231n");
  assert.deepEqual(decodeLesson(hash), { config: null, lesson: "cs231n", step: 49, speed: null, projector: true, allTensors: true, codeOpen: true });
  assert.equal(decodeLesson("#s=3&p=1&l=d2l").codeOpen, false);
  assert.equal(decodeLesson("#s=3&l=d2l").projector, false);
  assert.throws(() => decodeLesson("#l=a%20b"), /lesson name/);
});

test("dims are read in the config's layout and written back", () => {
  assert.deepEqual(dimsOf(DEFAULT_CONFIG), { N: 1, C: 1, H: 5, W: 5, F: 1, KH: 3, KW: 3 });
  const nhwc = { ...DEFAULT_CONFIG, layout: "NHWC", x: { fill: "ones", shape: [2, 6, 7, 3] }, w: { fill: "ones", shape: [3, 2, 3, 4] } };
  assert.deepEqual(dimsOf(nhwc), { N: 2, C: 3, H: 6, W: 7, F: 4, KH: 3, KW: 2 });
  assert.deepEqual(shapesFor({ N: 1, C: 4, H: 5, W: 5, F: 6, KH: 3, KW: 3 }, "NCHW", 2).w, [6, 2, 3, 3]);
  const { config, notes } = withDims({ ...DEFAULT_CONFIG, x: [[[[1, 2], [3, 4]]]], b: { fill: "ones", shape: [1] }, dout: [[[[1]]]] }, { N: 1, C: 1, H: 4, W: 4, F: 2, KH: 3, KW: 3 });
  // typed x keeps its four values in the larger shape, new cells 0, and says so
  assert.deepEqual(config.x, [[[[1, 2, 0, 0], [3, 4, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]]]);
  assert.deepEqual(config.w.shape, [2, 1, 3, 3]);
  assert.deepEqual(config.b.shape, [2]);
  assert.equal(config.dout, null);
  assert.equal(notes.length, 2);
  assert.match(notes[0], /^x: 4 typed values kept, 12 new cells set to 0\.$/);
  assert.match(notes[1], /^dout: /);
  assert.deepEqual(withBias(DEFAULT_CONFIG, true).b.shape, [1]);
  assert.equal(withBias(config, false).b, null);
});

test("typed values survive a shape changed away and back, and say what was kept", () => {
  const typed = { shape: [1, 1, 2, 2], data: [0, 1, 2, 3] }; // d2l's kernel
  const cfg = { ...DEFAULT_CONFIG, x: { fill: "ones", shape: [1, 1, 3, 3] }, w: [[[[0, 1], [2, 3]]]] };
  const away = withDims(cfg, { N: 1, C: 1, H: 3, W: 3, F: 1, KH: 5, KW: 2 }, { typed: { w: typed } });
  assert.deepEqual(flattenNested(away.config.w), [0, 1, 2, 3, 0, 0, 0, 0, 0, 0]);
  const smaller = withDims(cfg, { N: 1, C: 1, H: 3, W: 3, F: 1, KH: 1, KW: 2 }, { typed: { w: typed } });
  assert.deepEqual(smaller.config.w, [[[[0, 1]]]]);
  assert.match(smaller.notes[0], /2 set aside/);
  const back = withDims(smaller.config, { N: 1, C: 1, H: 3, W: 3, F: 1, KH: 2, KW: 2 }, { typed: { w: typed } });
  assert.deepEqual(back.config.w, [[[[0, 1], [2, 3]]]]);
  assert.deepEqual(resizeTyped(typed, [1, 1, 2, 2]), { values: [[[[0, 1], [2, 3]]]], kept: 4, added: 0, dropped: 0 });
});

test("words in cells and pastes, oversize pastes and non-whole numbers are refused by name", () => {
  assert.deepEqual(parseCells("1 two 3"), { error: '"two" (token 2 of 3) is not a number' });
  assert.deepEqual(parseCells("abc").error, '"abc" (token 1 of 1) is not a number');
  assert.deepEqual(parseCells("array([[1., 2.], [3., -4.]])").numbers, [1, 2, 3, -4]);
  assert.deepEqual(parseCells("1.5e2\t−2; 3").numbers, [150, -2, 3]);
  assert.deepEqual(pasteCells([0, 0, 0, 0], 2, [7, 8, 9]), { error: "3 values pasted, but only 2 cells from here to the end; nothing was pasted" });
  assert.deepEqual(pasteCells([0, 0, 0, 0], 1, [7, 8, 9]), { data: [0, 7, 8, 9] });
  assert.deepEqual(wholeNumber("1.5", "stride h", 1), { error: "stride h must be a whole number; got 1.5 (never rounded)" });
  assert.deepEqual(wholeNumber("-1", "H", 1), { error: "H must be at least 1; got -1" });
  assert.deepEqual(wholeNumber("", "H", 1).error, "H is empty; type a whole number");
  // a number field's text its browser cannot read ("1e") comes as "": not said as empty
  assert.deepEqual(wholeNumber("", "H", 1, true), { error: "H as typed is not a number; type a whole number" });
  assert.deepEqual(wholeNumber("0", "stride h"), { value: 0 }); // (the server's bound)
  assert.deepEqual(wholeNumber(" 3 ", "H", 1), { value: 3 });
  assert.deepEqual(wholeNumber("0", "padding", 0), { value: 0 });
});

test("padding modes, pasted numbers, nesting", () => {
  for (const v of [0, 2, [1, 2], [0, 1, 2, 3], "same", "valid"]) assert.deepEqual(paddingValue(paddingOf(v)), v);
  assert.deepEqual(paddingValue({ mode: "four", values: [1] }), [1, 1, 1, 1]);
  assert.deepEqual(parseNumbers("[[1, 2],\n [3, -4.5]]\t1e-2 −3"), [1, 2, 3, -4.5, 0.01, -3]);
  assert.deepEqual(pasteInto([0, 0, 0, 0], 2, [7, 8, 9]), [0, 0, 7, 8]);
  const nested = nestFlat([1, 2, 3, 4, 5, 6], [1, 2, 3]);
  assert.deepEqual(nested, [[[1, 2, 3], [4, 5, 6]]]);
  assert.deepEqual(shapeOf(nested), [1, 2, 3]);
  assert.deepEqual(flattenNested(nested), [1, 2, 3, 4, 5, 6]);
});

test("a change of stride, padding or dilation frees dout from the output's old shape", () => {
  const typed = withDoutFreed({ x: [[[[1]]]], dout: [[[[3]]]] });
  assert.equal(typed.config.dout, null);
  assert.match(typed.note, /dout: .*back to ones/);
  const fill = withDoutFreed({ dout: { fill: "int", seed: 2, shape: [1, 1, 2, 2] } });
  assert.deepEqual(fill.config.dout, { fill: "int", seed: 2 });
  assert.equal(fill.note, "");
  assert.deepEqual(withDoutFreed({ x: [1] }), { config: { x: [1] }, note: "" });
});

test("a ConvTranspose2d's dims: C in, F out, w (C, F/groups, KH, KW), b (F,)", () => {
  const config = { layer: "conv_transpose2d", groups: 2, x: { fill: "ones", shape: [1, 4, 3, 3] }, w: { fill: "ones", shape: [4, 3, 2, 2] } };
  assert.deepEqual(dimsOf(config), { N: 1, C: 4, H: 3, W: 3, F: 6, KH: 2, KW: 2 });
  assert.deepEqual(shapesFor(dimsOf(config), "NCHW", 2, "conv_transpose2d"), { x: [1, 4, 3, 3], w: [4, 3, 2, 2], b: [6] });
  assert.deepEqual(withBias(config, true).b.shape, [6]);
});

test("changing the layer keeps the dims, rearranges w and leaves what the layer does not take", () => {
  const conv = {
    x: { fill: "ones", shape: [1, 2, 3, 3] }, w: [[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]], dout: { fill: "ones", shape: [1, 1, 2, 2] },
    activation: "relu", view: "im2col", padding: "same", loop_order: "nfij",
  };
  const dims = dimsOf(conv);
  const { config, notes } = withLayer(conv, "conv_transpose2d", dims);
  assert.equal(config.layer, "conv_transpose2d");
  assert.deepEqual(shapeOf(config.w), [2, 1, 2, 2]); // (C, F, KH, KW): typed values kept where their index lives on
  assert.deepEqual(config.w, [[[[1, 2], [3, 4]]], [[[0, 0], [0, 0]]]]);
  assert.equal(config.padding, 0);
  for (const k of ["activation", "view", "loop_order"]) assert.equal(config[k], undefined, k); // (im2col: not its view)
  assert.equal(withLayer({ ...conv, view: "transposed" }, "conv_transpose2d", dims).config.view, "transposed");
  assert.ok(notes[0].includes("ConvTranspose2d is traced in NCHW") && notes[0].includes("activation"), notes[0]);
  assert.deepEqual(config.dout, { fill: "ones" }); // the output's shape will change: the server gives it
  const back = withLayer({ ...config, output_padding: 1 }, "conv2d", dimsOf(config));
  assert.equal(back.config.layer, undefined);
  assert.equal(back.config.output_padding, undefined);
  assert.deepEqual(shapeOf(back.config.w), [1, 2, 2, 2]);
});

test("oversizedInput: the first input the typed sizes make larger than the limit", () => {
  const dims = { N: 1, C: 3, H: 5, W: 5, F: 2, KH: 3, KW: 3, groups: 1 };
  assert.equal(oversizedInput(dims, 4096), null);
  assert.equal(oversizedInput(dims, 0), null); // (no published limit: the server's to say)
  const big = oversizedInput({ ...dims, C: 100000 }, 4096);
  assert.deepEqual(big, { tensor: "x", count: 2500000, sizes: [["N", 1], ["C", 100000], ["H", 5], ["W", 5]], groups: 1 });
  // w's cells: F·C/groups·KH·KW (x fits)
  const wide = oversizedInput({ ...dims, C: 64, F: 64, groups: 2, H: 4, W: 4 }, 4096);
  assert.deepEqual(wide, { tensor: "w", count: 18432, sizes: [["F", 64], ["C", 64], ["KH", 3], ["KW", 3]], groups: 2 });
  assert.equal(oversizedInput({ ...dims, C: 64, F: 64, groups: 64, H: 4, W: 4 }, 4096), null);
  // a sequence's x is N·C·L (its H is 1 and not counted)
  assert.deepEqual(oversizedInput({ ...dims, H: 1, KH: 1, W: 5000 }, 4096, true).sizes, [["N", 1], ["C", 3], ["L", 5000]]);
});
