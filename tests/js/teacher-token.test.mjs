import { test } from "node:test";
import assert from "node:assert/strict";
import { adoptTeacherToken, teacherToken } from "../../static/js/io/teacher-token.js";

function fakes(search, hash = "") {
  const items = new Map();
  const storage = { getItem: (k) => (items.has(k) ? items.get(k) : null), setItem: (k, v) => items.set(k, String(v)) };
  const written = [];
  const history = { replaceState: (_s, _t, url) => written.push(url) };
  return { loc: { pathname: "/", search, hash }, storage, history, written };
}

test("the teacher link's token is kept in storage and taken out of the address", () => {
  const f = fakes("?teacher=s3cret&debug", "#s=4&l=cs231n");
  adoptTeacherToken(f.loc, f.storage, f.history);
  assert.equal(teacherToken(f.storage), "s3cret");
  assert.deepEqual(f.written, ["/?debug=#s=4&l=cs231n"]);
  assert.ok(!f.written[0].includes("s3cret"));
});

test("an address without a token changes nothing, and a student's link keeps its code", () => {
  const f = fakes("?follow=ABC234");
  adoptTeacherToken(f.loc, f.storage, f.history);
  assert.equal(teacherToken(f.storage), null);
  assert.deepEqual(f.written, []);
  const g = fakes("?teacher=&follow=ABC234");
  adoptTeacherToken(g.loc, g.storage, g.history);
  assert.deepEqual(g.written, ["/?follow=ABC234"]);
  assert.equal(teacherToken(g.storage), null);
});
