// The stage: one labelled figure per header tensor, one grid per slice, one element per
// cell (data-tensor, data-idx). One renderer for every view: what is highlighted comes
// only from the event's read and write boxes.
//
// build(model) makes the DOM once per trace; draw(frame) updates only what changed since
// the last draw: cells whose value or written-state changed, and the highlights of the
// previous and the current event.

import { sliceLayout, boxOutlines, gridMarks, MARK_STYLES, orderedNames, MAX_CELLS_PER_TENSOR } from "./layout.js";
import { formatValue, formatDelta, colorLevel, absMax } from "./format.js";
import { span, shift, scrollTarget, cellSpan } from "./follow.js";

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

/** The key of a focus: the sorted names of a Set, "" for null (every figure on show). */
function focusKeyOf(names) {
  return names ? [...names].sort().join(",") : "";
}

export class Stage {
  /** onReveal() is called when a slice scrolled out of view comes back (it needs a redraw). */
  constructor(container, { onReveal = () => {} } = {}) {
    this.container = container;
    this.model = null;
    this.onReveal = onReveal;
    this.overflowX = false;
    this.overflowY = false;
    this.cellPx = null;
    this.geometryDirty = true;
    this.followQueued = false;
    this.followTimes = [];
    this.prevReads = [];
    this.prevWrites = [];
    this.outlines = [];
    this.onPart = null; // (main.js's per-frame breakdown: called after the cells and the highlight)
    this.writes = {}; // cells written per tensor by the last draw (counted while onPart is set)
    this.revealed = 0; // slices content-visibility has revealed
    // the line of folded figures (kept: the flow's room is below it) and the flow
    this.folded = el("div", "folded");
    this.folded.append(el("span", "fold-note", "Not used in this phase:"));
    this.flow = el("div", "flow");
    this.rest = el("div", "flow-rest"); // ("All tensors": the figures the phase does not use)
    this.columns = [];
    container.replaceChildren(this.folded, this.flow, this.rest);
  }

  /** Remove every tensor (no trace to show). */
  clear() {
    this.model = null;
    this.views = {};
    this.folded.replaceChildren(this.folded.firstChild);
    this.flow.replaceChildren();
    this.rest.replaceChildren();
    this.columns = [];
  }

  /** Build the DOM for every tensor of `model` (a TraceModel): the figures the phase
   *  does not use fold into one line at the top, the others stand in the flow's columns
   *  (applyLayout says which). */
  build(model) {
    this.model = model;
    this.views = {};
    this.prevReads = [];
    this.prevWrites = [];
    this.outlines = [];
    this.lastEvent = undefined;
    this.drawnStep = undefined;
    this.focusKey = undefined;
    this.focusNames = null;
    this.layoutKey = undefined;
    this.folded.replaceChildren(this.folded.firstChild);
    const column = el("div", "flow-col");
    for (const name of orderedNames(model.tensors)) column.append(this._buildTensor(model, name));
    this.flow.replaceChildren(column);
    this.rest.replaceChildren();
    this.columns = [column];
    this.container.scrollTop = 0;
    this.container.scrollLeft = 0;
    this.overflowX = this.overflowY = false;
    // measured after the first frame is drawn (not to delay it), then the event followed
    this.invalidateGeometry();
    this.requestFollow();
  }

