import { test } from "node:test";
import assert from "node:assert/strict";
import { badgeOf } from "../../static/js/model/badge.js";

test("an exact replay and a verified gradient: ok, both said", () => {
  const b = badgeOf({ ok: true, maxError: 0 }, { check: { method: "autograd", max_rel_error: 0 } });
  assert.equal(b.state, "ok");
  assert.equal(b.text, "replay-checked · gradients verified to 0");
  assert.match(b.title, /^replay-checked · gradients verified to 0\. Replaying/);
  assert.match(b.title, /verified dx, dw and db with autograd: largest relative error 0\.0e\+0\./);
});

test("a replay off by rounding says its error; a trace the server did not check says only the replay", () => {
  const b = badgeOf({ ok: true, maxError: 2.5e-15 }, {});
  assert.equal(b.state, "ok");
  assert.equal(b.text, "replay-checked · max error 2.5e-15");
  assert.doesNotMatch(b.title, /server/);
});

test("a replay mismatch or a gradient off by more than 1e-8 is bad", () => {
  assert.equal(badgeOf({ ok: false, maxError: 0.5 }, {}).text, "replay mismatch · max error 5.0e-1");
  assert.equal(badgeOf({ ok: false, maxError: 0.5 }, {}).state, "bad");
  const g = badgeOf({ ok: true, maxError: 0 }, { check: { method: "finite differences", max_rel_error: 3e-4 } });
  assert.equal(g.state, "bad");
  assert.equal(g.text, "replay-checked · gradient mismatch 3e-4");
});

test("a mistake's trace is the lab's, said first", () => {
  const b = badgeOf({ ok: true, maxError: 0 }, { mistake: { id: "flip" } });
  assert.equal(b.state, "lab");
  assert.equal(b.text, "mistaken code · replay-checked");
  assert.match(b.title, /mistaken code's trace/);
  // a mistake whose replay fails is still bad
  assert.equal(badgeOf({ ok: false, maxError: 1 }, { mistake: { id: "flip" } }).state, "bad");
});

test("a server check without a number (none run) is left out", () => {
  assert.equal(badgeOf({ ok: true, maxError: 0 }, { check: { method: "none", max_rel_error: null } }).text, "replay-checked");
});

test("each state has its few words for a projector's one-line bar", () => {
  assert.equal(badgeOf({ ok: true, maxError: 0 }, {}).short, "checked");
  assert.equal(badgeOf({ ok: false, maxError: 0.5 }, {}).short, "mismatch");
  assert.equal(badgeOf({ ok: true, maxError: 0 }, { mistake: { id: "flip" } }).short, "mistaken code");
});

test("a trace of a student's own code says so", () => {
  const b = badgeOf({ ok: true, maxError: 0 }, { mistake: { id: "your-code", student: true } });
  assert.equal(b.state, "lab");
  assert.equal(b.short, "your code");
  assert.ok(b.text.startsWith("your code · replay-checked"));
  assert.equal(badgeOf({ ok: true, maxError: 0 }, { mistake: { id: "assign_dx" } }).short, "mistaken code");
});
