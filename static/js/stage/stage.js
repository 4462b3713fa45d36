// The stage: one labelled figure per header tensor, one grid per slice, one element per
// cell (data-tensor, data-idx). One renderer for every view: what is highlighted comes
// only from the event's read and write boxes. This module keeps the stage's state and
// says when each part runs; the parts are
//   stage/figure.js  building a tensor's figure (once per trace),
//   stage/arrange.js putting the figures where the stage layout says,
//   stage/cells.js   painting a step's values into the cells (paintCell: the one place a
//                    cell's value, colour and written-state are set),
//   stage/marks.js   the step's marks (rd, wr, data-delta, outlines),
//   stage/measure.js what is read from the DOM (metrics, room, geometry, what is in view),
//   stage/scroll.js  scrolling to the step.
//
// build(model) makes the DOM once per trace; draw(frame) updates only what changed since
// the last draw: cells in view whose value or written-state changed, and the marks of
// the previous and the current event.

import { orderedNames } from "../model/tensor-layout.js";
import { el, buildFigure } from "./figure.js";
import { placeFigures } from "./arrange.js";
import { paintAll, paintRow, paintWritten } from "./cells.js";
import { StepMarks } from "./marks.js";
import { measureMetrics, roomOf, measureGeometry, markInView } from "./measure.js";
import { scrollToStep } from "./scroll.js";
import { cropFigures } from "./close-up.js";
import { cropKey } from "../model/step-crop.js";

/** The key of a focus: the sorted names of a Set, "" for null (every figure on show). */
function focusKeyOf(names) {
  return names ? [...names].sort().join(",") : "";
}

// How far (px) outside what shows it a row of cells still counts as in view and is painted:
// more than the compositor scrolls a frame before the page hears of it (a fling, a wheel)
const VIEW_MARGIN = 240;

export class Stage {
  constructor(container) {
    this.container = container;
    this.model = null;
    this.views = {};
    this.marks = new StepMarks();
    this.where = { scrollers: [], insets: new Map(), overflowX: false, overflowY: false }; // what scrolls (measured)
    this.geometryDirty = true;
    this.followQueued = false;
    this.followTimes = [];
    this.lastStep = undefined; // the step of the last frame drawn
    this.onPart = null; // (io/debug.js's per-frame breakdown: called after the cells and the highlight)
    this.writes = {}; // cells written per tensor by the last draw (counted while onPart is set)
    this.revealed = 0; // rows of cells painted on coming into view
    this.viewDirty = true; // what is in view may have changed since it was read
    this.paintHidden = false; // the next draw paints every cell, in view or not
    // the line of the folded figures' names (kept: the flow's room is below it) and the flow
    this.folded = el("div", "folded");
    this.folded.append(el("span", "fold-note", "Not used in this phase:"));
    this.flow = el("div", "flow");
    this.rest = el("div", "flow-rest"); // ("All tensors": the figures the phase does not use)
    this.columns = [];
    container.replaceChildren(this.folded, this.flow, this.rest);
    // a scroll (the stage's, a column's, a figure's, the page's) or a change of size can
    // bring cells into view: they are painted before the frame is (scroll events and
    // resize observations come before the page is painted)
    window.addEventListener("scroll", (e) => (e.target === document || container.contains(e.target)) && this.reveal(), { capture: true, passive: true });
    new ResizeObserver(() => this.reveal()).observe(container);
  }

  /** Remove every tensor (no trace to show). */
  clear() {
    this.model = null;
    this.views = {};
    this.frame = null;
    this.folded.replaceChildren(this.folded.firstChild);
    this.flow.replaceChildren();
    this.rest.replaceChildren();
    this.columns = [];
  }

  /** Build the DOM for every tensor of `model` (a TraceModel): the figures the phase
   *  does not use are hidden, their names in one line at the top; the others stand in
   *  the flow's columns (applyLayout says which). */
  build(model) {
    this.model = model;
    this.views = {};
    this.marks.clear();
    this.lastEvent = undefined;
    this.drawnStep = undefined;
    this.frame = null;
    this.viewDirty = true;
    this.focusKey = undefined;
    this.focusNames = null;
    this.layoutKey = undefined;
    this.appliedLayout = undefined;
    this.folded.replaceChildren(this.folded.firstChild);
    this.chips = {};
    const column = el("div", "flow-col");
    for (const name of orderedNames(model.tensors)) {
      this.views[name] = buildFigure(model, name);
      column.append(this.views[name].fig);
      // a folded figure stays where it stands, hidden (moving it would walk all its
      // cells); its name stands in the folded line
      const chip = el("span", "fold-chip", name);
      chip.title = this.views[name].fig.firstChild.title;
      chip.hidden = true;
      this.chips[name] = chip;
      this.folded.append(chip);
    }
    this.flow.replaceChildren(column);
    this.rest.replaceChildren();
    this.columns = [column];
    this.container.scrollTop = 0;
    this.container.scrollLeft = 0;
    this.where = { scrollers: [], insets: new Map(), overflowX: false, overflowY: false };
    // measured after the first frame is drawn (not to delay it), then the event followed
    this.invalidateGeometry();
    this.requestFollow();
  }

