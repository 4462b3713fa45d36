// Where each figure of the stage goes and at what cell size: a pure function of the
// figures the phase shows (their slices and grids, their role in the phase's data
// flow), the stage's room and the style sheet's fixed sizes. No DOM: node tests call it.
//
// A figure is drawn as its slices (one rows×cols grid each) in lines of `perLine`
// slices; the stage is a row of columns, each a stack of figures sharing one perLine.
// Arrangements tried, by the data flow of the phase:
//   pairs  — each read tensor over the tensor written at the same shape (xp over dxp,
//            w over dw), then the other written tensors;
//   flow   — every figure its own column: what is read, then what is written;
//   split  — one column of what is read beside one column of what is written;
//   stack  — everything in one column.
// The one with the largest cell wins. Every figure has that cell while it holds every
// figure's numbers; below it, a figure of shorter numbers shrinks further than one of
// longer numbers, each to the smallest cell that holds its own at the smallest legible
// text. When none fits even so, each column scrolls on its own (and a figure wider than
// its column sideways) and follows its part of the step: the arrangement wins whose
// columns can each show at once what one step reaches on their figures (each column at
// the slices a line that need the least width for it, no column narrower than that),
// then the least too wide, with the most columns, then the least tall.

/**
 * @typedef {{name: string, slices: number, band?: number, rows: number, cols: number, role: "read"|"write",
 *            chars?: number, minCell?: number}} Figure
 *   (band: slices a step reads together, e.g. every channel of one image: kept on one line
 *   when the stage cannot fit whole; chars: its widest number in characters, else the
 *   stage's; minCell: set by layoutStage, the smallest cell that holds its numbers)
 * @typedef {{figPadX: number, figPadY: number, captionH: number, labelH: number, gap: number,
 *            sliceGapX: number, sliceGapY: number, colGap: number, rowGap: number, minFigW: number,
 *            scrollbar?: number, captions?: Object<string, number>, heads?: Object<string, number>,
 *            flowRowGap?: number, noteCharPx?: number}} Metrics
 *   (scrollbar: the width a column's own scrollbar takes; captions: each figure's caption
 *   on one line, px, its padding included; heads: each figure's least content width, its
 *   name and colour scale (a figure is that wide or as wide as its grids, no wider: a
 *   one-cell bias beside a long-named figure is narrower than the long name); minFigW:
 *   the widest of them, a figure's least width where heads does not say; flowRowGap:
 *   between the lines of a flow that wraps, a phone's close-up; noteCharPx: a character
 *   of a close-up's caption note, px, with a margin: its font is not monospace)
 * @typedef {{names: string[], perLine: number, shrink?: boolean, minWidth?: number}} Column
 *   (shrink: narrower than its figures when the stage is too narrow, they scroll sideways;
 *   minWidth: px, no narrower than what shows one step's reach, or, in a stage that fits,
 *   than its captions where the stage has the room, or in a phone's close-up than its
 *   figure's name and crop note)
 * @typedef {{arrangement: string, room: {width: number, height: number}, cell: number, font: number,
 *            cells: Object<string, number>, columns: Column[], fits: boolean, follows: boolean,
 *            scrolls: "none"|"columns"|"page", width: number, height: number, tagged?: boolean}} StageLayout
 *   (cell: the cell every figure has when there is room for it; cells: each figure's own,
 *   never smaller than what holds its numbers; follows: it fits, or each column can show
 *   at once what one step reaches on it; scrolls: what scrolls to follow the step;
 *   tagged: the written figures' cells have room for the tags of what a step added)
 */

const ARRANGEMENTS = ["pairs", "flow", "split", "stack"];
const CHAR_EM = 0.62; // the advance of a monospace digit, with a margin
const CONTEXT_CELLS = 4; // the fewest cells across a column that scrolls sideways shows
// a close-up's figures are widened for their caption's notes (which cells of the grid
// are shown) at no less than this share of the cell size they have without
export const NOTE_CELL_SHARE = 0.8;

/** The height of a line of digits, in ems (arrange.js sets it on the stage as
 *  --digit-em: style.css raises a written cell's number by it above the tag). */
export const DIGIT_EM = 1.2;

/** The size (px) of the "what it added" tag under a cell's number at cell text `fontPx`
 *  (arrange.js sets it on the stage as --tag; style.css draws the tag at it). */
export function tagPx(fontPx) {
  return Math.max(9, Math.round(fontPx / 2));
}

