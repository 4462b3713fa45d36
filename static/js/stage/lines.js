// Lines from what a step reads to what it writes, drawn over the stage (issue 10): from
// each read box to each written box it is a factor of (not from a tensor to its own
// gradient: xp's window feeds dw, not dxp). Light, under the numbers' contrast, drawn
// after the frame from the cells' own rectangles, so the stage's modules know nothing
// of them. Off while playing fast, when a box's cells are small, with many boxes, or on
// a phone (main.js: the stacked stage would have them cross the figures between).

const SVG = "http://www.w3.org/2000/svg";
const MAX_LINES = 6;
const MIN_CELL = 16; // px: smaller cells are a dense stage, where lines clutter

/** A step's boxes merged per tensor: [{tensor, idx}] (a window over 3 channels is one box). */
function byTensor(boxes) {
  const merged = new Map();
  for (const b of boxes) {
    const m = merged.get(b.tensor);
    if (m) m.idx.push(...b.idx);
    else merged.set(b.tensor, { tensor: b.tensor, idx: Array.from(b.idx) });
  }
  return [...merged.values()];
}

/**
 * The pairs [read box, write box] a step's lines join (its boxes merged per tensor),
 * from the header's drawing facts alone: a written tensor is fed by every box its step
 * reads, except that the gradient of a tensor T (gradient_of) is fed by the gradients
 * read and by the other factors of T's product (not by T itself, and by none when T is
 * added to a sum: db is fed by dz alone).
 */
export function linePairs(model, ev) {
  const pairs = [];
  const reads = byTensor(ev.reads);
  for (const w of byTensor(ev.writes)) {
    const meta = model.tensors[w.tensor];
    const of = meta && meta.gradientOf;
    const added = Boolean(of && model.tensors[of] && model.tensors[of].added);
    for (const r of reads) {
      if (r.tensor === w.tensor || !r.idx.length || !w.idx.length) continue;
      const gradient = Boolean(model.tensors[r.tensor] && model.tensors[r.tensor].gradientOf);
      if (of && !gradient && (r.tensor === of || added)) continue;
      pairs.push([r, w]);
    }
  }
  return pairs;
}

const centre = (r) => ({ x: (r.left + r.right) / 2, y: (r.top + r.bottom) / 2 });
const nearest = (r, p) => ({ x: Math.min(r.right, Math.max(r.left, p.x)), y: Math.min(r.bottom, Math.max(r.top, p.y)) });

export class StageLines {
  /** stage: the stage element; cellOf(tensor, flat): its cell element (the Stage's). */
  constructor(stage, cellOf) {
    this.stage = stage;
    this.cellOf = cellOf;
    this.svg = document.createElementNS(SVG, "svg");
    this.svg.classList.add("stage-lines");
    this.svg.setAttribute("aria-hidden", "true");
    this.queued = false;
    this.args = null;
    // a column or the stage scrolled: the boxes moved
    stage.addEventListener("scroll", () => this.args && this._queue(), { capture: true, passive: true });
  }

  /** Draw the lines of step `step` of `model` after this frame (none when `on` is false). */
  draw(model, step, on) {
    this.args = on && model ? { model, step } : null;
    this._queue();
  }

  _queue() {
    if (this.queued) return;
    this.queued = true;
    requestAnimationFrame(() => {
      this.queued = false;
      this._draw();
    });
  }

  _draw() {
    if (!this.svg.isConnected) this.stage.append(this.svg);
    const a = this.args;
    const ev = a && a.model.compiled[a.step];
    const pairs = ev ? linePairs(a.model, ev) : [];
    if (!pairs.length || pairs.length > MAX_LINES) return this.svg.replaceChildren();
    const origin = this.stage.getBoundingClientRect();
    const dx = this.stage.scrollLeft - origin.left - this.stage.clientLeft;
    const dy = this.stage.scrollTop - origin.top - this.stage.clientTop;
    const visible = { left: origin.left, right: origin.right, top: origin.top, bottom: origin.bottom };
    const rects = new Map();
    const boxRect = (box) => {
      if (rects.has(box)) return rects.get(box);
      let r = null;
      for (const flat of box.idx) {
        const c = this.cellOf(box.tensor, flat);
        const b = c && c.getBoundingClientRect();
        if (!b || !b.width) continue;
        if (b.width < MIN_CELL) return rects.set(box, null), null;
        r = r ? { left: Math.min(r.left, b.left), top: Math.min(r.top, b.top), right: Math.max(r.right, b.right), bottom: Math.max(r.bottom, b.bottom) } : { left: b.left, top: b.top, right: b.right, bottom: b.bottom };
      }
      // a box scrolled out of its column's view has no line
      if (r && (r.bottom < visible.top || r.top > visible.bottom || r.right < visible.left || r.left > visible.right)) r = null;
      rects.set(box, r);
      return r;
    };
    const lines = [];
    for (const [r, w] of pairs) {
      const from = boxRect(r);
      const to = boxRect(w);
      if (!from || !to) continue;
      // from the read box's edge nearest the written box to the written box's edge
      // nearest the read box: the lines cross the space between, not the numbers
      const a = nearest(from, centre(to));
      const b = nearest(to, centre(from));
      const line = document.createElementNS(SVG, "line");
      line.setAttribute("x1", String(a.x + dx));
      line.setAttribute("y1", String(a.y + dy));
      line.setAttribute("x2", String(b.x + dx));
      line.setAttribute("y2", String(b.y + dy));
      line.dataset.from = r.tensor;
      line.dataset.to = w.tensor;
      lines.push(line);
    }
    this.svg.setAttribute("width", String(this.stage.scrollWidth));
    this.svg.setAttribute("height", String(this.stage.scrollHeight));
    this.svg.replaceChildren(...lines);
  }
}
