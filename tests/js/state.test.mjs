import { test } from "node:test";
import assert from "node:assert/strict";
import {
  TraceModel, Cursor, boxIndices, tensorMeta, unravel, replayCheck, carryStep,
  phaseIndexAt, nextPhaseStart, previousPhaseStart, cellName,
} from "../../static/js/model/trace-model.js";
import { loadFixture, fixtureNames, headerOf, naiveReplay } from "./fixtures.mjs";

function modelOf(doc, opts) {
  const m = new TraceModel(headerOf(doc), opts);
  m.addEvents(doc.events);
  return m;
}

function closeTo(a, b, tol = 1e-9) {
  return Math.abs(a - b) <= tol * Math.max(1, Math.abs(a), Math.abs(b));
}

test("boxIndices walks a strided box in row-major order", () => {
  const meta = tensorMeta("xp", { shape: [1, 2, 5, 5], data: new Array(50).fill(0), axes: ["n", "c", "h", "w"] });
  const idx = boxIndices(meta, { start: [0, 1, 0, 1], stop: [1, 2, 5, 4], step: [1, 1, 2, 2] });
  // rows 0,2,4 and cols 1,3 of channel 1
  assert.deepEqual(Array.from(idx), [26, 28, 36, 38, 46, 48]);
  assert.deepEqual(unravel(48, meta.shape), [0, 1, 4, 3]);
});

test("boxIndices refuses a box with the wrong number of axes", () => {
  const meta = tensorMeta("w", { shape: [2, 2], data: [1, 2, 3, 4] });
  assert.throws(() => boxIndices(meta, { tensor: "w", start: [0], stop: [1], step: [1] }), /1 axes/);
});

test("the worked example: the step that writes out[0,0,1,0] (z, the identity) shows 37 (design.md)", () => {
  const doc = loadFixture("trace_worked_example.json");
  const m = modelOf(doc);
  assert.equal(doc.aliases.z, "out");
  const k = doc.events.findIndex((e) => e.writes.some((w) => w.tensor === "out" && w.start.join() === "0,0,1,0"));
  assert.ok(k >= 0);
  const c = new Cursor(m);
  c.seek(k);
  const out = m.tensors.out;
  const flat = 0 * 4 + 1 * 2 + 0;
  assert.equal(c.values.out[flat], 37);
  assert.equal(c.counts.out[flat], 1);
  assert.equal(c.counts.out[3], 0, "out[0,0,1,1] is not computed yet");
  assert.equal(cellName(out, flat), "out[0,0,1,0]");
  assert.equal(c.event.text, doc.events[k].text);
});

for (const name of fixtureNames()) {
  test(`${name}: every step equals an independent replay, whatever the path`, () => {
    const doc = loadFixture(name);
    const m = modelOf(doc, { checkpointEvery: 7 });
    const c = new Cursor(m);
    const n = doc.events.length;
    assert.equal(n, doc.total_events);
    // forward, backward, and random jumps
    const order = [];
    for (let t = 0; t < n; t++) order.push(t);
    for (let t = n - 1; t >= 0; t -= 3) order.push(t);
    let seed = 12345;
    for (let r = 0; r < 40; r++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      order.push(seed % n);
    }
    const sample = new Set([0, n - 1, Math.floor(n / 2)]);
    for (const t of order) {
      assert.equal(c.seek(t), t);
      if (!sample.has(t) && order.length > 200 && (t % 5)) continue;
      const { values: want, counts } = naiveReplay(doc, t);
      for (const [tensor, arr] of Object.entries(counts)) assert.deepEqual(Array.from(c.counts[tensor]), arr, `${tensor} counts at ${t}`);
      for (const [tensor, arr] of Object.entries(want)) {
        for (let i = 0; i < arr.length; i++) {
          assert.ok(closeTo(c.values[tensor][i], arr[i]), `${tensor}[${i}] at step ${t}: ${c.values[tensor][i]} != ${arr[i]}`);
        }
      }
    }
  });

  test(`${name}: the current event's writes show their value`, () => {
    const doc = loadFixture(name);
    const m = modelOf(doc);
    const c = new Cursor(m);
    for (let t = 0; t < doc.events.length; t += Math.max(1, Math.floor(doc.events.length / 50))) {
      c.seek(t);
      for (const w of m.compiled[t].writes) {
        w.idx.forEach((flat, i) => assert.equal(c.values[w.tensor][flat], doc.events[t].writes.find((x) => x.tensor === w.tensor).value[i] ?? w.value[i]));
      }
    }
  });

  test(`${name}: the last step equals the header's data and the replay check passes`, () => {
    const doc = loadFixture(name);
    const m = modelOf(doc);
    const c = new Cursor(m);
    c.seek(doc.events.length - 1);
    for (const n of m.writtenNames) {
      const data = doc.tensors[n].data;
      data.forEach((v, i) => assert.ok(closeTo(c.values[n][i], v), `${n}[${i}]`));
    }
    const check = replayCheck(m);
    assert.equal(check.ok, true, JSON.stringify(check));
  });

  test(`${name}: inputs are never written and are shown from the header`, () => {
    const doc = loadFixture(name);
    const m = modelOf(doc);
    for (const [n, t] of Object.entries(doc.tensors)) {
      if (t.role === "input") {
        assert.ok(!doc.events.some((e) => e.writes.some((w) => w.tensor === n)), `${n} is written`);
        assert.deepEqual(Array.from(new Cursor(m).values[n]), t.data);
      }
    }
  });
}

