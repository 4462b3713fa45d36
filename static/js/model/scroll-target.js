// Where the stage scrolls so that the step's cells are in view: pure arithmetic on the
// grid geometry stage/stage.js measures once per layout (never per step). No DOM.

// the room (px) kept between the step's cells and the edge of what scrolls to them, when
// there is room for it
const MARGIN = 8;

/**
 * What it is worth to see one box of the step wholly: a written box 2, a read box 1, and
 * a thousandth for each of its `cells` (at most 999: a box never counts for more than
 * one of its kind), so that of two written boxes that cannot both be in view the one of
 * more cells wins (dw's 27 over db's 1); a box's caption with it, CAPTION_WORTH, only
 * breaks ties between the same cells.
 */
export function boxWorth(written, cells) {
  return (written ? 2 : 1) + Math.min(cells, 999) / 1000;
}
export const CAPTION_WORTH = 0.0005;

/** The union {lo, hi} of ranges [lo, hi] (null ones left out), or null. */
export function span(ranges) {
  let u = null;
  for (const r of ranges) {
    if (!r) continue;
    u = u ? { lo: Math.min(u.lo, r.lo), hi: Math.max(u.hi, r.hi) } : { lo: r.lo, hi: r.hi };
  }
  return u;
}

/** The smallest scroll that shows [lo, hi] within [boxLo, boxHi], MARGIN px from its
 *  edges or less when that is what fits (its start if it is longer than the box). */
export function shift(lo, hi, boxLo, boxHi) {
  const margin = Math.max(0, Math.min(MARGIN, (boxHi - boxLo - (hi - lo)) / 2));
  if (hi - lo > boxHi - boxLo - 2 * margin) hi = lo + boxHi - boxLo - 2 * margin;
  if (lo < boxLo + margin) return lo - boxLo - margin;
  if (hi > boxHi - margin) return hi - boxHi + margin;
  return 0;
}

/**
 * The span {lo, hi} (px) of cells `idx` (flat indices) along "y" (the stage's content)
 * or "x" (the figure's own sideways content), from geometry `geo` = {sliceTop,
 * sliceLeft: (slices,), gridDy, gridDx, pitch, cell}, the figure's `layout` {rows, cols}
 * and `posOf` (flat index -> slice * rows * cols + row * cols + col, -1 not drawn).
 * null if none is drawn. At most 256 cells are looked at.
 */
export function cellSpan(geo, layout, posOf, idx, axis) {
  const { rows, cols } = layout;
  const per = rows * cols;
  let lo = Infinity;
  let hi = -Infinity;
  const n = Math.min(idx.length, 256);
  for (let i = 0; i < n; i++) {
    const k = posOf[idx[i]];
    if (k < 0) continue;
    const s = (k / per) | 0;
    const m = k - s * per;
    // (a close-up's grid starts at its crop's corner: stage/close-up.js)
    const at = axis === "y" ? geo.sliceTop[s] + geo.gridDy + (((m / cols) | 0) - (geo.cropR0 ?? 0)) * geo.pitch : geo.sliceLeft[s] + geo.gridDx + ((m % cols) - (geo.cropC0 ?? 0)) * geo.pitch;
    if (at < lo) lo = at;
    if (at + geo.cell > hi) hi = at + geo.cell;
  }
  return lo <= hi ? { lo, hi } : null;
}

/**
 * The scroll offset that shows the most of `parts` ([{lo, hi, worth}], px in the
 * scrolled content): of the offsets that put some part's start or end at an edge, the
 * one whose wholly visible parts are worth the most, the nearest among equals; null to
 * stay where it is (`top`), when that shows as much.
 * view: {top, height, maxTop}.
 */
export function scrollTarget(parts, { top, height, maxTop }) {
  if (!parts.length) return null;
  const atMargin = bestStart(parts, { top, height, maxTop }, MARGIN);
  // (what shows more parts only without the margin: flush with the edges)
  const flush = bestStart(parts, { top, height, maxTop }, 0);
  const best = flush.score > atMargin.score ? flush : atMargin;
  return best.score > best.worthAt(top) ? best.start : null;
}

/** Of the offsets that put some part's start or end `margin` px from an edge, the one
 *  whose parts wholly visible `margin` px from the edges are worth the most, the nearest
 *  among equals: {start, score, worthAt (offset -> worth)}. */
function bestStart(parts, { top, height, maxTop }, margin) {
  // (at either end of the content there is nothing more to scroll to: no margin needed)
  const worthAt = (start) => {
    const above = start <= 0 ? 0 : margin;
    const below = start >= maxTop ? 0 : margin;
    let score = 0;
    for (const q of parts) if (q.lo >= start + above - 0.5 && q.hi <= start + height - below + 0.5) score += q.worth;
    return score;
  };
  let best = null;
  for (const p of parts) {
    for (const want of [p.lo - margin, p.hi + margin - height]) {
      const start = Math.max(0, Math.min(maxTop, want));
      const score = worthAt(start);
      const by = start - top;
      if (!best || score > best.score || (score === best.score && Math.abs(by) < Math.abs(best.by))) best = { score, by, start, worthAt };
    }
  }
  return best;
}