  _buildTensor(model, name) {
    const meta = model.tensors[name];
    const layout = sliceLayout(meta, MAX_CELLS_PER_TENSOR);
    // the header's marks: padding and inserted zeros hatched, cells no window reads
    // dimmed; "fixed" cells are zero by definition, never written, shown as 0 from the
    // start (a padded gradient's padding does receive gradient: it is not fixed)
    const marks = gridMarks(meta, layout);
    // every cell is made showing what it shows before the first event (step -1): an input
    // its value, a written tensor's fixed zeros 0, its other cells empty; so a figure
    // that unfolds for the first time has only the cells written since to draw
    const input = !model.writtenNames.includes(name);
    const scale = absMax(meta.data);
    const shownValue = new Float64Array(meta.size).fill(NaN);
    const shownWritten = new Int8Array(meta.size).fill(-1);
    const shownLevel = new Int8Array(meta.size).fill(-128); // the colour level each cell shows (-128: none yet)
    const fig = el("figure", "tensor");
    fig.dataset.tensor = name;
    fig.dataset.role = meta.role;
    const cap = el("figcaption");
    cap.append(el("span", "tname", name));
    const tdesc = el("span", "tdesc", meta.title);
    tdesc.append(el("span", "tdesc-shape", `${meta.title ? " · " : ""}(${meta.shape.join(", ")}) · ${meta.axes.join(",")}`));
    cap.append(tdesc);
    const shape = `${name} (${meta.shape.join(", ")}) · ${meta.axes.join(",")}`;
    cap.title = meta.detail ? `${shape}: ${meta.detail}` : shape;
    fig.append(cap);
    const cells = new Array(meta.size);
    const grids = [];
    const slicesEls = [];
    // every slice in one grid: the stage's layout says how many go on a line
    const bandsEl = el("div", "bands");
    for (const sl of layout.slices) {
      const sliceEl = el("div", "slice");
      // content-visibility: auto lets the browser skip slices out of view; draw() skips
      // them too and catches up when they come back
      sliceEl.style.setProperty("--rows", layout.rows);
      sliceEl.style.setProperty("--cols", layout.cols);
      const sliceIndex = slicesEls.length;
      slicesEls.push(sliceEl);
      sliceEl.addEventListener("contentvisibilityautostatechange", (e) => {
        const view = this.views[name];
        if (!view) return;
        view.skipped[sliceIndex] = e.skipped ? 1 : 0;
        if (!e.skipped) {
          this.revealed += 1;
          this.drawAll = true; // (its cells were not drawn while out of view)
          this.onReveal();
        }
      });
      const label = el("div", sl.shortLabel ? "slice-label" : "slice-label same-as-caption");
      // (projector mode hides the repeated tensor name: the caption says it)
      label.append(el("span", "slice-name", sl.shortLabel ? `${name} · ` : name), sl.shortLabel);
      sliceEl.append(label);
      const grid = el("div", "grid");
      grid.style.gridTemplateColumns = `repeat(${layout.cols}, var(--cell))`;
      for (let k = 0; k < sl.cells.length; k++) {
        const flat = sl.cells[k];
        const cell = el("div", "cell");
        cell.dataset.tensor = name;
        cell.dataset.idx = String(flat);
        const style = marks ? MARK_STYLES[marks[k]] : undefined;
        if (style) cell.classList.add(style.cls);
        const fixed = Boolean(style && style.fixed);
        if (fixed) cell.classList.add("fixed-zero");
        const val = input ? meta.data[flat] : 0;
        const level = input ? colorLevel(val, scale) : 0;
        cell.dataset.c = String(level);
        if (!input && !fixed) cell.classList.add("empty");
        cell.append(document.createTextNode(input || fixed ? formatValue(val) : ""));
        shownValue[flat] = val;
        shownWritten[flat] = input || fixed ? 1 : 0;
        shownLevel[flat] = level;
        cells[flat] = cell;
        grid.append(cell);
      }
      grids.push(grid);
      sliceEl.append(grid);
      bandsEl.append(sliceEl);
    }
    fig.append(bandsEl);
    if (layout.drawnCells < layout.totalCells) {
      fig.append(el("p", "note", `Showing ${layout.slices.length} slices (${layout.drawnCells} of ${layout.totalCells} cells); the rest are in the exported trace.`));
    }
    const drawn = new Int32Array(layout.slices.length * layout.rows * layout.cols);
    layout.slices.forEach((sl, k) => drawn.set(sl.cells, k * sl.cells.length));
    const skipped = new Uint8Array(layout.slices.length);
    // where each drawn cell sits: slice * (rows * cols) + row * cols + col (-1: not drawn)
    const posOf = new Int32Array(meta.size).fill(-1);
    for (let k = 0; k < drawn.length; k++) posOf[drawn[k]] = k;
    let padFlat = null;
    if (marks && marks.some((m) => MARK_STYLES[m]?.fixed)) {
      padFlat = new Set();
      for (const sl of layout.slices) for (let k = 0; k < sl.cells.length; k++) if (MARK_STYLES[marks[k]]?.fixed) padFlat.add(sl.cells[k]);
    }
    this.views[name] = {
      meta, layout, fig, bandsEl, cells, grids, slicesEls, drawn, posOf, padFlat, skipped, perSlice: layout.rows * layout.cols, scrollsX: false,
      geo: null,
      scale,
      shownValue,
      shownWritten,
      shownLevel,
      outlineSlots: [], // per slice: the outline elements made in its grid
      folded: false,
    };
    return fig;
  }