/** The smallest cell (px) that holds `chars` characters at `fontPx`, and (`tagged`: a
 *  figure the phase writes) under them, without touching a digit, the tag of what a step
 *  added. */
export function minCellFor(chars, fontPx, tagged = false) {
  const wide = Math.max(1, chars) * CHAR_EM * fontPx + 6;
  return Math.ceil(tagged ? Math.max(wide, DIGIT_EM * fontPx + tagPx(fontPx) + 1) : wide);
}

/** The cell text (px) at cell size `cell`: at least fontPx, growing with the cell. */
export function fontFor(cell, chars, fontPx, fontRatio) {
  return Math.floor(Math.max(fontPx, Math.min(cell * fontRatio, (cell - 6) / (Math.max(1, chars) * CHAR_EM))));
}

/** Figure `f`'s cell when the stage's is `cell`: the stage's, or the smallest that holds
 *  its numbers if that is larger. Every figure has one cell size while there is room;
 *  when there is not, a figure of short numbers (a padded input of 0s and 1s) gets
 *  smaller cells than one of long numbers (its gradient's sums), at the same text size. */
export function cellOf(f, cell) {
  return Math.max(f.minCell ?? 0, cell);
}

/** Width and height (px) of figure `f` at cell `cell` with `perLine` slices a line: its
 *  slices, or its own name and scale (Metrics.heads) where they are wider, as the page
 *  draws it (the description takes no width of its own). */
export function figureSize(f, cell, perLine, m) {
  const k = Math.max(1, Math.min(perLine, f.slices));
  const lines = Math.ceil(f.slices / k);
  const gridW = f.cols * cell + (f.cols - 1) * m.gap;
  const gridH = f.rows * cell + (f.rows - 1) * m.gap;
  return {
    width: Math.max(m.heads?.[f.name] ?? m.minFigW, k * gridW + (k - 1) * m.sliceGapX) + m.figPadX,
    height: m.captionH + lines * (m.labelH + gridH) + (lines - 1) * m.sliceGapY + m.figPadY,
  };
}

function columnSize(figs, cell, perLine, m) {
  let width = 0;
  let height = 0;
  for (const f of figs) {
    const s = figureSize(f, cellOf(f, cell), perLine, m);
    width = Math.max(width, s.width);
    height += s.height;
  }
  return { width, height: height + Math.max(0, figs.length - 1) * m.rowGap };
}

/** The columns (lists of figures) of an arrangement. */
export function arrange(figures, arrangement) {
  const reads = figures.filter((f) => f.role === "read");
  const writes = figures.filter((f) => f.role !== "read");
  if (arrangement === "stack") return [figures];
  if (arrangement === "flow") return [...reads, ...writes].map((f) => [f]);
  if (arrangement === "split") return [reads, writes].filter((c) => c.length);
  // pairs: a written figure goes under the first read figure of the same grid and slices
  const cols = reads.map((f) => [f]);
  const rest = [];
  for (const w of writes) {
    const col = cols.find((c) => c.length === 1 && c[0].rows === w.rows && c[0].cols === w.cols && c[0].slices === w.slices);
    if (col) col.push(w);
    else rest.push(w);
  }
  return [...cols, ...rest.map((f) => [f])];
}

/**
 * Slices per line for each column at cell size `cell`: from one per line, the tallest
 * column gets one more per line while the whole is no wider than `room.width`.
 * Returns {perLine: number[], width, height}.
 */
function widen(cols, cell, room, m, start = null) {
  const perLine = start ? start.slice() : cols.map(() => 1);
  const maxPer = cols.map((c) => Math.max(...c.map((f) => f.slices)));
  const sizes = cols.map((c, i) => columnSize(c, cell, perLine[i], m));
  const total = () => sizes.reduce((s, x) => s + x.width, 0) + Math.max(0, cols.length - 1) * m.colGap;
  for (;;) {
    let tallest = -1;
    for (let i = 0; i < cols.length; i++) if (perLine[i] < maxPer[i] && (tallest < 0 || sizes[i].height > sizes[tallest].height)) tallest = i;
    if (tallest < 0) break;
    const before = sizes[tallest];
    const tallestAll = Math.max(...sizes.map((s) => s.height));
    if (before.height < tallestAll) break; // the tallest column cannot be made shorter
    perLine[tallest] += 1;
    sizes[tallest] = columnSize(cols[tallest], cell, perLine[tallest], m);
    if (total() > room.width) {
      perLine[tallest] -= 1;
      sizes[tallest] = before;
      break;
    }
  }
  return { perLine, width: total(), height: Math.max(0, ...sizes.map((s) => s.height)) };
}

