// The im2col and transposed views as the page reads them (fixtures from convcore).
import { test } from "node:test";
import assert from "node:assert/strict";
import { TraceModel, Cursor, phaseIndexAt } from "../../static/js/model/trace-model.js";
import { sliceLayout, gridMarks } from "../../static/js/model/tensor-layout.js";
import { formatValue, maxTextLength } from "../../static/js/model/number-format.js";
import { orderedNames } from "../../static/js/model/tensor-layout.js";
import { loadFixture, headerOf, naiveReplay } from "./fixtures.mjs";

function modelOf(doc) {
  const m = new TraceModel(headerOf(doc));
  m.addEvents(doc.events);
  return m;
}

test("im2col: cols and dcols are titled, drawn with the forward/backward tensors, and the phases touch them", () => {
  const doc = loadFixture("trace_im2col.json");
  const m = modelOf(doc);
  const names = orderedNames(m.tensors);
  assert.ok(names.indexOf("cols") < names.indexOf("z"), names.join());
  assert.ok(names.indexOf("dw") < names.indexOf("dcols") && names.indexOf("dcols") < names.indexOf("dxp"), names.join());
  for (const n of ["cols", "dcols"]) assert.ok(m.tensors[n].title && m.tensors[n].detail);
  const phase = (name) => m.phases.findIndex((p) => p.name === name);
  assert.deepEqual([...m.touched[phase("im2col")]].sort(), ["cols", "xp"]);
  assert.ok(m.touched[phase("col2im")].has("dcols") && m.touched[phase("col2im")].has("dxp"));
  // cols is one slice: rows (c, kh, kw), columns (n, i, j)
  const L = sliceLayout(m.tensors.cols);
  assert.equal(L.slices.length, 1);
  assert.deepEqual([L.rows, L.cols], m.tensors.cols.shape);
});

test("transposed: dz_dilated and w_rot are titled and drawn between dW and dX", () => {
  const doc = loadFixture("trace_transposed.json");
  const m = modelOf(doc);
  const names = orderedNames(m.tensors);
  assert.deepEqual(names.slice(names.indexOf("dw")), ["dw", "dz_dilated", "w_rot", "dxp", "dx"]);
  assert.match(m.tensors.dz_dilated.title, /stride−1 zeros between cells/);
  assert.equal(m.tensors.w_rot.title, "w rotated 180°");
});

test("transposed: the header's inserted zeros are exactly the dz_dilated cells no event writes", () => {
  const doc = loadFixture("trace_transposed.json");
  const m = modelOf(doc);
  const meta = m.tensors.dz_dilated;
  const L = sliceLayout(meta);
  const marks = gridMarks(meta, L);
  const written = new Set();
  for (const ev of m.compiled) for (const w of ev.writes) if (w.tensor === "dz_dilated") for (const i of w.idx) written.add(i);
  for (const sl of L.slices) sl.cells.forEach((flat, k) => assert.equal(marks[k] === ".", written.has(flat), `cell ${flat}`));
  // rows 2, 4, 6 and columns 2, 4, 6 hold dz (kernel 3, stride 2): 9 of 81
  assert.equal(marks.filter((c) => c === ".").length, 9);
  assert.equal(gridMarks(m.tensors.dz, sliceLayout(m.tensors.dz)), null);
});

test("transposed: dx events read the dilated gradient and the rotated kernel, which earlier phases wrote", () => {
  const doc = loadFixture("trace_transposed.json");
  const m = modelOf(doc);
  const c = new Cursor(m);
  const dx = m.phases.find((p) => p.name === "dx");
  const rot = m.phases.find((p) => p.name === "rotate w");
  assert.ok(rot.stop <= dx.start);
  for (let t = dx.start; t < dx.stop; t += 7) {
    c.seek(t);
    const ev = c.event;
    assert.deepEqual(ev.reads.map((r) => r.tensor).sort(), ["dz_dilated", "w_rot"]);
    // the written dxp cell = Σ dz_dilated(window) · w_rot, from the values shown at this step
    const [dzd, wr] = ["dz_dilated", "w_rot"].map((n) => ev.reads.find((r) => r.tensor === n));
    let sum = 0;
    dzd.idx.forEach((flat, i) => (sum += c.values.dz_dilated[flat] * c.values.w_rot[wr.idx[i]]));
    const w = ev.writes.find((x) => x.tensor === "dxp");
    assert.ok(Math.abs(c.values.dxp[w.idx[0]] - sum) < 1e-9, `step ${t}`);
    assert.equal(phaseIndexAt(m.phases, t), m.phases.indexOf(dx));
  }
  // w_rot is w turned 180° once the rotate phase is done
  c.seek(rot.stop - 1);
  const w = m.tensors.w;
  const [F, C, KH, KW] = w.shape;
  for (let f = 0; f < F; f++) for (let ch = 0; ch < C; ch++) for (let k = 0; k < KH; k++) for (let l = 0; l < KW; l++) {
    const at = (a, b) => ((f * C + ch) * KH + a) * KW + b;
    assert.equal(c.values.w_rot[at(k, l)], w.data[at(KH - 1 - k, KW - 1 - l)]);
  }
  assert.deepEqual(naiveReplay(doc, rot.stop - 1).values.w_rot, Array.from(c.values.w_rot));
});

test("value stats bound the text of every value a tensor shows", () => {
  for (const name of ["trace_im2col.json", "trace_transposed.json", "trace_direct_geometry.json"]) {
    const doc = loadFixture(name);
    const m = modelOf(doc);
    for (const n of m.names) {
      let longest = 0;
      for (const v of doc.tensors[n].data) longest = Math.max(longest, formatValue(v).length);
      for (const ev of doc.events) for (const w of ev.writes) if (w.tensor === n) for (const v of w.value) longest = Math.max(longest, formatValue(v).length);
      const bound = maxTextLength(m.valueStats[n]);
      assert.ok(bound >= longest, `${name} ${n}: bound ${bound} < ${longest}`);
      assert.ok(bound <= longest + 3, `${name} ${n}: bound ${bound} far above ${longest}`);
    }
  }
  assert.equal(maxTextLength({ maxPositive: 12, maxNegative: 2, fractional: false }), 2, "12 and −2, never −12");
  assert.equal(maxTextLength({ maxPositive: 3, maxNegative: 12, fractional: false }), 3);
  assert.equal(maxTextLength({ maxPositive: 0.5, maxNegative: 0, fractional: true }), 5);
});

test("slice labels leave out axes of length 1", () => {
  const doc = loadFixture("trace_im2col.json");
  const m = modelOf(doc);
  const L = sliceLayout(m.tensors.xp); // (1, 2, 6, 6)
  assert.deepEqual(L.slices.map((s) => s.shortLabel), ["c=0", "c=1"]);
  assert.deepEqual(L.slices.map((s) => s.label), ["n=0 · c=0", "n=0 · c=1"]);
  assert.equal(sliceLayout(m.tensors.cols).slices[0].shortLabel, "");
});