  /**
   * Draw `frame` = {step, event, values: {name: (size,)}, counts: {name: (size,)}}.
   * Cells of written tensors that no event has written yet are drawn empty. Slices
   * content-visibility skips are left as they are (drawn when they come back into
   * view), unless skippedToo.
   */
  draw(frame, { flash = false, skippedToo = false } = {}) {
    if (!this.model) return;
    // A step a few events from the last one drawn touches only the cells those events
    // wrote: only they are looked at. After a fold, a reveal or a long jump, every cell.
    const from = this.drawnStep;
    const near = from !== undefined && !this.drawAll && Math.abs(frame.step - from) <= 512 && skippedToo === this.drawnSkippedToo;
    this.drawnStep = frame.step;
    this.drawnSkippedToo = skippedToo;
    this.drawAll = false;
    if (near) this._drawChanged(frame, Math.min(from, frame.step) + 1, Math.max(from, frame.step), skippedToo);
    else {
      for (const name in this.views) {
        const v = this.views[name];
        // a folded figure shows only its caption: its cells catch up when it unfolds
        if (v.folded) continue;
        const { drawn, skipped, perSlice } = v;
        let n = 0;
        for (let k = 0; k < drawn.length; k++) {
          if (!skippedToo && skipped[(k / perSlice) | 0]) {
            k += perSlice - 1 - (k % perSlice); // the whole slice is out of view
            continue;
          }
          n += this._drawCell(v, drawn[k], frame);
        }
        if (n && this.onPart) this.writes[name] = n;
      }
    }
    if (this.onPart) this.onPart("cells");
    if (frame.event !== this.lastEvent) {
      this._highlight(frame.event, flash);
      this.lastEvent = frame.event;
    }
    if (this.onPart) this.onPart("highlight");
  }

  /** Draw the cells that events lo..hi (inclusive) write, where drawn and in view. */
  _drawChanged(frame, lo, hi, skippedToo) {
    const compiled = this.model.compiled;
    for (let e = Math.max(0, lo); e <= hi && e < compiled.length; e++) {
      for (const w of compiled[e].writes) {
        const v = this.views[w.tensor];
        if (!v || v.folded) continue;
        let n = 0;
        for (let i = 0; i < w.idx.length; i++) {
          const k = v.posOf[w.idx[i]];
          if (k < 0 || (!skippedToo && v.skipped[(k / v.perSlice) | 0])) continue;
          n += this._drawCell(v, w.idx[i], frame);
        }
        if (n && this.onPart) this.writes[w.tensor] = (this.writes[w.tensor] ?? 0) + n;
      }
    }
  }

