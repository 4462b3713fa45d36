// What the stage reads from the DOM, never per step: the style sheet's fixed sizes the
// stage layout needs (once per trace, mode or window), the room the flow has, and where
// each shown figure's caption and slices are (once per change of layout), from which
// stage/scroll.js computes scrolls without reading the cells' layout.

import { el } from "./figure.js";

const px = (e, prop) => parseFloat(getComputedStyle(e)[prop]) || 0;

/**
 * The style sheet's sizes (px, model/stage-layout.js's Metrics): a figure's padding, its
 * caption, a slice's label, the gaps, a column's scrollbar, each caption's whole width,
 * a character of a close-up's note. views: {name: view}; flow
 * and column: the stage's flow and its first column. null when no figure is on show.
 */
export function measureMetrics(views, flow, column) {
  const v = Object.values(views ?? {}).find((x) => !x.folded && x.slicesEls.length);
  if (!v || !v.fig.offsetParent) return null;
  const fig = v.fig;
  const cap = fig.firstChild;
  const label = v.slicesEls[0].firstChild;
  let nameW = 0;
  // (a figure is never narrower than its name and its colour scale, ±n: a folded figure
  // is hidden, so both widths are counted from a shown one's, per character: monospace)
  const perCharOf = (e) => (e && e.offsetParent && e.textContent.length ? e.offsetWidth / e.textContent.length : 0);
  const shown = fig.querySelector(".tscale");
  const perChar = perCharOf(shown);
  const perNameChar = perCharOf(fig.querySelector(".tname"));
  const scaleGap = shown ? px(shown, "marginLeft") : 0;
  for (const x of Object.values(views)) {
    const scale = x.fig.querySelector(".tscale");
    const scaleW = scale && perChar ? Math.ceil(perChar * scale.textContent.length + scaleGap) : 0;
    nameW = Math.max(nameW, Math.ceil(perNameChar * x.fig.querySelector(".tname").textContent.length) + scaleW);
  }
  // each caption's whole width (its name, scale and description on one line): probes
  // beside the shown caption, one per figure, measured at once
  const gapX = px(cap, "columnGap");
  const probes = Object.entries(views).map(([name, x]) => {
    const p = x.fig.querySelector(".tdesc").cloneNode(true); // (what the style sheet hides stays hidden)
    p.style.cssText = "position:absolute;visibility:hidden;contain:none;flex:none;overflow:visible";
    cap.append(p);
    return [name, x, p];
  });
  const captions = {};
  const heads = {};
  const padX = px(fig, "paddingLeft") + px(fig, "paddingRight") + px(fig, "borderLeftWidth") + px(fig, "borderRightWidth");
  for (const [name, x, p] of probes) {
    const scale = x.fig.querySelector(".tscale");
    const head = perNameChar * x.fig.querySelector(".tname").textContent.length + (scale && perChar ? perChar * scale.textContent.length + scaleGap : 0);
    captions[name] = Math.ceil(padX + head + 2 * gapX + p.offsetWidth + 2);
    // (its name and scale, and the gaps that stand beside its description even where
    // that takes no width: the least width of its figure's content)
    heads[name] = Math.ceil(head + 2 * gapX + 2);
  }
  for (const [, , p] of probes) p.remove();
  // a close-up caption note's character (model/stage-layout.js layoutCloseUp): a probe of
  // a note as long as the widest a phone's crop makes, a tenth more for other digits
  const note = el("span", "tcrop", "rows 10–12 · cols 10–12 of 16×16");
  note.style.cssText = "display:block;position:absolute;visibility:hidden;contain:none;flex:none;overflow:visible";
  cap.append(note);
  const noteCharPx = (1.1 * note.offsetWidth) / note.textContent.length;
  note.remove();
  // the width of a column's own scrollbar (a column scrolls when the layout cannot fit)
  const probe = el("div", "flow-col");
  probe.style.cssText = "position:absolute;visibility:hidden;overflow-y:scroll;width:100px;height:20px";
  flow.append(probe);
  const scrollbar = probe.offsetWidth - probe.clientWidth;
  probe.remove();
  return {
    figPadX: padX,
    figPadY: px(fig, "paddingTop") + px(fig, "paddingBottom") + px(fig, "borderTopWidth") + px(fig, "borderBottomWidth"),
    captionH: cap.getBoundingClientRect().height + px(cap, "marginBottom"),
    labelH: label.offsetParent ? label.getBoundingClientRect().height + px(label, "marginBottom") : 0,
    gap: px(v.grids[0], "columnGap"),
    sliceGapX: px(v.bandsEl, "columnGap"),
    sliceGapY: px(v.bandsEl, "rowGap"),
    colGap: px(flow, "columnGap"),
    flowRowGap: px(flow, "rowGap"),
    rowGap: px(column, "rowGap"),
    minFigW: Math.ceil(nameW + 2),
    heads,
    noteCharPx,
    scrollbar,
    captions,
  };
}

