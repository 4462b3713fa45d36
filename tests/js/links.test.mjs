// A cell's links across a phase (js/model/cell-links.js), against the boxes of the raw events
// expanded here independently, and against what the d2l example's geometry says.
import test from "node:test";
import assert from "node:assert/strict";
import { TraceModel } from "../../static/js/model/trace-model.js";
import { cellLinks } from "../../static/js/model/cell-links.js";
import { loadFixture, headerOf, fixtureNames } from "./fixtures.mjs";

function modelOf(doc) {
  const model = new TraceModel(headerOf(doc));
  model.addEvents(doc.events);
  return model;
}

/** The flat cells of a raw box {start, stop, step} of a tensor of `shape`. */
function cellsOf(box, shape) {
  const strides = shape.map((_, a) => shape.slice(a + 1).reduce((p, v) => p * v, 1));
  const out = [];
  const rec = (a, base) => {
    if (a === shape.length) return out.push(base);
    for (let i = box.start[a]; i < box.stop[a]; i += box.step[a]) rec(a + 1, base + i * strides[a]);
  };
  rec(0, 0);
  return out;
}

function plain(map) {
  return Object.fromEntries([...map].map(([t, s]) => [t, [...s].sort((a, b) => a - b)]));
}

test("in the d2l example, out[0] reads its 2x2 window and the kernel; the centre of x feeds every output", () => {
  const model = modelOf(loadFixture("trace_worked_example.json"));
  const fwd = model.phases.find((p) => p.name === "forward");
  const out0 = cellLinks(model, fwd.start, fwd.stop, "out", 0);
  assert.deepEqual(plain(out0.from), { x: [0, 1, 3, 4], w: [0, 1, 2, 3] });
  assert.equal(out0.to.size, 0);
  assert.equal(out0.steps, 1);
  const centre = cellLinks(model, fwd.start, fwd.stop, "x", 4);
  assert.deepEqual(plain(centre.to), { out: [0, 1, 2, 3] });
  assert.equal(centre.steps, 4);
  assert.deepEqual(plain(cellLinks(model, fwd.start, fwd.stop, "x", 0).to), { out: [0] });
});

test("every fixture: a cell's links are the union of the boxes of the phase's events that touch it", () => {
  for (const name of fixtureNames()) {
    const doc = loadFixture(name);
    if (!doc.events || !doc.tensors) continue;
    const model = modelOf(doc);
    for (const p of model.phases) {
      for (const [tensor, meta] of Object.entries(doc.tensors)) {
        const size = meta.shape.reduce((a, b) => a * b, 1);
        for (const flat of [0, Math.floor(size / 2), size - 1]) {
          if (size === 0) continue;
          const from = new Map();
          const to = new Map();
          let steps = 0;
          for (let k = p.start; k < p.stop; k++) {
            const ev = doc.events[k];
            const has = (boxes) => boxes.some((b) => b.tensor === tensor && cellsOf(b, meta.shape).includes(flat));
            const writes = has(ev.writes);
            const reads = has(ev.reads);
            if (writes || reads) steps += 1;
            const put = (into, boxes) => {
              for (const b of boxes) {
                if (!into.has(b.tensor)) into.set(b.tensor, new Set());
                for (const f of cellsOf(b, doc.tensors[b.tensor].shape)) into.get(b.tensor).add(f);
              }
            };
            if (writes) put(from, ev.reads);
            if (reads) put(to, ev.writes);
          }
          const got = cellLinks(model, p.start, p.stop, tensor, flat);
          const where = `${name} ${p.name} ${tensor}[${flat}]`;
          assert.equal(got.steps, steps, where);
          assert.deepEqual(plain(got.from), plain(from), where);
          assert.deepEqual(plain(got.to), plain(to), where);
        }
      }
    }
  }
});

test("a step's lines join each read to what it is a factor of, from the header's facts alone", async () => {
  const { linePairs } = await import("../../static/js/stage/lines.js");
  const doc = loadFixture("trace_direct_geometry.json");
  const model = modelOf(doc);
  const lines = (phase) => {
    const p = model.phases.find((q) => q.name === phase);
    return linePairs(model, model.compiled[p.start]).map(([r, w]) => `${r.tensor}>${w.tensor}`).sort();
  };
  assert.deepEqual(lines("pad"), ["x>xp"]);
  assert.deepEqual(lines("forward"), ["b>z", "w>z", "xp>z"]);
  assert.deepEqual(lines("activation"), ["z>out"]);
  assert.deepEqual(lines("activation grad"), ["dout>dz"]); // (z is what dz is the gradient of)
  // dz flows back into the three gradients; xp's window feeds dw, w feeds dxp, db takes dz alone
  assert.deepEqual(lines("backward"), ["dz>db", "dz>dw", "dz>dxp", "w>dxp", "xp>dw"]);
  assert.deepEqual(lines("crop"), ["dxp>dx"]);
  // a window over several channels is one box per tensor, its cells all there
  const back = model.compiled[model.phases.find((q) => q.name === "backward").start];
  const xp = linePairs(model, back).find(([r, w]) => r.tensor === "xp" && w.tensor === "dw")[0];
  assert.equal(xp.idx.length, back.reads.filter((r) => r.tensor === "xp").reduce((n, r) => n + r.idx.length, 0));
});