  /** Make cell `flat` of view `v` show its value in `frame`; returns 1 if it changed. */
  _drawCell(v, flat, frame) {
    const { cells, shownValue, shownWritten, shownLevel, scale, padFlat } = v;
    const val = frame.values[v.meta.name][flat];
    const counts = frame.counts ? frame.counts[v.meta.name] : undefined;
    // cells the header marks zero by definition (padding, inserted zeros), written or not
    const written = counts === undefined || counts[flat] > 0 || (padFlat !== null && padFlat.has(flat)) ? 1 : 0;
    if (shownWritten[flat] === written && (shownValue[flat] === val || (!written && shownWritten[flat] === 0))) return 0;
    const cell = cells[flat];
    // only what differs from what the cell shows is written (each write restyles it)
    const wasWritten = shownWritten[flat];
    const level = written ? colorLevel(val, scale) : 0;
    if (written) {
      if (shownValue[flat] !== val || wasWritten !== 1) cell.firstChild.nodeValue = formatValue(val);
    } else if (wasWritten !== 0) cell.firstChild.nodeValue = "";
    if (shownLevel[flat] !== level) {
      cell.dataset.c = String(level);
      shownLevel[flat] = level;
    }
    if (written && wasWritten === 0) cell.classList.remove("empty");
    else if (!written && wasWritten !== 0) cell.classList.add("empty");
    shownValue[flat] = val;
    shownWritten[flat] = written;
    return 1;
  }

  /** Mark the figures outside `names` (a Set; null = all in) as off-phase (the style
   *  sheet folds them to their caption, or hides them in projector mode). Returns true
   *  if that changed. */
  setFocus(names) {
    const key = focusKeyOf(names);
    if (key === this.focusKey) return false;
    this.focusKey = key;
    this.focusNames = names;
    let folded = 0;
    for (const name in this.views) {
      const off = Boolean(names) && !names.has(name);
      const v = this.views[name];
      if (v.folded !== off) {
        v.fig.classList.toggle("off-phase", off);
        // folded slices report nothing reliable about being skipped: an unfolded figure
        // is drawn whole once (the figures that stay keep what their slices reported)
        if (!off) v.skipped.fill(0);
      }
      v.folded = off;
      folded += off;
    }
    this.container.classList.toggle("focused", folded > 0);
    this.drawAll = true; // an unfolded figure is drawn whole once
    this.invalidateGeometry();
    return true;
  }

  /** Slices that content-visibility skipped are drawn again at the next draw (their
   *  shown values are remembered, so only what changed meanwhile is touched). */
  revealAll() {
    for (const name in this.views) this.views[name].skipped.fill(0);
    this.drawAll = true;
  }

  /** The figures moved or changed size: measure them again before the next follow. */
  invalidateGeometry() {
    this.geometryDirty = true;
  }

  /**
   * The style sheet's fixed sizes the stage layout needs (px), read from the DOM once
   * per trace and per change of mode or window (never per step): a figure's padding,
   * its caption, a slice's label, the gaps. Returns null when no figure is on show.
   */
  measureMetrics() {
    const v = Object.values(this.views ?? {}).find((x) => !x.folded && x.slicesEls.length);
    if (!v || !v.fig.offsetParent) return null;
    const px = (e, prop) => parseFloat(getComputedStyle(e)[prop]) || 0;
    const fig = v.fig;
    const cap = fig.firstChild;
    const label = v.slicesEls[0].firstChild;
    const flowCol = this.columns[0];
    let nameW = 0;
    for (const x of Object.values(this.views)) nameW = Math.max(nameW, x.fig.querySelector(".tname").offsetWidth);
    // the width of a column's own scrollbar (a column scrolls when the layout cannot fit)
    const probe = el("div", "flow-col");
    probe.style.cssText = "position:absolute;visibility:hidden;overflow-y:scroll;width:100px;height:20px";
    this.flow.append(probe);
    const scrollbar = probe.offsetWidth - probe.clientWidth;
    probe.remove();
    return {
      figPadX: px(fig, "paddingLeft") + px(fig, "paddingRight") + px(fig, "borderLeftWidth") + px(fig, "borderRightWidth"),
      figPadY: px(fig, "paddingTop") + px(fig, "paddingBottom") + px(fig, "borderTopWidth") + px(fig, "borderBottomWidth"),
      captionH: cap.getBoundingClientRect().height + px(cap, "marginBottom"),
      labelH: label.offsetParent ? label.getBoundingClientRect().height + px(label, "marginBottom") : 0,
      gap: px(v.grids[0], "columnGap"),
      sliceGapX: px(v.bandsEl, "columnGap"),
      sliceGapY: px(v.bandsEl, "rowGap"),
      colGap: px(this.flow, "columnGap"),
      rowGap: px(flowCol, "rowGap"),
      minFigW: Math.ceil(nameW + 2),
      scrollbar,
    };
  }