function fitsIn(size, room) {
  return size.width <= room.width && size.height <= room.height;
}

/**
 * The stage's layout.
 * figures: Figure[] in the header's drawing order; room: {width, height} (px, the
 * stage's content box); metrics: Metrics; opts: {chars (widest number, characters),
 * fontPx (smallest text), maxCell, fontRatio, perFigure (false: every figure's cells
 * hold the widest number, Figure.chars aside), tagged (the figures the phase writes have
 * room under their numbers for the tag of what a step added; false: the page hides the
 * tags)}.
 * @returns {StageLayout}
 */
export function layoutStage(figures, room, metrics, { chars = 1, fontPx = 14, maxCell = 72, fontRatio = 0.4, perFigure = true, tagged = true } = {}) {
  const widest = Math.max(chars, ...figures.map((f) => f.chars ?? chars));
  figures = figures.map((f) => ({ ...f, minCell: minCellFor(perFigure ? f.chars ?? chars : widest, fontPx, tagged && f.role === "write") }));
  // the cell that holds every figure's numbers, and the smallest any figure may have
  const minCell = Math.max(minCellFor(chars, fontPx), ...figures.map((f) => f.minCell));
  const lowest = Math.min(minCell, ...figures.map((f) => f.minCell));
  const hi = Math.max(minCell, maxCell);
  const result = (arrangement, cols, cell, w) => ({
    arrangement,
    room: { width: room.width, height: room.height },
    cell,
    font: fontFor(Math.max(cell, minCell), chars, fontPx, fontRatio),
    cells: Object.fromEntries(figures.map((f) => [f.name, cellOf(f, cell)])),
    columns: cols.map((c, i) => ({ names: c.map((f) => f.name), perLine: w.perLine[i] })),
    fits: fitsIn(w, room),
    follows: fitsIn(w, room),
    scrolls: fitsIn(w, room) ? "none" : "columns",
    width: w.width,
    height: w.height,
    tagged,
  });
  if (!figures.length) return { arrangement: "stack", room, cell: minCell, font: fontPx, cells: {}, columns: [], fits: true, follows: true, scrolls: "none", width: 0, height: 0, tagged };
  let best = null;
  let fallback = null;
  for (const arrangement of ARRANGEMENTS) {
    const cols = arrange(figures, arrangement);
    const atMin = widen(cols, lowest, room, metrics);
    if (!fitsIn(atMin, room)) {
      // scrolling: every figure at its smallest legible cell, in every phase that
      // scrolls (a figure keeps its size from phase to phase, and shows the most)
      const candidate = scrolling(arrangement, cols, lowest, room, metrics);
      if (!fallback || better(candidate, fallback)) fallback = candidate;
      continue;
    }
    let lo = lowest;
    let top = hi;
    while (lo < top) {
      const mid = Math.ceil((lo + top) / 2);
      if (fitsIn(widen(cols, mid, room, metrics), room)) lo = mid;
      else top = mid - 1;
    }
    if (!best || lo > best.cell) best = result(arrangement, cols, lo, widen(cols, lo, room, metrics));
  }
  if (best) return roomForCaptions(best, figures, metrics);
  const layout = result(fallback.arrangement, fallback.cols, lowest, fallback.w);
  layout.follows = fallback.rank[0] < 2;
  layout.columns.forEach((c, i) => {
    c.shrink = fallback.shrink[i];
    // (a column's least width keeps one step's reach in view: of no use where it cannot)
    if (layout.follows && fallback.minWidth[i] !== null) c.minWidth = fallback.minWidth[i] + (metrics.scrollbar ?? 0);
  });
  return layout;
}

/**
 * Spend the width a layout that fits leaves free on its captions: a column whose
 * figures' captions (Metrics.captions) are wider than it is widened to them, the columns
 * that need the least first, while the stage has room; a caption is then cut only where
 * the stage has none.
 */