/** The room {width, height} (px) the flow has: the stage `container`'s content box below
 *  the `folded` line. */
export function roomOf(container, folded) {
  const c = container;
  const foldedH = folded.offsetParent ? folded.getBoundingClientRect().height + px(c, "rowGap") : 0;
  return {
    width: Math.floor(c.clientWidth - px(c, "paddingLeft") - px(c, "paddingRight")) - 2,
    height: Math.floor(c.clientHeight - px(c, "paddingTop") - px(c, "paddingBottom") - foldedH) - 2,
  };
}

/** What sticks at the top of scroller `e`: {dock, strip} when it is the page under the
 *  docked player (style.css, phones; its height follows the step's text, so it is read
 *  when used) and over the code strip held at the bottom (or null), else {px}: a figure's
 *  caption over a scrolling column (0 where nothing sticks). */
function stickyInset(e) {
  if (e === document.scrollingElement) {
    const dock = document.querySelector(".dock");
    const code = document.getElementById("code");
    const strip = code && !code.hidden && getComputedStyle(code).position === "sticky" ? code : null;
    return dock && getComputedStyle(dock).position === "sticky" ? { dock, strip } : { px: 0 };
  }
  const cap = e.querySelector(".tensor figcaption");
  return { px: cap && getComputedStyle(cap).position === "sticky" ? cap.offsetHeight : 0 };
}

/**
 * Measure where things are: what scrolls up and down (each column of the flow on its own
 * when the stage has class col-scroll, the page for a phone's stacked stage, else the
 * stage `container`), and per shown figure of `views` its caption and each slice's grid
 * in its scroller's content coordinates (and, for a figure wider than its room, in its
 * own sideways-scrolling content): per view name, places[name] = {geo, scroller,
 * scrollsX} (the stage sets them on its views). Only figures and slice boxes are read (a slice
 * skipped by content-visibility keeps its reserved size), plus one grid and one cell per
 * figure for the cell pitch; and what a sticky element covers at each scroller's top.
 * Returns {scrollers, insets (scroller -> {px} or {dock}), overflowX, overflowY, places}.
 */
export function measureGeometry(container, columns, views) {
  const c = container;
  const scrolls = (e) => /auto|scroll/.test(getComputedStyle(e).overflowY) && e.scrollHeight > e.clientHeight + 1;
  // (a phone's stacked stage is as tall as its figures: the page scrolls to the step)
  const page = c.classList.contains("stacked") && !scrolls(c) ? document.scrollingElement : null;
  const scrollers = page ? [page] : c.classList.contains("col-scroll") ? columns.filter((col) => !col.hidden && scrolls(col)) : scrolls(c) ? [c] : [];
  let overflowX = false;
  const origin = new Map(); // scroller -> the top of its content in the viewport
  for (const e of [c, ...columns]) {
    const r = e.getBoundingClientRect();
    origin.set(e, r.top + e.clientTop - e.scrollTop);
  }
  if (page) origin.set(page, -page.scrollTop);
  const places = {};
  for (const name in views) {
    const v = views[name];
    const scroller = page ?? (scrollers.includes(v.fig.parentElement) ? v.fig.parentElement : c);
    places[name] = { geo: null, scrollsX: false, scroller };
    const top0 = origin.get(scroller);
    const fr = v.fig.getBoundingClientRect();
    const bands = v.bandsEl.getBoundingClientRect();
    if (!fr.height || !bands.height || !v.grids.length || !v.drawn.length) continue; // folded, hidden or empty (a mistake's zero-size dx)
    const cap = v.fig.firstChild.getBoundingClientRect();
    // (a close-up's first shown slice and cell: stage/close-up.js hides the others)
    const crop = v.crop ?? null;
    const k0 = crop ? crop.slices[0] : 0;
    const g0 = v.grids[k0].getBoundingClientRect();
    const s0 = v.slicesEls[k0].getBoundingClientRect();
    const cell0 = v.cells[v.drawn[crop ? k0 * v.perSlice + crop.r0 * v.layout.cols + crop.c0 : 0]].getBoundingClientRect();
    const gap = px(v.grids[k0], "columnGap");
    const left0 = bands.left + v.bandsEl.clientLeft - v.bandsEl.scrollLeft;
    const sliceTop = new Float64Array(v.slicesEls.length);
    const sliceLeft = new Float64Array(v.slicesEls.length);
    v.slicesEls.forEach((s, k) => {
      const r = s.getBoundingClientRect();
      sliceTop[k] = r.top - top0;
      sliceLeft[k] = r.left - left0;
    });
    const scrollsX = v.bandsEl.scrollWidth > v.bandsEl.clientWidth + 1;
    if (scrollsX) overflowX = true;
    places[name] = { scroller, scrollsX, geo: {
      capTop: cap.top - top0,
      capBottom: cap.bottom - top0,
      gridDy: g0.top - s0.top,
      gridDx: g0.left - s0.left,
      cell: cell0.width,
      pitch: cell0.width + gap,
      sliceTop,
      sliceLeft,
      roomX: v.bandsEl.clientWidth,
      cropR0: crop ? crop.r0 : 0,
      cropC0: crop ? crop.c0 : 0,
    } };
  }
  const insets = new Map(scrollers.map((e) => [e, stickyInset(e)]));
  return { scrollers, insets, overflowX, overflowY: scrollers.length > 0, places };
}

