// A step's marks on the stage: the cells it reads (class rd) and writes (wr), what each
// write added (data-delta, dead), the read window's outline, the figures reading and
// writing, the flash of the written cells. Only what differs from the previous step's
// marks is touched (each change restyles a cell).

import { boxOutlines } from "../model/tensor-layout.js";
import { formatDelta } from "../model/number-format.js";
import { el } from "./figure.js";
import { labelCell } from "./cells.js";

const FLASH = [{ transform: "scale(1.18)", boxShadow: "0 0 0 4px var(--write)" }, { transform: "scale(1)" }];

function cellsOf(view, idx) {
  const out = [];
  for (let i = 0; i < idx.length; i++) {
    const c = view.cells[idx[i]];
    if (c) out.push(c);
  }
  return out;
}

/** Move class `cls` from the cells of `before` to the cells of `after` ({cells} lists);
 *  the cells whose class changed are added to `changed`. */
function swapClass(before, after, cls, changed) {
  const now = new Set();
  for (const { cells } of after) for (const c of cells) now.add(c);
  for (const { cells } of before) {
    for (const c of cells) {
      if (!now.has(c) && c.classList.contains(cls)) {
        c.classList.remove(cls);
        changed.add(c);
      }
    }
  }
  for (const c of now) {
    if (!c.classList.contains(cls)) {
      c.classList.add(cls);
      changed.add(c);
    }
  }
}

/**
 * Each cell the step writes shows what the step added (data-delta: "+6", "−2"); a
 * write that adds exactly zero is marked dead ("+0", dimmed): a dead ReLU window, a
 * zero dz, a tap on an inserted zero. The marks of the previous step's cells go.
 */
function markChanges(before, after, changed) {
  const now = new Map();
  for (const { view, idx, delta } of after) {
    for (let i = 0; i < idx.length; i++) {
      const c = view.cells[idx[i]];
      if (c && delta && i < delta.length) now.set(c, delta[i]);
    }
  }
  for (const { cells } of before) {
    for (const c of cells) {
      if (now.has(c) || c.dataset.delta === undefined) continue;
      delete c.dataset.delta;
      c.classList.remove("dead");
      changed.add(c);
    }
  }
  for (const [c, d] of now) {
    const text = formatDelta(d);
    if (c.dataset.delta !== text) {
      c.dataset.delta = text;
      changed.add(c);
    }
    const dead = d === 0;
    if (c.classList.contains("dead") !== dead) c.classList.toggle("dead", dead);
  }
}

/** Outline `box` of `view` on each slice it covers, with the next free outline element
 *  of that slice's grid (made once, then moved); the elements used are added to `used`. */
