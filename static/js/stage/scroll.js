// Scrolling the stage to the step (the page only under a phone's stacked stage, whose
// player is docked at the top of the screen): each figure wider than its room
// sideways to its own read window or written cells; what scrolls up and down (the stage,
// or each column) to the written cells, with the read window and the captions of both
// when they fit. Positions come from stage/measure.js's geometry, not from the cells'
// layout: cells scrolled out of view need not be laid out to be scrolled to.

import { span, shift, scrollTarget, cellSpan, boxWorth, CAPTION_WORTH } from "../model/scroll-target.js";

/** The span {lo, hi} of the cells `idx` of `view` along "y" (its scroller's content) or
 *  "x" (the figure's own scrolling content); null if none is drawn. */
function cellRanges(view, idx, axis) {
  return view.geo ? cellSpan(view.geo, view.layout, view.posOf, idx, axis) : null;
}

/**
 * Scroll so that the step's cells are in view. where: {scrollers, insets, overflowX,
 * overflowY} (stage/measure.js measureGeometry); reads, writes: [{view, idx}] per box
 * (stage/marks.js).
 * Returns true if anything scrolled.
 */
export function scrollToStep(where, reads, writes) {
  if (!where.overflowX && !where.overflowY) return false;
  let moved = false;
  const marked = [...writes, ...reads];
  if (where.overflowX) {
    const seen = new Set();
    for (const { view } of marked) {
      if (!view.scrollsX || !view.geo || seen.has(view)) continue;
      seen.add(view);
      const own = marked.filter((x) => x.view === view);
      const u = span(own.map((x) => cellRanges(x.view, x.idx, "x")));
      if (!u) continue;
      const el = view.bandsEl;
      const by = shift(u.lo, u.hi, el.scrollLeft, el.scrollLeft + view.geo.roomX);
      if (by) {
        el.scrollLeft += by;
        moved = true;
      }
    }
  }
  if (!where.overflowY) return moved;
  // what is worth seeing, per scroller (model/scroll-target.js boxWorth): each tensor's
  // written cells, its read cells, and its caption (counted only with its cells)
  const parts = new Map(where.scrollers.map((e) => [e, []]));
  for (const [list, written] of [[writes, true], [reads, false]]) {
    for (const { view, idx } of list) {
      const r = cellRanges(view, idx, "y");
      const mine = parts.get(view.scroller);
      if (!r || !mine) continue;
      mine.push({ ...r, worth: boxWorth(written, idx.length) });
      mine.push({ lo: Math.min(r.lo, view.geo.capTop), hi: Math.max(r.hi, view.geo.capBottom), worth: CAPTION_WORTH });
    }
  }
  for (const [e, list] of parts) {
    // (a sticky caption covers the scroller's top: the cells are kept below it)
    const sticky = where.insets.get(e);
    const inset = !sticky ? 0 : sticky.dock ? sticky.dock.offsetHeight + 8 : sticky.px;
    // (and the code strip a phone holds at the bottom covers its foot)
    const foot = sticky && sticky.strip ? sticky.strip.offsetHeight : 0;
    const shown = inset ? list.map((r) => ({ ...r, lo: r.lo - inset, hi: r.hi - inset })) : list;
    const top = scrollTarget(shown, { top: e.scrollTop, height: e.clientHeight - inset - foot, maxTop: Math.max(0, e.scrollHeight - e.clientHeight) });
    if (top !== null && top !== e.scrollTop) {
      e.scrollTop = top;
      moved = true;
    }
  }
  return moved;
}