function roomForCaptions(layout, figures, m) {
  if (!m.captions) return layout;
  const byName = new Map(figures.map((f) => [f.name, f]));
  let free = layout.room.width - layout.width;
  const needs = [];
  layout.columns.forEach((c, i) => {
    const width = columnSize(c.names.map((n) => byName.get(n)), layout.cell, c.perLine, m).width;
    const need = Math.max(0, ...c.names.map((n) => m.captions[n] ?? 0)) - width;
    if (need > 0) needs.push({ i, width, need });
  });
  needs.sort((a, b) => a.need - b.need);
  for (const { i, width, need } of needs) {
    // (whole px, up to the caption's: a column short of it by a fraction of a px is
    // given one, not taken for a stage out of room)
    const give = Math.min(Math.ceil(need), Math.floor(free));
    if (give <= 0) break;
    layout.columns[i].minWidth = width + give;
    free -= give;
  }
  layout.width = layout.room.width - free;
  return layout;
}

/** How much of figure `f` (perLine `k`, the stage's cell `cell`) one step reaches at
 *  most, in px: {wide, high} (Figure.reach; without it, the whole figure). */
function reachOf(f, k, cell, m) {
  const r = f.reach ?? { rows: f.rows, cols: f.cols, slices: f.slices, span: f.slices };
  const own = cellOf(f, cell);
  const pitch = own + m.gap;
  const per = Math.min(k, f.slices);
  const gridW = f.cols * own + (f.cols - 1) * m.gap;
  const lineH = m.labelH + f.rows * own + (f.rows - 1) * m.gap;
  // (span: from the first slice a box reaches to its last; runs: each such [first, last],
  // where they fall on lines of `per`; without them, the worst placement)
  const span = Math.max(1, r.span ?? r.slices);
  let across = Math.min(span, per);
  let lines = span > 1 ? Math.min(Math.ceil(f.slices / per), Math.ceil((span - 1) / per) + 1) : 1;
  if (r.runs && r.runs.length) {
    lines = 1;
    across = 1;
    for (const [a, z] of r.runs) {
      const n = Math.floor(z / per) - Math.floor(a / per) + 1;
      lines = Math.max(lines, n);
      across = Math.max(across, n > 1 ? Math.min(per, z - a + 1) : z - a + 1);
    }
  }
  return {
    wide: (across - 1) * (gridW + m.sliceGapX) + r.cols * pitch - m.gap,
    // on one line: the window's rows under the caption and the slice's label; across
    // lines: from the window's top row on the first line to its bottom row on the last
    // (the same rows of each slice, a line's height apart)
    high: lines > 1 ? (lines - 1) * (lineH + m.sliceGapY) + r.rows * pitch - m.gap : m.captionH + m.labelH + r.rows * pitch - m.gap,
  };
}

/**
 * What column `c` needs, its figures `per` slices a line at cell `cell`, to show at once
 * what one step reaches on them: {width (its figures whole), need (the least width that
 * shows the widest reach; narrower than `width`, its figures scroll sideways), high (the
 * height that shows it: a column of several figures must hold them whole)}.
 */
function columnNeeds(c, per, cell, m, context = true) {
  const size = columnSize(c, cell, per, m);
  const reaches = c.map((f) => reachOf(f, per, cell, m));
  // (with context: no narrower than a few cells, a step's one cell alone in a sliver says little)
  const around = context ? Math.max(...c.map((f) => CONTEXT_CELLS * (cellOf(f, cell) + m.gap) - m.gap)) : 0;
  return {
    width: size.width,
    need: Math.min(size.width, Math.max(around, ...reaches.map((r) => r.wide)) + m.figPadX),
    high: c.length === 1 ? reaches[0].high : size.height,
  };
}

/**
 * Can each column show at once what one step reaches on its figures, the columns that
 * hold more than that shrunk to it (no narrower: the style sheet gets `minWidth`, their
 * figures scroll sideways), with a few cells of context around it or (when that is too
 * wide) without? Returns {follows: 0 with context, 1 without, 2 not, shrink, minWidth: per column}.
 */
function followable(cols, perLine, cell, room, m) {
  let out = null;
  for (const context of [true, false]) {
    out = followableWith(cols, perLine, cell, room, m, context);
    if (out.follows) return { ...out, follows: context ? 0 : 1 };
  }
  return { ...out, follows: 2 };
}

