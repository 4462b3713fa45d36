// The handout's pure parts (panels/handout.js): which steps it prints by default and
// each phase's rule, read from the trace fixtures that convcore wrote.
import { test } from "node:test";
import assert from "node:assert/strict";
import { TraceModel } from "../../static/js/model/trace-model.js";
import { handoutSteps, phaseRule, handoutTitle } from "../../static/js/panels/handout.js";
import { fixtureNames, headerOf, loadFixture } from "./fixtures.mjs";

test("a handout prints the first step of each phase that has steps", () => {
  const phases = [
    { name: "pad", start: 0, stop: 1 },
    { name: "forward", start: 1, stop: 19 },
    { name: "activation", start: 19, stop: 19 },
    { name: "backward", start: 19, stop: 37 },
  ];
  assert.deepEqual(handoutSteps(phases), [0, 1, 19]);
  assert.deepEqual(handoutSteps([]), []);
});

test("a phase's rule is the header's formula of each tensor its steps write", () => {
  for (const name of fixtureNames()) {
    const doc = loadFixture(name);
    const model = new TraceModel(headerOf(doc));
    model.addEvents(doc.events);
    model.phases.forEach((p, pi) => {
      const written = new Set(doc.events.filter((ev) => ev.phase === p.name).flatMap((ev) => ev.writes.map((w) => w.tensor)));
      const expected = Object.keys(doc.tensors).filter((t) => written.has(t) && doc.tensors[t].formula);
      const rule = phaseRule(model, pi);
      assert.equal(rule.length, expected.length, `${name} ${p.name}`);
      for (const t of expected) assert.ok(rule.includes(doc.tensors[t].formula), `${name} ${p.name}: ${t}`);
    });
  }
});

test("the handout's foot names the lesson, or nothing for a custom setup", () => {
  const lessons = [{ name: "cs231n", title: "CS231n's convolution demo" }];
  assert.equal(handoutTitle({ lessons, trace: { lesson: "cs231n" } }), "CS231n's convolution demo");
  assert.equal(handoutTitle({ lessons, trace: { lesson: "" } }), "");
  assert.equal(handoutTitle({ lessons, trace: null }), "");
});