  /** The room (px) the flow has: the stage's content box below the folded line. */
  room() {
    const c = this.container;
    const px = (prop) => parseFloat(getComputedStyle(c)[prop]) || 0;
    const folded = this.folded.offsetParent ? this.folded.getBoundingClientRect().height + px("rowGap") : 0;
    return {
      width: Math.floor(c.clientWidth - px("paddingLeft") - px("paddingRight")) - 2,
      height: Math.floor(c.clientHeight - px("paddingTop") - px("paddingBottom") - folded) - 2,
    };
  }

  /**
   * Put the figures where `layout` (stage-layout.js's layoutStage) says: its columns in
   * the flow, each figure's slices `perLine` a line, the cell size and its text on the
   * stage. layout null: the style sheet's sizes, the shown figures in one column
   * wrapping their slices. Only what changed is touched.
   */
  applyLayout(layout) {
    if (!this.model) return;
    const names = Object.keys(this.views).filter((n) => !this.views[n].folded);
    const columns = layout ? layout.columns : [{ names: orderedNames(this.model.tensors).filter((n) => names.includes(n)), perLine: 0 }];
    const rest = layout ? layout.rest ?? [] : [];
    const key = JSON.stringify([columns, rest, layout ? [layout.cell, layout.font, layout.fits, layout.room] : null]);
    if (key === this.layoutKey) return;
    this.layoutKey = key;
    const st = this.container.style;
    if (layout) {
      st.setProperty("--cell", `${layout.cell}px`);
      st.setProperty("--cell-font", `${layout.font}px`);
    } else {
      st.removeProperty("--cell");
      st.removeProperty("--cell-font");
    }
    this.cellPx = layout ? layout.cell : null;
    // a layout that does not fit whole: each column scrolls on its own, the stage not
    const colScroll = Boolean(layout && layout.scrolls === "columns");
    this.container.classList.toggle("col-scroll", colScroll);
    this.container.classList.toggle("stacked", Boolean(layout && layout.scrolls === "page"));
    if (colScroll) st.setProperty("--flow-height", `${layout.room.height}px`);
    else st.removeProperty("--flow-height");
    while (this.columns.length < columns.length) {
      const col = el("div", "flow-col");
      this.flow.append(col);
      this.columns.push(col);
    }
    columns.forEach((c, i) => {
      const col = this.columns[i];
      // (a column may shrink, its figures then scroll sideways, unless the layout says it
      // must show its whole width)
      const shrink = c.shrink === false ? "0" : "1";
      if (col.style.flexShrink !== shrink) col.style.flexShrink = shrink;
      c.names.forEach((n, k) => {
        const v = this.views[n];
        if (col.children[k] !== v.fig) col.insertBefore(v.fig, col.children[k] ?? null);
        const lined = c.perLine > 0;
        v.bandsEl.classList.toggle("lined", lined);
        if (lined) v.bandsEl.style.setProperty("--per-line", c.perLine);
      });
    });
    for (let i = 0; i < this.columns.length; i++) this.columns[i].hidden = i >= columns.length;
    rest.forEach((n, k) => {
      const v = this.views[n];
      v.bandsEl.classList.remove("lined");
      if (this.rest.children[k] !== v.fig) this.rest.insertBefore(v.fig, this.rest.children[k] ?? null);
    });
    for (const n in this.views) {
      const v = this.views[n];
      if (v.folded && v.fig.parentElement !== this.folded) this.folded.append(v.fig);
    }
    this.invalidateGeometry();
    this.requestFollow();
  }