function followableWith(cols, perLine, cell, room, m, context) {
  const each = cols.map((c, i) => columnNeeds(c, perLine[i], cell, m, context));
  const shrink = each.map((x) => x.need < x.width - 1);
  const least = each.reduce((sum, x, i) => sum + (shrink[i] ? x.need : x.width), 0) + Math.max(0, cols.length - 1) * m.colGap;
  return {
    follows: least <= room.width + 1 && each.every((x) => x.high <= room.height),
    shrink,
    minWidth: each.map((x, i) => (shrink[i] ? Math.ceil(x.need) : null)),
  };
}

/** Per column, the slices a line that let it follow the step in the least width (of those
 *  whose height fits; if none fits, the least tall). */
function fittedPerLine(cols, cell, room, m) {
  return cols.map((c) => {
    let best = null;
    const most = Math.max(...c.map((f) => f.slices));
    for (let per = 1; per <= most; per++) {
      const x = columnNeeds(c, per, cell, m, false);
      const fits = x.high <= room.height;
      const rank = fits ? [0, Math.round(x.need), x.high] : [1, x.high, Math.round(x.need)];
      if (!best || better({ rank }, best)) best = { per, rank };
    }
    return best.per;
  });
}

/** An arrangement whose columns scroll on their own, at cell `cell`: its bands on one line,
 *  widened from one slice a line within the width, or (if that follows) each column at
 *  the slices a line that follow the step in the least width; the one that follows,
 *  least too wide. */
function scrolling(arrangement, cols, cell, room, m) {
  const bar = m.scrollbar ?? 0;
  const inner = { width: room.width - cols.length * bar, height: room.height };
  const bands = cols.map((c) => Math.max(...c.map((f) => Math.min(f.band ?? 1, f.slices))));
  let best = null;
  const sized = (per) => ({
    perLine: per,
    width: cols.reduce((x, c, i) => x + columnSize(c, cell, per[i], m).width, 0) + Math.max(0, cols.length - 1) * m.colGap,
    height: Math.max(...cols.map((c, i) => columnSize(c, cell, per[i], m).height)),
  });
  const fitted = sized(fittedPerLine(cols, cell, inner, m));
  for (const size of [sized(bands), widen(cols, cell, inner, m), fitted]) {
    const per = size.perLine;
    const over = Math.max(0, size.width - inner.width);
    const { follows, shrink, minWidth } = followable(cols, per, cell, inner, m);
    // (the least width to follow is no aim of its own: what cannot follow keeps its bands)
    if (size === fitted && follows === 2) continue;
    const candidate = { arrangement, cols, shrink, minWidth, w: { ...size, width: size.width + cols.length * bar }, rank: [follows, over, -cols.length, size.height] };
    if (!best || better(candidate, best)) best = candidate;
  }
  return best;
}

function better(a, b) {
  for (let i = 0; i < a.rank.length; i++) if (a.rank[i] !== b.rank[i]) return a.rank[i] < b.rank[i];
  return false;
}

/**
 * A phone's stage: the page scrolls, so the figures stand one under another (each its
 * own column; the style sheet stacks the columns), each with as many slices a line as
 * its width allows, at the largest cell at which every figure's band (what one step
 * reads together) fits the screen below the player, both ways.
 * room: {width (the stage's), height (the screen below the player)}; opts as layoutStage.
 * @returns {StageLayout}
 */
export function layoutPhone(figures, room, m, { chars = 1, fontPx = 10, maxCell = 40, fontRatio = 0.4, tagged = true } = {}) {
  // (one cell for every figure: with room for the tags when the phase writes any)
  const minCell = minCellFor(chars, fontPx, tagged && figures.some((f) => f.role === "write"));
  // per figure the most slices a line whose width fits (null: none), and whether its band fits the height
  const lines = (cell) =>
    figures.map((f) => {
      let k = null;
      for (let n = 1; n <= f.slices && figureSize(f, cell, n, m).width <= room.width; n++) k = n;
      const band = { ...f, slices: Math.min(f.band ?? 1, f.slices) };
      return { k, fits: k !== null && figureSize(band, cell, k, m).height <= room.height };
    });
  const ok = (cell) => lines(cell).every((x) => x.fits);
  let cell = minCell;
  if (ok(minCell)) {
    let top = Math.max(minCell, maxCell);
    while (cell < top) {
      const mid = Math.ceil((cell + top) / 2);
      if (ok(mid)) cell = mid;
      else top = mid - 1;
    }
  }
  const per = lines(cell);
  const sizes = figures.map((f, i) => figureSize(f, cell, per[i].k ?? 1, m));
  return {
    arrangement: "phone",
    room: { width: room.width, height: room.height },
    cell,
    font: fontFor(cell, chars, fontPx, fontRatio),
    columns: figures.map((f, i) => ({ names: [f.name], perLine: per[i].k ?? 1 })),
    fits: per.every((x) => x.fits),
    scrolls: "page",
    tagged,
    width: Math.max(0, ...sizes.map((s) => s.width)),
    height: sizes.reduce((h, s) => h + s.height, 0) + Math.max(0, figures.length - 1) * m.rowGap,
  };
}

