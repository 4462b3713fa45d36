// A caption is cut only where the stage has no room (tests/test_browser_fit.py checks it
// in Chromium): the stage layout's own widths of the columns must be the widths the page
// draws, and the width to spare must reach every column short of its captions. The
// figures and metrics are those Chromium measured on two lessons that cut captions with
// the stage half empty.
import { test } from "node:test";
import assert from "node:assert/strict";
import { layoutStage, figureSize } from "../../static/js/model/stage-layout.js";

/** The width (px) the page draws column `c` of `layout` at: its figures' widest (each its
 *  grids or its own name and scale, whichever is wider: the description takes no width),
 *  or the column's least width if that is more. */
function drawnWidth(c, layout, byName, m) {
  const own = (f) => {
    const cell = layout.cells[f.name];
    const k = Math.max(1, Math.min(c.perLine, f.slices));
    const gridW = f.cols * cell + (f.cols - 1) * m.gap;
    return Math.max(m.heads[f.name], k * gridW + (k - 1) * m.sliceGapX) + m.figPadX;
  };
  return Math.max(c.minWidth ?? 0, ...c.names.map((n) => own(byName[n])));
}

/** The captions `layout` cuts though the stage has room for them: [name, px short]. */
function cutWithRoom(layout, figures, m) {
  const byName = Object.fromEntries(figures.map((f) => [f.name, f]));
  const widths = layout.columns.map((c) => drawnWidth(c, layout, byName, m));
  const free = layout.room.width - (widths.reduce((a, b) => a + b, 0) + (widths.length - 1) * m.colGap);
  const cut = [];
  layout.columns.forEach((c, i) => {
    for (const n of c.names) {
      const short = m.captions[n] - widths[i];
      if (short > 1 && short < free) cut.push([n, Math.round(short)]);
    }
  });
  return cut;
}

const one = (reach) => ({ slices: 1, band: 1, reach: { ...reach, slices: 1, span: 1, runs: [[0, 0]] } });

test("layoutStage: a column short of its caption by a fraction of a px does not stop the width to spare reaching the others (reflect_edge's backward step at 1024×768)", () => {
  const m = {
    figPadX: 13.6, figPadY: 9.6, captionH: 19.9875, labelH: 0, gap: 3, sliceGapX: 9.6, sliceGapY: 3.2, colGap: 19.2, flowRowGap: 14.4, rowGap: 9.6, minFigW: 60, scrollbar: 0,
    heads: { x: 46, xp: 56, w: 46, out: 66, dout: 76, dw: 56, dxp: 66, dx: 56 },
    captions: { x: 93, xp: 155, w: 96, out: 122, dout: 209, dw: 158, dxp: 265, dx: 161 },
  };
  const figures = [
    { name: "xp", rows: 7, cols: 8, chars: 1, role: "read", ...one({ rows: 3, cols: 3 }) },
    { name: "w", rows: 3, cols: 3, chars: 2, role: "read", ...one({ rows: 3, cols: 3 }) },
    { name: "dout", rows: 5, cols: 6, chars: 2, role: "read", ...one({ rows: 1, cols: 1 }) },
    { name: "dw", rows: 3, cols: 3, chars: 2, role: "write", ...one({ rows: 3, cols: 3 }) },
    { name: "dxp", rows: 7, cols: 8, chars: 2, role: "write", ...one({ rows: 3, cols: 3 }) },
  ];
  const room = { width: 981, height: 530 };
  const layout = layoutStage(figures, room, m, { chars: 2, fontPx: 16, maxCell: 72, fontRatio: 0.4, tagged: true, perFigure: true });
  assert.equal(layout.fits, true);
  // (at cell 30, dout's column is 208.6 px for a 209 px caption: 0.4 px short)
  assert.equal(layout.cells.dout, 30);
  assert.deepEqual(cutWithRoom(layout, figures, m), []);
  const dw = layout.columns.find((c) => c.names.includes("dw"));
  assert.ok(dw.minWidth >= m.captions.dw, `dw's column: ${dw.minWidth} px for a ${m.captions.dw} px caption`);
  assert.ok(layout.width <= room.width, `${layout.width} px in ${room.width}`);
});

test("layoutStage: a one-cell bias beside a long-named figure is as narrow as the page draws it, and widened to its caption (gan_upsample's bias step, projector at 1920×1080)", () => {
  const m = {
    figPadX: 18.4, figPadY: 12.4, captionH: 34.2, labelH: 31.2, gap: 2, sliceGapX: 14.4, sliceGapY: 4.8, colGap: 21.6, flowRowGap: 9.6, rowGap: 9.6, scrollbar: 0,
    // (minFigW: the widest name and scale, "overlaps ±n"; b's own is 79 px)
    minFigW: 167,
    heads: { x: 79, w: 79, b: 79, overlaps: 191, yp: 95, y: 79, dy: 95, dyp: 111, db: 95, dw: 95, dx: 109 },
    captions: { x: 248, w: 519, b: 146, overlaps: 393, yp: 393, y: 266, dy: 373, dyp: 361, db: 271, dw: 278, dx: 336 },
  };
  const figures = [
    { name: "b", rows: 1, cols: 1, chars: 1, role: "read", ...one({ rows: 1, cols: 1 }) },
    { name: "y", rows: 6, cols: 6, chars: 2, role: "write", ...one({ rows: 1, cols: 6 }) },
  ];
  // a figure is its grids or its own name and scale, whichever is wider
  assert.equal(figureSize(figures[0], 103, 1, m).width, 103 + m.figPadX);
  assert.equal(figureSize(figures[0], 40, 1, m).width, m.heads.b + m.figPadX);
  const room = { width: 1868, height: 709 };
  const layout = layoutStage(figures, room, m, { chars: 2, fontPx: 24, maxCell: 160, fontRatio: 0.5, tagged: true, perFigure: true });
  assert.equal(layout.fits, true);
  assert.deepEqual(cutWithRoom(layout, figures, m), []);
  const b = layout.columns.find((c) => c.names.includes("b"));
  assert.ok(b.minWidth >= m.captions.b, `b's column: ${b.minWidth} px for a ${m.captions.b} px caption`);
  assert.ok(layout.width <= room.width);
  // the layout's width is the width the page draws
  const byName = Object.fromEntries(figures.map((f) => [f.name, f]));
  const drawn = layout.columns.reduce((s, c) => s + drawnWidth(c, layout, byName, m), 0) + (layout.columns.length - 1) * m.colGap;
  assert.ok(Math.abs(layout.width - drawn) < 1, `layout ${layout.width} px, drawn ${drawn} px`);
});

test("layoutStage: without each figure's own name width (heads), a figure is no narrower than minFigW", () => {
  const m = { figPadX: 12, figPadY: 10, captionH: 22, labelH: 16, gap: 3, sliceGapX: 10, sliceGapY: 4, colGap: 16, rowGap: 8, minFigW: 40 };
  assert.equal(figureSize({ name: "b", slices: 1, rows: 1, cols: 1 }, 20, 1, m).width, 40 + 12);
  assert.equal(figureSize({ name: "b", slices: 1, rows: 1, cols: 1 }, 20, 1, { ...m, heads: { b: 30 } }).width, 30 + 12);
});