  /**
   * Draw `frame` = {step, event, values: {name: (size,)}, counts: {name: (size,)}}.
   * Only the rows of cells in view are painted (the others when they come into view:
   * reveal), unless revealAll asked for every cell. changes: mark what each write of
   * the step added (off while playing too fast to read it: a change mark costs each
   * frame more than its cells).
   */
  draw(frame, { flash: mayFlash = false, changes = true, asking = null } = {}) {
    if (!this.model) return;
    // a question open on this step (Predict): no flash, no change marks, no values
    const hide = Boolean(asking && asking.hide);
    if (hide) {
      mayFlash = false;
      changes = false;
    }
    // the written cells flash when one step was taken, not after a jump
    const flash = mayFlash && this.lastStep !== undefined && Math.abs(frame.step - this.lastStep) === 1;
    this.lastStep = frame.step;
    // A step a few events from the last one drawn touches only the cells those events
    // wrote: only they are looked at. After a fold, a new arrangement or a long jump,
    // every cell in view.
    const from = this.drawnStep;
    const all = this.paintHidden;
    const near = from !== undefined && !this.drawAll && !all && Math.abs(frame.step - from) <= 512;
    this.drawnStep = frame.step;
    this.frame = frame;
    this.drawAll = false;
    this.paintHidden = false;
    const counted = this.onPart ? (name, n) => (this.writes[name] = (this.writes[name] ?? 0) + n) : null;
    // (what is in view is read once the figures stand where this frame has them: the
    // rows that came into view since are painted whole)
    if (this.viewDirty) this.paintRevealed(frame, near);
    if (near) paintWritten(this.views, this.model.compiled, Math.min(from, frame.step) + 1, Math.max(from, frame.step), frame, counted);
    else {
      for (const name in this.views) {
        // a folded figure is hidden: its cells catch up when it unfolds
        if (this.views[name].folded) continue;
        const n = paintAll(this.views[name], frame, all);
        if (n && counted) counted(name, n);
      }
    }
    if (this.onPart) this.onPart("cells");
    if (frame.event !== this.lastEvent || changes !== this.changesShown) {
      this.marks.show(this.views, frame.event, flash && frame.event !== this.lastEvent, changes);
      this.lastEvent = frame.event;
      this.changesShown = changes;
    }
    const onViews = (cells) => (cells || []).map((c) => ({ ...c, view: this.views[c.tensor] })).filter((c) => c.view);
    const picked = onViews(asking && asking.picked);
    const heat = onViews(asking && asking.heat);
    if (hide || this.marks.hidden.size || picked.length || this.marks.picked.size || heat.length || this.marks.heat.size) this.marks.hideAnswers(frame, hide, picked, heat);
    // a question of the cells it reads: the step's own read marks would answer it
    if (this.container.classList.contains("asking-reads") !== Boolean(hide && asking.reads)) this.container.classList.toggle("asking-reads", Boolean(hide && asking.reads));
    if (this.onPart) this.onPart("highlight");
  }