  /**
   * Measure where things are, once per change of layout (never per event): whether
   * the stage scrolls inside itself, and per shown figure its caption and each slice's
   * grid, in the stage's content coordinates (and, for a figure wider than its room, in
   * its own sideways-scrolling content). Only figures and slice boxes are read (a
   * slice skipped by content-visibility keeps its reserved size), plus one grid and
   * one cell per figure for the cell pitch. follow() computes scrolls from these.
   */
  measure() {
    this.geometryDirty = false;
    const c = this.container;
    const scrolls = (e) => /auto|scroll/.test(getComputedStyle(e).overflowY) && e.scrollHeight > e.clientHeight + 1;
    // what scrolls up and down: each column of the flow on its own when the layout does
    // not fit whole (so that each shows its own part of the step), else the stage
    this.scrollers = this.container.classList.contains("col-scroll") ? this.columns.filter((col) => !col.hidden && scrolls(col)) : scrolls(c) ? [c] : [];
    this.overflowY = this.scrollers.length > 0;
    this.overflowX = false;
    const origin = new Map(); // scroller -> the top of its content in the viewport
    for (const e of [c, ...this.columns]) {
      const r = e.getBoundingClientRect();
      origin.set(e, r.top + e.clientTop - e.scrollTop);
    }
    for (const name in this.views) {
      const v = this.views[name];
      v.geo = null;
      v.scrollsX = false;
      v.scroller = this.scrollers.includes(v.fig.parentElement) ? v.fig.parentElement : c;
      const top0 = origin.get(v.scroller);
      const fr = v.fig.getBoundingClientRect();
      const bands = v.bandsEl.getBoundingClientRect();
      if (!fr.height || !bands.height || !v.grids.length || !v.drawn.length) continue; // folded, hidden or empty (a mistake's zero-size dx)
      const cap = v.fig.firstChild.getBoundingClientRect();
      const g0 = v.grids[0].getBoundingClientRect();
      const s0 = v.slicesEls[0].getBoundingClientRect();
      const cell0 = v.cells[v.drawn[0]].getBoundingClientRect();
      const gap = parseFloat(getComputedStyle(v.grids[0]).columnGap) || 0;
      const left0 = bands.left + v.bandsEl.clientLeft - v.bandsEl.scrollLeft;
      const sliceTop = new Float64Array(v.slicesEls.length);
      const sliceLeft = new Float64Array(v.slicesEls.length);
      v.slicesEls.forEach((s, k) => {
        const r = s.getBoundingClientRect();
        sliceTop[k] = r.top - top0;
        sliceLeft[k] = r.left - left0;
      });
      v.scrollsX = v.bandsEl.scrollWidth > v.bandsEl.clientWidth + 1;
      if (v.scrollsX) this.overflowX = true;
      v.geo = {
        capTop: cap.top - top0,
        capBottom: cap.bottom - top0,
        gridDy: g0.top - s0.top,
        gridDx: g0.left - s0.left,
        cell: cell0.width,
        pitch: cell0.width + gap,
        sliceTop,
        sliceLeft,
        roomX: v.bandsEl.clientWidth,
      };
    }
  }

  /** Call follow() at the start of the next frame: the new highlight is drawn first,
   *  and what follow() reads (scroll offsets, the stage's size) is already laid out. */
  requestFollow() {
    if (this.followQueued) return;
    this.followQueued = true;
    requestAnimationFrame(() => {
      this.followQueued = false;
      if (!this.model) return;
      const t0 = performance.now();
      this.follow();
      this.followTimes.push(performance.now() - t0);
      if (this.followTimes.length > 2000) this.followTimes.splice(0, 1000);
    });
  }