function outline(view, box, used) {
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

/** The marks of the step on show. reads / writes: [{view, cells, idx(, delta)}] per box
 *  (stage/scroll.js follows them). */
export class StepMarks {
  constructor() {
    this.clear();
  }

  /** Forget the marks (a new trace: its cells are new). */
  clear() {
    this.reads = [];
    this.writes = [];
    this.outlines = [];
    this.flashes = []; // the running flash animations of the last step's written cells
    this.hidden = new Map(); // cell -> {view, flat}: written cells whose value a question hides
    this.picked = new Set(); // cells a student picked as the answer
    this.heat = new Set(); // cells marked with how many of a class picked them
  }

  /**
   * A question open on the step on show (Predict): with `hide`, its written cells carry
   * hidden-answer and show no value (drawn again on every frame: a repaint of the rows
   * in view must not show it); without, they show their value again (`frame`'s).
   * `picked`: [{view, flat}] the cells picked as the answer (class picked); `heat`:
   * [{view, flat, count, share}] how many of a class picked each cell (class heat,
   * data-heat the count, --heat the share).
   */
  hideAnswers(frame, hide, picked, heat = []) {
    const now = new Map();
    if (hide) {
      for (const { view, idx } of this.writes) {
        for (let i = 0; i < idx.length; i++) {
          const c = view.cells[idx[i]];
          if (c) now.set(c, { view, flat: idx[i] });
        }
      }
    }
    for (const [c, { view, flat }] of this.hidden) {
      if (now.has(c)) continue;
      c.classList.remove("hidden-answer");
      view.paint.cell(view, flat, frame); // (its shown value was forgotten: painted again)
    }
    for (const [c, { view, flat }] of now) {
      const fresh = !c.classList.contains("hidden-answer");
      if (fresh) c.classList.add("hidden-answer");
      if (!view.paint.hide(view, flat) && fresh) labelCell(c);
    }
    this.hidden = now;
    const cells = new Set();
    for (const { view, flat } of picked) if (view.cells[flat]) cells.add(view.cells[flat]);
    for (const c of this.picked) if (!cells.has(c)) c.classList.remove("picked");
    for (const c of cells) if (!c.classList.contains("picked")) c.classList.add("picked");
    this.picked = cells;
    const hot = new Set();
    for (const { view, flat, count, share } of heat) {
      const c = view.cells[flat];
      if (!c) continue;
      hot.add(c);
      c.classList.add("heat");
      c.dataset.heat = String(count);
      c.style.setProperty("--heat", share.toFixed(3));
    }
    for (const c of this.heat) {
      if (hot.has(c)) continue;
      c.classList.remove("heat");
      delete c.dataset.heat;
      c.style.removeProperty("--heat");
    }
    this.heat = hot;
  }

  /** Mark `event` (compiled, or null) on `views` ({name: view}); flash its written cells;
   *  changes: mark what each write added (false: the previous step's change marks go and
   *  no new ones come, for steps too fast to read them). */
  show(views, event, flash, changes = true) {
    const reads = [];
    const writes = [];
    const figs = new Map(); // figure -> [reading, writing]
    const slots = [];
    if (event) {
      for (const r of event.reads) {
        const v = views[r.tensor];
        if (!v) continue;
        reads.push({ view: v, cells: cellsOf(v, r.idx), idx: r.idx });
        figs.set(v.fig, [true, figs.get(v.fig)?.[1] ?? false]);
        if (r.idx.length > 1) outline(v, r.box, slots);
      }
      for (const w of event.writes) {
        const v = views[w.tensor];
        if (!v) continue;
        writes.push({ view: v, cells: cellsOf(v, w.idx), idx: w.idx, delta: w.delta });
        figs.set(v.fig, [figs.get(v.fig)?.[0] ?? false, true]);
      }
    }
    const changed = new Set(); // cells whose accessible name says something new
    swapClass(this.reads, reads, "rd", changed);
    swapClass(this.writes, writes, "wr", changed);
    markChanges(this.writes, changes ? writes : [], changed);
    for (const c of changed) labelCell(c);
    // the previous step's flashes end now: steps taken faster than a flash lasts (a held
    // key, a jump after a jump) never pile up animations that every frame must run
    for (const a of this.flashes) a.cancel();
    this.flashes = [];
    if (flash) for (const { cells } of writes) for (const c of cells) if (c.animate) this.flashes.push(c.animate(FLASH, { duration: 380, easing: "ease-out" }));
    for (const name in views) {
      const fig = views[name].fig;
      const [reading, writing] = figs.get(fig) ?? [false, false];
      if (fig.classList.contains("reading") !== reading) fig.classList.toggle("reading", reading);
      if (fig.classList.contains("writing") !== writing) fig.classList.toggle("writing", writing);
    }
    // outlines: one element per use kept in its grid, shown, moved (a transform) or
    // hidden, so that no grid is laid out again for them
    const shown = new Set(slots);
    for (const d of this.outlines) if (!shown.has(d)) d.classList.remove("box-outline");
    for (const d of slots) if (!d.classList.contains("box-outline")) d.classList.add("box-outline");
    this.reads = reads;
    this.writes = writes;
    this.outlines = slots;
  }
}