  /** Mark the figures outside `names` (a Set; null = all in) as off-phase (the style
   *  sheet hides them; their names show in the folded line, except in projector mode).
   *  Returns true if that changed. */
  setFocus(names) {
    if (names === this.focusNames && this.focusKey !== undefined) return false; // (the same Set: every frame of a phase)
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
        this.chips[name].hidden = !off;
      }
      v.folded = off;
      folded += off;
    }
    this.container.classList.toggle("focused", folded > 0);
    this.drawAll = true; // an unfolded figure is drawn whole once (the rows in view)
    this.invalidateGeometry();
    return true;
  }

  /** The element of cell `flat` of tensor `name` (undefined: not drawn). */
  cellOf(name, flat) {
    const v = this.views[name];
    return v ? v.cells[flat] : undefined;
  }

  /** The per-frame breakdown (io/debug.js): `onPart(name)` after the cells and the
   *  highlight, with the cells written per tensor counted; null: off. */
  measureParts(onPart) {
    this.onPart = onPart;
    this.writes = {};
    if (!onPart) this.revealed = 0;
  }

  /** Start counting the rows painted on coming into view again. */
  resetRevealed() {
    this.revealed = 0;
  }

  resetFollowTimes() {
    this.followTimes = [];
  }

  /** The next draw paints every cell, in view or not (a picture of the whole stage). */
  revealAll() {
    this.paintHidden = true;
  }

  /** Something scrolled or changed size: the rows of cells that came into view are
   *  painted now with the frame last drawn (before the page is painted). */
  reveal() {
    this.viewDirty = true;
    if (this.frame) this.paintRevealed(this.frame, true);
  }

  /** Read which rows of cells are in view (stage/measure.js) and paint the stale ones
   *  that are (when `stale`; else the draw paints every row in view anyway). */
  paintRevealed(frame, stale) {
    this.viewDirty = false;
    for (const [name, inView] of markInView(this.container, this.views, VIEW_MARGIN)) this.views[name].inView = inView;
    if (!stale) return;
    for (const name in this.views) {
      const v = this.views[name];
      if (v.folded) continue;
      for (let r = 0; r < v.inView.length; r++) {
        if (!v.paint.stale[r] || !v.inView[r]) continue;
        paintRow(v, r, frame);
        this.revealed += 1;
      }
    }
  }

  /** The figures moved or changed size: measure them again before the next follow. */
  invalidateGeometry() {
    this.geometryDirty = true;
    this.viewDirty = true;
  }

  /** The style sheet's sizes the stage layout needs (stage/measure.js), or null. */
  measureMetrics() {
    return measureMetrics(this.views, this.flow, this.columns[0]);
  }

  /** The room (px) the flow has: the stage's content box below the folded line. */
  room() {
    return roomOf(this.container, this.folded);
  }

  /**
   * The stage at `size` ({width, height} px: an animation's frame less its equation; null:
   * back to its place on the page) and the room its flow has then. Out of the page's flow
   * while recording (the page behind the dialog keeps its place).
   */
  recordingRoom(size) {
    const key = size ? `${size.width}x${size.height}` : "";
    if (key !== this.recordingKey) {
      this.recordingKey = key;
      const st = this.container.style;
      this.container.classList.toggle("recording", Boolean(size));
      if (size) {
        st.setProperty("--recording-width", `${size.width}px`);
        st.setProperty("--recording-height", `${size.height}px`);
      } else {
        st.removeProperty("--recording-width");
        st.removeProperty("--recording-height");
      }
      this.invalidateGeometry();
      this.recordingRoomWas = size ? this.room() : null;
    }
    return this.recordingRoomWas;
  }

  /**
   * Put the figures where `layout` (model/stage-layout.js's layoutStage) says
   * (stage/arrange.js).
   * layout null: the style sheet's sizes, the shown figures in one column wrapping their
   * slices. Only what changed is touched.
   */
  applyLayout(layout) {
    if (!this.model) return;
    // the layout object applied last, with the same figures folded: nothing to do
    // (model/frame.js hands the same object back for every frame of a phase)
    if (layout && layout === this.appliedLayout && this.focusKey === this.appliedFocus) return;
    this.appliedLayout = layout;
    this.appliedFocus = this.focusKey;
    const names = Object.keys(this.views).filter((n) => !this.views[n].folded);
    const columns = layout ? layout.columns : [{ names: orderedNames(this.model.tensors).filter((n) => names.includes(n)), perLine: 0 }];
    const rest = layout ? layout.rest ?? [] : [];
    const crop = layout?.crop ?? null;
    const key = JSON.stringify([columns, rest, layout ? [layout.cell, layout.cells, layout.font, layout.fits, layout.room] : null, cropKey(crop)]);
    if (key === this.layoutKey) return;
    this.layoutKey = key;
    placeFigures(this, layout, columns, rest);
    cropFigures(this.container, this.views, crop);
    this.invalidateGeometry();
    this.requestFollow();
  }

  /** Scroll to the step at the start of the next frame: the new marks are drawn first,
   *  and what is read (scroll offsets, the stage's size) is already laid out. */
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

  /** Scroll (the page only under a phone's stacked stage) so that the current event's cells are in view, from the
   *  geometry measured once per layout (stage/scroll.js). */
  follow() {
    if (this.geometryDirty) {
      this.geometryDirty = false;
      this.where = measureGeometry(this.container, this.columns, this.views);
      for (const name in this.where.places) Object.assign(this.views[name], this.where.places[name]);
    }
    // (its scroll event comes a frame later: the cells it brings into view are painted
    // before this frame is)
    if (scrollToStep(this.where, this.marks.reads, this.marks.writes)) this.reveal();
  }

  /** follow() once per event, at the next frame (the page calls this when not playing fast). */
  followEvent() {
    if (this.followedEvent === this.lastEvent) return;
    this.followedEvent = this.lastEvent;
    this.requestFollow();
  }
}
