// The stage: one labelled figure per header tensor, one grid per slice, one element per
// cell (data-tensor, data-idx). One renderer for every view: what is highlighted comes
// only from the event's read and write boxes.
//
// build(model) makes the DOM once per trace; draw(frame) updates only what changed since
// the last draw: cells whose value or written-state changed, and the highlights of the
// previous and the current event.

import { sliceLayout, boxOutlines, gridMarks, MARK_STYLES } from "./layout.js";
import { formatValue, colorLevel, absMax, maxTextLength } from "./format.js";

export const MAX_CELLS_PER_TENSOR = 2400;

const GROUP_TITLES = { inputs: "Input and parameters", forward: "Forward", backward: "Backward" };

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

/** The names of `tensors` ({name: meta}) in the header's drawing order. */
export function orderedNames(tensors) {
  return Object.keys(tensors).sort((a, b) => tensors[a].order - tensors[b].order);
}

/** The union {lo, hi} of ranges [lo, hi] (null ones left out), or null. */
function span(ranges) {
  let u = null;
  for (const r of ranges) {
    if (!r) continue;
    u = u ? { lo: Math.min(u.lo, r.lo), hi: Math.max(u.hi, r.hi) } : { lo: r.lo, hi: r.hi };
  }
  return u;
}

/** The smallest scroll that shows [lo, hi] within [boxLo, boxHi] (its start if too long). */
function shift(lo, hi, boxLo, boxHi) {
  const margin = 8;
  if (hi - lo > boxHi - boxLo - 2 * margin) hi = lo + boxHi - boxLo - 2 * margin;
  if (lo < boxLo + margin) return lo - boxLo - margin;
  if (hi > boxHi - margin) return hi - boxHi + margin;
  return 0;
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
    this.fitCache = new Map();
    this.prefitted = new Set(); // focus keys prefit() has fitted
    this.prevReads = [];
    this.prevWrites = [];
    this.outlines = [];
    this.onPart = null; // (main.js's per-frame breakdown: called after the cells and the highlight)
    this.writes = {}; // cells written per tensor by the last draw (counted while onPart is set)
    this.revealed = 0; // slices content-visibility has revealed
  }

  /** Remove every tensor (no trace to show). */
  clear() {
    this.model = null;
    this.views = {};
    this.container.replaceChildren();
  }

  /** Build the DOM for every tensor of `model` (a TraceModel). */
  build(model) {
    this.model = model;
    this.views = {};
    this.prevReads = [];
    this.prevWrites = [];
    this.outlines = [];
    this.lastEvent = undefined;
    this.focusKey = undefined;
    this.focusNames = null;
    const frag = document.createDocumentFragment();
    const groups = {};
    for (const name of orderedNames(model.tensors)) {
      const group = model.tensors[name].group;
      if (!groups[group]) {
        groups[group] = el("section", `tensor-group group-${group}`);
        groups[group].append(el("h2", "group-title", GROUP_TITLES[group] ?? group));
        groups[group].dataset.group = group;
      }
      groups[group].append(this._buildTensor(model, name));
    }
    // while a phase is in focus, the folded figures come first in one row after this note
    frag.append(el("p", "fold-note", "Not used in this phase:"));
    for (const g of Object.keys(groups)) frag.append(groups[g]);
    frag.append(el("div", "fold-break"));
    this.container.replaceChildren(frag);
    this.container.scrollTop = 0;
    this.container.scrollLeft = 0;
    this.overflowX = this.overflowY = false;
    this.forgetFits();
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
    const bandsEl = el("div", "bands");
    for (const band of layout.bands) {
      const bandEl = el("div", "band");
      const slicesEl = el("div", "slices");
      for (const sl of band.slices) {
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
        slicesEl.append(sliceEl);
      }
      bandEl.append(slicesEl);
      bandsEl.append(bandEl);
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
    for (const name in this.views) {
      const v = this.views[name];
      // a folded figure shows only its caption: its cells catch up when it unfolds
      if (v.folded) continue;
      const values = frame.values[name];
      const counts = frame.counts ? frame.counts[name] : undefined;
      const { drawn, cells, shownValue, shownWritten, shownLevel, scale, padFlat, skipped, perSlice } = v;
      let n = 0;
      for (let k = 0; k < drawn.length; k++) {
        if (!skippedToo && skipped[(k / perSlice) | 0]) {
          k += perSlice - 1 - (k % perSlice); // the whole slice is out of view
          continue;
        }
        const flat = drawn[k];
        const val = values[flat];
        // cells the header marks zero by definition (padding, inserted zeros), written or not
        const written = counts === undefined || counts[flat] > 0 || (padFlat !== null && padFlat.has(flat)) ? 1 : 0;
        if (shownWritten[flat] === written && (shownValue[flat] === val || (!written && shownWritten[flat] === 0))) continue;
        const cell = cells[flat];
        n += 1;
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
      }
      if (n && this.onPart) this.writes[name] = n;
    }
    if (this.onPart) this.onPart("cells");
    if (frame.event !== this.lastEvent) {
      this._highlight(frame.event, flash);
      this.lastEvent = frame.event;
    }
    if (this.onPart) this.onPart("highlight");
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
    this.invalidateGeometry();
    return true;
  }

  /** Slices that content-visibility skipped are drawn again at the next draw (their
   *  shown values are remembered, so only what changed meanwhile is touched). */
  revealAll() {
    for (const name in this.views) this.views[name].skipped.fill(0);
  }

  /** The figures moved or changed size: measure them again before the next follow. */
  invalidateGeometry() {
    this.geometryDirty = true;
  }

  /** Forget the cell sizes found for each set of shown figures (the screen changed). */
  forgetFits() {
    this.fitCache.clear();
    this.prefitted.clear();
  }

  /**
   * Find the cell size for the figures that focus `names` (a Set, or null = all) shows,
   * with `fit()` (a call of fitCells, which remembers it), then put the focus, the cell
   * size and the scroll offsets back as they were, in the same task: nothing is painted
   * in between, and a later change to that focus (a phase change while playing) finds
   * its size without laying the stage out again and again. Returns false if there was
   * nothing to do (that focus is on show or was fitted already).
   */
  prefit(names, fit) {
    const key = focusKeyOf(names);
    if (!this.model || key === this.focusKey || this.prefitted.has(key)) return false;
    this.prefitted.add(key);
    const c = this.container;
    const scroll = [c.scrollTop, c.scrollLeft];
    const bands = Object.values(this.views).map((v) => [v.bandsEl, v.bandsEl.scrollLeft]);
    const back = this.focusNames ?? null;
    const follow = this.followQueued;
    this.followQueued = true; // (fitCells asks for a follow: not for these sizes)
    try {
      this.setFocus(names);
      fit();
      this.setFocus(back);
      fit();
    } finally {
      this.followQueued = follow;
    }
    [c.scrollTop, c.scrollLeft] = scroll;
    for (const [el, left] of bands) if (el.scrollLeft !== left) el.scrollLeft = left;
    return true;
  }

  /**
   * The largest cell size (px, at most maxCell) at which the figures on show fit the
   * stage without scrolling; never below the size that keeps the widest number any
   * shown tensor will hold whole at `fontPx` (the smallest text allowed), in which case
   * the stage scrolls and follows the current event. Projector mode (fontPx 24) and a
   * desktop stage that scrolls inside itself (fontPx 13) use it. on=false: back to the
   * style sheet's sizes. The size found is remembered per set of shown figures, so a
   * phase seen before costs no layout. Returns the cell size used (px) or null.
   */
  fitCells(on, { fontPx = 24, maxCell = 160, fontRatio = 0.5 } = {}) {
    const st = this.container.style;
    this.invalidateGeometry();
    this.requestFollow();
    if (!on || !this.model) {
      st.removeProperty("--cell");
      st.removeProperty("--cell-font");
      this.cellPx = null;
      return null;
    }
    const shown = Object.keys(this.views).filter((n) => !this.views[n].fig.classList.contains("off-phase"));
    const chars = Math.max(1, ...shown.map((n) => maxTextLength(this.model.valueStats[n])));
    const CHAR_EM = 0.62; // advance of a monospace digit, with a margin
    const minCell = Math.ceil(chars * CHAR_EM * fontPx + 6);
    const apply = (cell) => {
      // (an unchanged value is not set again: a new --cell restyles every cell)
      const font = Math.max(fontPx, Math.min(cell * fontRatio, (cell - 6) / (chars * CHAR_EM)));
      if (st.getPropertyValue("--cell") !== `${cell}px`) st.setProperty("--cell", `${cell}px`);
      if (st.getPropertyValue("--cell-font") !== `${Math.floor(font)}px`) st.setProperty("--cell-font", `${Math.floor(font)}px`);
    };
    const key = `${fontPx}/${maxCell}/${chars}/${shown.join(",")}`;
    const known = this.fitCache.get(key);
    if (known !== undefined) {
      apply(known);
      this.cellPx = known;
      return known;
    }
    const c = this.container;
    const fits = () => c.scrollHeight <= c.clientHeight + 1 && c.scrollWidth <= c.clientWidth + 1;
    let lo = minCell;
    let hi = Math.max(minCell, maxCell);
    // While measuring, every slice is laid out for real: a slice that content-visibility
    // skips keeps the size it last had ("auto"), which is wrong once --cell changes, and
    // made the fit too large now and then (cells of a written tensor off screen).
    c.classList.add("fitting");
    try {
      apply(lo);
      if (fits()) {
        while (lo < hi) {
          const mid = Math.ceil((lo + hi) / 2);
          apply(mid);
          if (fits()) lo = mid;
          else hi = mid - 1;
        }
        apply(lo);
      }
    } finally {
      c.classList.remove("fitting");
    }
    this.fitCache.set(key, lo);
    this.cellPx = lo;
    return lo;
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
    const st = getComputedStyle(c);
    this.overflowY = /auto|scroll/.test(st.overflowY) && c.scrollHeight > c.clientHeight + 1;
    this.overflowX = false;
    const box = c.getBoundingClientRect();
    const top0 = box.top + c.clientTop - c.scrollTop;
    for (const name in this.views) {
      const v = this.views[name];
      v.geo = null;
      v.scrollsX = false;
      const fr = v.fig.getBoundingClientRect();
      const bands = v.bandsEl.getBoundingClientRect();
      if (!fr.height || !bands.height || !v.grids.length) continue; // folded or hidden
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
    // what is worth seeing: each tensor's written cells (2), read cells (1), and its caption
    // (0.5, counted only with its cells); the first view on which the most is whole wins,
    // the one needing the least scrolling among equals
    const parts = [];
    for (const [list, worth] of [[this.prevWrites, 2], [this.prevReads, 1]]) {
      for (const { view, idx } of list) {
        const r = rows(view, idx);
        if (!r) continue;
        parts.push({ ...r, worth });
        if (view.geo) parts.push({ lo: Math.min(r.lo, view.geo.capTop), hi: Math.max(r.hi, view.geo.capBottom), worth: 0.5 });
      }
    }
    if (!parts.length) return;
    const c = this.container;
    const top = c.scrollTop;
    const height = c.clientHeight;
    const margin = 8;
    const maxTop = Math.max(0, c.scrollHeight - height);
    let best = null;
    for (const p of parts) {
      for (const want of [p.lo - margin, p.hi + margin - height]) {
        const start = Math.max(0, Math.min(maxTop, want));
        let score = 0;
        for (const q of parts) if (q.lo >= start + margin - 0.5 && q.hi <= start + height - margin + 0.5) score += q.worth;
        // already in view: no scroll needed
        const by = start - top;
        if (!best || score > best.score || (score === best.score && Math.abs(by) < Math.abs(best.by))) best = { score, by };
      }
    }
    // the scroll now, if the view already shows as much, stays
    let here = 0;
    for (const q of parts) if (q.lo >= top + margin - 0.5 && q.hi <= top + height - margin + 0.5) here += q.worth;
    if (best && best.score > here) c.scrollTop = top + best.by;
  }

  /** The span {lo, hi} of the cells `idx` of `view` along "y" (stage content) or "x"
   *  (the figure's own scrolling content), from the measured grid geometry; null if
   *  none is drawn. At most 256 cells are looked at. */
  _cellRanges(view, idx, axis) {
    const g = view.geo;
    if (!g) return null;
    const { rows, cols } = view.layout;
    const per = rows * cols;
    let lo = Infinity;
    let hi = -Infinity;
    const n = Math.min(idx.length, 256);
    for (let i = 0; i < n; i++) {
      const k = view.posOf[idx[i]];
      if (k < 0) continue;
      const s = (k / per) | 0;
      const m = k - s * per;
      const at = axis === "y" ? g.sliceTop[s] + g.gridDy + ((m / cols) | 0) * g.pitch : g.sliceLeft[s] + g.gridDx + (m % cols) * g.pitch;
      if (at < lo) lo = at;
      if (at + g.cell > hi) hi = at + g.cell;
    }
    return lo <= hi ? { lo, hi } : null;
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
        writes.push({ view: v, cells: this._cellsOf(v, w.idx), idx: w.idx });
        figs.set(v.fig, [figs.get(v.fig)?.[0] ?? false, true]);
      }
    }
    this._swapClass(this.prevReads, reads, "rd");
    this._swapClass(this.prevWrites, writes, "wr");
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
