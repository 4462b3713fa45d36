// static/js/io/lesson-file.js: the lesson file's embedded trace instead of the server.
import { test } from "node:test";
import assert from "node:assert/strict";
import { canonical, embeddedLesson, embeddedPreset, replayEmbedded } from "../../static/js/io/lesson-file.js";
import { loadFixture, fixtureNames } from "./fixtures.mjs";

test("a served page (no document, no embedded element) has no embedded lesson", () => {
  assert.equal(embeddedLesson(), null);
});

test("canonical JSON ignores key order only", () => {
  assert.equal(canonical({ b: [1, { d: 2, c: 3 }], a: null }), canonical({ a: null, b: [1, { c: 3, d: 2 }] }));
  assert.notEqual(canonical({ stride: 2 }), canonical({ stride: 1 }));
  assert.notEqual(canonical([1, 2]), canonical([2, 1]));
  assert.notEqual(canonical({ a: "1" }), canonical({ a: 1 }));
});

test("the embedded preset keeps name, title, sentence and config", () => {
  const config = { x: [[[[1]]]], w: [[[[2]]]] };
  const p = embeddedPreset({ preset: { name: "cs231n", title: "T", teaches: "S", config } });
  assert.deepEqual(p, { name: "cs231n", title: "T", sentence: "S", config });
});

test("the embedded lines reach the handlers as a stream would: header, every event, end", async () => {
  const doc = loadFixture(fixtureNames()[0]);
  const { events, ...header } = doc;
  const lines = [{ type: "header", ...header }, ...events.map((e) => ({ type: "event", ...e })), { type: "end", total_events: events.length }];
  const got = { header: null, events: [], end: null };
  await replayEmbedded({ lines }, {
    onHeader: (h) => (got.header = h),
    onEvents: (evs) => got.events.push(...evs),
    onEnd: (m) => (got.end = m),
  });
  assert.equal(got.header.total_events, events.length);
  assert.deepEqual(got.events, events);
  assert.deepEqual(got.end, { type: "end", total_events: events.length });
  await assert.rejects(replayEmbedded({ lines: lines.slice(0, -1) }, { onHeader() {}, onEvents() {}, onEnd() {} }), /before its end line/);
});
