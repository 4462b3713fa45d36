import { test } from "node:test";
import assert from "node:assert/strict";
import { keyAction, isTypingField } from "../../static/js/model/player.js";

const on = (tagName, extra = {}) => ({ tagName, ...extra });

test("the player's keys act whatever has focus, outside typing fields", () => {
  for (const target of [on("SELECT"), on("BUTTON"), on("INPUT", { type: "range" }), on("INPUT", { type: "checkbox" }), on("DIV"), null]) {
    assert.equal(keyAction({ key: "PageDown", target }), "next", JSON.stringify(target));
    assert.equal(keyAction({ key: "ArrowRight", target }), "next");
    assert.equal(keyAction({ key: "PageUp", target }), "prev");
    assert.equal(keyAction({ key: " ", target }), "toggle");
    assert.equal(keyAction({ key: "Home", target }), "first");
    assert.equal(keyAction({ key: "End", target }), "last");
    assert.equal(keyAction({ key: "]", target }), "nextPhase");
    assert.equal(keyAction({ key: "[", target }), "prevPhase");
    assert.equal(keyAction({ key: "+", target }), "faster");
    assert.equal(keyAction({ key: "-", target }), "slower");
    assert.equal(keyAction({ key: "p", target }), "projector");
    assert.equal(keyAction({ key: "F", target }), "fullscreen");
    assert.equal(keyAction({ key: "?", target }), "keys");
    assert.equal(keyAction({ key: "Enter", target }), null); // presses a focused button
  }
  assert.equal(keyAction({ key: "ArrowRight", ctrlKey: true, target: null }), null);
});

test("in a field the user types in, keys are theirs and Escape hands them back", () => {
  for (const target of [on("INPUT", { type: "number" }), on("INPUT", { type: "text" }), on("INPUT"), on("TEXTAREA"), on("DIV", { isContentEditable: true })]) {
    assert.ok(isTypingField(target));
    for (const key of [" ", "ArrowRight", "PageDown", "p", "Home"]) assert.equal(keyAction({ key, target }), null);
    assert.equal(keyAction({ key: "Escape", target }), "leaveField");
  }
  assert.ok(!isTypingField(on("SELECT")));
  assert.equal(keyAction({ key: "Escape", target: on("SELECT") }), null);
});

test("phase labels shorten by one rule, never to a cut-off stub", async () => {
  const { phaseLabelForms } = await import("../../static/js/panels/phase-marks.js");
  assert.deepEqual(phaseLabelForms("activation grad"), ["activation grad", "act. grad", "a.g.", ""]);
  assert.deepEqual(phaseLabelForms("activation"), ["activation", "act.", ""]);
  assert.deepEqual(phaseLabelForms("pad"), ["pad", ""]);
  assert.deepEqual(phaseLabelForms("dw"), ["dw", ""]);
});