  /**
   * Scroll (never the page) so that the current event's cells are in view: each figure
   * wider than its room scrolls sideways to its own read window or written cells; a
   * stage that scrolls inside itself scrolls up or down to the written cells with the
   * read window and the captions of both when they fit. Positions come from measure()
   * (grid geometry), not from the cells' layout: cells scrolled out of view need not be
   * laid out to be scrolled to.
   */
  follow() {
    if (this.geometryDirty) this.measure();
    if (!this.overflowX && !this.overflowY) return;
    const rows = (v, idx) => this._cellRanges(v, idx, "y");
    if (this.overflowX) {
      const seen = new Set();
      for (const { view, idx } of [...this.prevWrites, ...this.prevReads]) {
        if (!view.scrollsX || !view.geo || seen.has(view)) continue;
        seen.add(view);
        const own = [...this.prevWrites, ...this.prevReads].filter((x) => x.view === view);
        const u = span(own.map((x) => this._cellRanges(x.view, x.idx, "x")));
        if (!u) continue;
        const el = view.bandsEl;
        const by = shift(u.lo, u.hi, el.scrollLeft, el.scrollLeft + view.geo.roomX);
        if (by) el.scrollLeft += by;
      }
    }
    if (!this.overflowY) return;
    // what is worth seeing, per scroller: each tensor's written cells (2), read cells (1),
    // and its caption (0.5, counted only with its cells)
    const parts = new Map(this.scrollers.map((e) => [e, []]));
    for (const [list, worth] of [[this.prevWrites, 2], [this.prevReads, 1]]) {
      for (const { view, idx } of list) {
        const r = rows(view, idx);
        const mine = parts.get(view.scroller);
        if (!r || !mine) continue;
        mine.push({ ...r, worth });
        mine.push({ lo: Math.min(r.lo, view.geo.capTop), hi: Math.max(r.hi, view.geo.capBottom), worth: 0.5 });
      }
    }
    for (const [e, list] of parts) {
      const top = scrollTarget(list, { top: e.scrollTop, height: e.clientHeight, maxTop: Math.max(0, e.scrollHeight - e.clientHeight) });
      if (top !== null) e.scrollTop = top;
    }
  }

  /** The span {lo, hi} of the cells `idx` of `view` along "y" (stage content) or "x"
   *  (the figure's own scrolling content), from the measured grid geometry; null if
   *  none is drawn. At most 256 cells are looked at. */
  _cellRanges(view, idx, axis) {
    return view.geo ? cellSpan(view.geo, view.layout, view.posOf, idx, axis) : null;
  }

  /** follow() once per event, at the next frame (the page calls this when not playing fast). */
  followEvent() {
    if (this.followedEvent === this.lastEvent) return;
    this.followedEvent = this.lastEvent;
    this.requestFollow();
  }

