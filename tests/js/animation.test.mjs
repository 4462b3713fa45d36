// An animation's frame, without a browser: the equation wrapped onto lines (never cut) and
// the band over the stage that holds the longest of a recording; the store's "recording".
import { test } from "node:test";
import assert from "node:assert/strict";
import { wrapText, bandFor } from "../../static/js/encode/animation.js";
import { initialState, reduce } from "../../static/js/model/page-state.js";

const mono = (px) => (s) => s.length * px; // a monospace font: px per character
const EQ = "dout[0,1,2,2] = 2: db[1] += 2 → 3; dw[1] += 2·xp[0,0:3,4:7,4:7]; dxp[0,0:3,4:7,4:7] += 2·w[1]";

test("wrapText: lines no wider than the room that, joined, are the text whole", () => {
  for (const width of [40, 150, 300, 700, 2000]) {
    const lines = wrapText(EQ, width, mono(10));
    assert.equal(lines.join(""), EQ, `width ${width}`);
    for (const l of lines) assert.ok(l.trimEnd().length * 10 <= width || l.trimEnd().length === 1, `"${l}" at ${width}`);
  }
  assert.deepEqual(wrapText("short", 100, mono(10)), ["short"]);
  assert.deepEqual(wrapText("", 100, mono(10)), [""]);
});

test("wrapText: breaks after a '; ' where the line has one in its second half, else at a space, else within a word", () => {
  const lines = wrapText(EQ, 700, mono(10));
  assert.deepEqual(lines, ["dout[0,1,2,2] = 2: db[1] += 2 → 3; dw[1] += 2·xp[0,0:3,4:7,4:7]; ", "dxp[0,0:3,4:7,4:7] += 2·w[1]"]);
  assert.deepEqual(wrapText("a bb ccc", 50, mono(10)), ["a bb ", "ccc"]);
  assert.deepEqual(wrapText("abcdefgh", 30, mono(10)), ["abc", "def", "gh"]);
});

test("bandFor: room for the phase line and the longest equation's lines; smaller text only past a share of the frame", () => {
  const ctx = { font: "", measureText: (s) => ({ width: s.length * parseFloat(/(\d+)px/.exec(ctx.font)[1]) * 0.6 }) };
  const one = bandFor(ctx, ["z = 1"], 1280, 720);
  assert.equal(one.font, 24); // 3.4% of 720
  assert.equal(one.height, 24 + one.line * 2);
  const two = bandFor(ctx, ["z = 1", EQ], 1280, 720);
  assert.equal(two.font, 24);
  assert.equal(two.height, 24 + two.line * 3); // EQ takes two lines at 1280 px
  // a long text in a small frame: the text gets smaller rather than the band taking the frame
  const long = bandFor(ctx, [EQ.repeat(4)], 640, 360);
  assert.ok(long.font < 14 && long.font >= 12, long.font);
  // the line of code each step runs: the longest's lines more, none for a step without one
  const coded = bandFor(ctx, ["z = 1", EQ], 1280, 720, [null, "27  dx = dxp[:, :, 1:6, 1:6]"]);
  assert.equal(coded.codeLines, 1);
  assert.equal(coded.height, 24 + coded.line * 4);
  assert.equal(bandFor(ctx, ["z = 1"], 1280, 720, [null]).codeLines, 0);
});

test("reduce: recording holds the frame's stage size until it ends", () => {
  let s = reduce(initialState(), { type: "recording", size: { width: 1280, height: 603 } });
  assert.deepEqual(s.recording, { width: 1280, height: 603 });
  assert.equal(reduce(s, { type: "recording", size: null }).recording, null);
});