/**
 * Which rows of cells of the shown figures of `views` are in view: a Map from a view's
 * name to its rows (slices * rows,), 1 for row r (stage/cells.js) when it lies within `margin` px of what shows it (the
 * viewport, the stage `container`, a scrolling column, the figure's own sideways scroll).
 * Only the slices' boxes are read (layout is brought up to date first if the DOM
 * changed), and one grid's per figure, never a cell's (a slice content-visibility skips
 * would be laid out for it); a row's place follows from its slice's top: the grid stands
 * where the first shown slice's does in it, `rows` rows of `cols` cells at that grid's
 * pitch. A folded figure is left
 * out (its rows stay as they were). The margin covers what the compositor scrolls before the stage hears of it
 * (a scroll event, then Stage.reveal).
 */
export function markInView(container, views, margin) {
  const view = { left: 0, top: 0, right: window.innerWidth, bottom: window.innerHeight };
  const clipOf = new Map(); // a clipping box -> its rect
  const clip = (e, into) => {
    if (!clipOf.has(e)) clipOf.set(e, e.getBoundingClientRect());
    const r = clipOf.get(e);
    return { left: Math.max(into.left, r.left), top: Math.max(into.top, r.top), right: Math.min(into.right, r.right), bottom: Math.min(into.bottom, r.bottom) };
  };
  const stage = clip(container, view);
  const colScroll = container.classList.contains("col-scroll");
  const gap = parseFloat(getComputedStyle(container).getPropertyValue("--gap")) || 0;
  const marked = new Map();
  for (const name in views) {
    const v = views[name];
    if (v.folded) continue;
    const inView = new Uint8Array(v.inView.length);
    marked.set(name, inView);
    const box = colScroll && v.fig.parentElement !== container ? clip(v.fig.parentElement, stage) : stage;
    // (the slices' own box clips them sideways only: it is as tall as they are)
    const bands = v.bandsEl.getBoundingClientRect();
    const left = Math.max(box.left, bands.left) - margin;
    const right = Math.min(box.right, bands.right) + margin;
    const top = box.top - margin;
    const bottom = box.bottom + margin;
    const { rows, cols } = v.layout;
    // (a close-up shows rows r0..r1 of some slices, the others hidden: stage/close-up.js)
    const crop = v.crop ?? null;
    const shown = crop ? new Set(crop.slices) : null;
    const [r0, nr, nc] = crop ? [crop.r0, crop.r1 - crop.r0 + 1, crop.c1 - crop.c0 + 1] : [0, rows, cols];
    // where a grid stands in its slice and its pitch, from the first shown slice's grid
    // (at most that slice is laid out for it): a slice content-visibility skips keeps the
    // size it last had, another crop's or cell's, and a line of slices is as tall as its
    // tallest, so neither a slice's width nor its bottom says where its rows are
    const k0 = crop ? crop.slices[0] : 0;
    const g0 = v.grids[k0]?.getBoundingClientRect();
    const gridDy = g0 ? g0.top - v.slicesEls[k0].getBoundingClientRect().top : 0;
    const pitch = g0 ? (g0.width + gap) / nc : 0;
    for (let k = 0; k < v.slicesEls.length; k++) {
      let lo = rows;
      let hi = -1;
      const s = !shown || shown.has(k) ? v.slicesEls[k].getBoundingClientRect() : null;
      if (s && !(s.bottom < top || s.top > bottom || s.right < left || s.left > right)) {
        const gridTop = s.top + gridDy;
        lo = r0 + Math.max(0, Math.floor((top - gridTop) / pitch));
        hi = r0 + Math.min(nr - 1, Math.floor((bottom - gridTop) / pitch));
      }
      for (let r = 0; r < rows; r++) inView[k * rows + r] = r >= lo && r <= hi ? 1 : 0;
    }
  }
  return marked;
}