  _highlight(event, flash) {
    // only what differs from the previous event's highlight is touched (a cell or figure
    // that stays read or written keeps its class; each change restyles it)
    const reads = [];
    const writes = [];
    const figs = new Map(); // figure -> [reading, writing]
    const slots = [];
    if (event) {
      for (const r of event.reads) {
        const v = this.views[r.tensor];
        if (!v) continue;
        reads.push({ view: v, cells: this._cellsOf(v, r.idx), idx: r.idx });
        figs.set(v.fig, [true, figs.get(v.fig)?.[1] ?? false]);
        if (r.idx.length > 1) this._outline(v, r.box, slots);
      }
      for (const w of event.writes) {
        const v = this.views[w.tensor];
        if (!v) continue;
        writes.push({ view: v, cells: this._cellsOf(v, w.idx), idx: w.idx, delta: w.delta });
        figs.set(v.fig, [figs.get(v.fig)?.[0] ?? false, true]);
      }
    }
    this._swapClass(this.prevReads, reads, "rd");
    this._swapClass(this.prevWrites, writes, "wr");
    this._markChanges(this.prevWrites, writes);
    if (flash) {
      for (const { cells } of writes) {
        for (const c of cells) {
          if (c.animate) c.animate([{ transform: "scale(1.18)", boxShadow: "0 0 0 4px var(--write)" }, { transform: "scale(1)" }], { duration: 380, easing: "ease-out" });
        }
      }
    }
    for (const name in this.views) {
      const fig = this.views[name].fig;
      const [reading, writing] = figs.get(fig) ?? [false, false];
      if (fig.classList.contains("reading") !== reading) fig.classList.toggle("reading", reading);
      if (fig.classList.contains("writing") !== writing) fig.classList.toggle("writing", writing);
    }
    // outlines: one element per use kept in its grid, shown, moved (a transform) or
    // hidden, so that no grid is laid out again for them
    const shown = new Set(slots);
    for (const d of this.outlines) if (!shown.has(d)) d.classList.remove("box-outline");
    for (const d of slots) if (!d.classList.contains("box-outline")) d.classList.add("box-outline");
    this.prevReads = reads;
    this.prevWrites = writes;
    this.outlines = slots;
  }

  /**
   * Each cell the step writes shows what the step added (data-delta: "+6", "−2"); a
   * write that adds exactly zero is marked dead ("+0", dimmed): a dead ReLU window, a
   * zero dz, a tap on an inserted zero. The marks of the previous step's cells go.
   */
  _markChanges(before, after) {
    const now = new Map();
    for (const { view, idx, delta } of after) {
      for (let i = 0; i < idx.length; i++) {
        const c = view.cells[idx[i]];
        if (c && delta && i < delta.length) now.set(c, delta[i]);
      }
    }
    for (const { cells } of before) {
      for (const c of cells) {
        if (now.has(c)) continue;
        delete c.dataset.delta;
        c.classList.remove("dead");
      }
    }
    for (const [c, d] of now) {
      const text = formatDelta(d);
      if (c.dataset.delta !== text) c.dataset.delta = text;
      const dead = d === 0;
      if (c.classList.contains("dead") !== dead) c.classList.toggle("dead", dead);
    }
  }

  /** Move class `cls` from the cells of `before` to the cells of `after` ({cells} lists). */
  _swapClass(before, after, cls) {
    const now = new Set();
    for (const { cells } of after) for (const c of cells) now.add(c);
    for (const { cells } of before) for (const c of cells) if (!now.has(c)) c.classList.remove(cls);
    for (const c of now) if (!c.classList.contains(cls)) c.classList.add(cls);
  }

  _cellsOf(view, idx) {
    const out = [];
    for (let i = 0; i < idx.length; i++) {
      const c = view.cells[idx[i]];
      if (c) out.push(c);
    }
    return out;
  }

  /** Outline `box` of `view` on each slice it covers, with the next free outline
   *  element of that slice's grid (made once); the elements used are added to `used`. */
  _outline(view, box, used) {
    for (const o of boxOutlines(view.layout, box)) {
      const grid = view.grids[o.slice];
      if (!grid) continue;
      const pool = (view.outlineSlots[o.slice] ??= []);
      let d = pool.find((x) => !used.includes(x));
      if (!d) {
        d = el("div", "outline-slot");
        d.setAttribute("aria-hidden", "true");
        grid.append(d);
        pool.push(d);
        d.at = {};
      }
      const want = { r0: o.r0, c0: o.c0, nr: o.r1 - o.r0 + 1, nc: o.c1 - o.c0 + 1 };
      for (const k in want) {
        if (d.at[k] !== want[k]) {
          d.style.setProperty(`--${k}`, want[k]);
          d.at[k] = want[k];
        }
      }
      used.push(d);
    }
  }
}