test("replay check catches a tampered delta", () => {
  const doc = loadFixture("trace_worked_example.json");
  const k = doc.events.findIndex((e) => e.phase === "forward");
  doc.events[k].writes[0].delta[0] += 1;
  const check = replayCheck(modelOf(doc));
  assert.equal(check.ok, false);
  assert.ok(check.maxError >= 1 && check.valueError >= 1);
});

test("a partly received trace can be stepped within what has arrived", () => {
  const doc = loadFixture("trace_worked_example.json");
  const m = new TraceModel(headerOf(doc), { checkpointEvery: 4 });
  const c = new Cursor(m);
  assert.equal(c.seek(5), -1);
  m.addEvents(doc.events.slice(0, 5)); // of 8: 4 forward, 4 backward
  assert.equal(c.seek(7), 4);
  assert.equal(m.complete, false);
  m.addEvents(doc.events.slice(5));
  assert.equal(c.seek(7), 7);
  assert.equal(m.complete, true);
  assert.equal(replayCheck(m).ok, true);
});

test("an event naming an unknown tensor or a wrong value count is refused", () => {
  const doc = loadFixture("trace_worked_example.json");
  const m = new TraceModel(headerOf(doc));
  assert.throws(() => m.addEvents([{ ...doc.events[0], writes: [{ ...doc.events[0].writes[0], tensor: "nope" }] }]), /nope/);
  assert.throws(() => m.addEvents([{ ...doc.events[0], writes: [{ ...doc.events[0].writes[0], value: [1, 2] }] }]), /2 values/);
});

test("phase navigation", () => {
  const phases = [{ name: "pad", start: 0, stop: 9 }, { name: "empty", start: 9, stop: 9 }, { name: "forward", start: 9, stop: 13 }, { name: "backward", start: 13, stop: 20 }];
  assert.equal(phaseIndexAt(phases, 10), 2);
  assert.equal(phaseIndexAt(phases, 25), -1);
  assert.equal(nextPhaseStart(phases, 3), 9);
  assert.equal(nextPhaseStart(phases, 14), null);
  assert.equal(previousPhaseStart(phases, 11), 9);
  assert.equal(previousPhaseStart(phases, 9), 0);
  assert.equal(previousPhaseStart(phases, 0), 0);
});

test("carryStep keeps the phase and the position in it", () => {
  const a = [{ name: "pad", start: 0, stop: 10 }, { name: "forward", start: 10, stop: 20 }];
  const b = [{ name: "pad", start: 0, stop: 4 }, { name: "forward", start: 4, stop: 14 }];
  assert.equal(carryStep(a, 20, 13, b, 14), 7);
  const c = [{ name: "pad", start: 0, stop: 4 }, { name: "forward", start: 4, stop: 104 }];
  assert.equal(carryStep(a, 20, 19, c, 104), 103);
  assert.equal(carryStep(a, 20, 10, c, 104), 4);
  // phase gone: same fraction of the trace
  assert.equal(carryStep(a, 20, 19, [{ name: "other", start: 0, stop: 5 }], 5), 4);
  assert.equal(carryStep(a, 20, 5, b, 0), -1);
});