/**
 * A phone's close-up of one step (model/step-crop.js): the figures it touches, each cut
 * to the slices, rows and columns around what the step reads and writes, side by side
 * where the width allows (the flow wraps them into lines, in order), at the largest cell
 * at which all of them fit the screen below the player. figures: as layoutPhone's, their
 * slices, rows and cols the crop's, and `note`, what a caption says of a crop that cuts
 * the grid (step-crop.js cropCaption): a figure is as wide as its note, Metrics.noteCharPx
 * a character, where all of them then fit at no less than NOTE_CELL_SHARE of the cell
 * they get without (else the note is cut); opts as layoutPhone.
 * @returns {StageLayout} (fits: false when they do not fit even at the smallest cell)
 */
export function layoutCloseUp(figures, room, m, { chars = 1, fontPx = 10, maxCell = 40, fontRatio = 0.4, tagged = true } = {}) {
  const minCell = minCellFor(chars, fontPx, tagged && figures.some((f) => f.role === "write"));
  const gapY = m.flowRowGap ?? m.rowGap;
  // (a figure is no narrower than its own name and scale, and where `noted` its note:
  // the flow wraps by its width)
  const least = (f, noted) => (m.heads?.[f.name] ?? 0) + (noted && f.note ? Math.ceil(f.note.length * m.noteCharPx) : 0) + m.figPadX;
  const at = (cell, noted) => {
    // each figure's most slices a line within the width, then the figures in lines as
    // the flow wraps them
    const sizeOf = (f, k) => {
      const s = figureSize(f, cell, k, m);
      return { width: Math.max(s.width, least(f, noted)), height: s.height };
    };
    const per = [];
    const sizes = [];
    for (const f of figures) {
      let k = 1;
      while (k < f.slices && sizeOf(f, k + 1).width <= room.width) k++;
      per.push(k);
      sizes.push(sizeOf(f, k));
    }
    let height = 0;
    let width = 0;
    let lineW = -1;
    let lineH = 0;
    for (const s of sizes) {
      if (lineW >= 0 && lineW + m.colGap + s.width <= room.width) {
        lineW += m.colGap + s.width;
        lineH = Math.max(lineH, s.height);
      } else {
        if (lineW >= 0) height += lineH + gapY;
        lineW = s.width;
        lineH = s.height;
      }
      width = Math.max(width, lineW);
    }
    height += lineH;
    return { per, width, height, fits: width <= room.width && height <= room.height };
  };
  let cell = minCell;
  if (at(minCell, false).fits) {
    let top = Math.max(minCell, maxCell);
    while (cell < top) {
      const mid = Math.ceil((cell + top) / 2);
      if (at(mid, false).fits) cell = mid;
      else top = mid - 1;
    }
  }
  let got = at(cell, false);
  // the figures as wide as their notes at the largest cell that still fits, down to
  // NOTE_CELL_SHARE of the cell without them (never below the legible least)
  let noted = false;
  if (got.fits && m.noteCharPx && figures.some((f) => f.note)) {
    for (let c = cell; c >= Math.max(minCell, Math.ceil(cell * NOTE_CELL_SHARE)); c--) {
      const g = at(c, true);
      if (g.fits) {
        [cell, got, noted] = [c, g, true];
        break;
      }
    }
  }
  return {
    arrangement: "close-up",
    room: { width: room.width, height: room.height },
    cell,
    font: fontFor(cell, chars, fontPx, fontRatio),
    cells: Object.fromEntries(figures.map((f) => [f.name, cell])),
    columns: figures.map((f, i) => ({ names: [f.name], perLine: got.per[i], shrink: false, ...(noted && f.note ? { minWidth: Math.min(room.width, least(f, true)) } : {}) })),
    fits: got.fits,
    follows: got.fits,
    scrolls: "page",
    tagged,
    width: got.width,
    height: got.height,
  };
}
