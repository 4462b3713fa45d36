// Hovering a cell shows its links across the current phase on the stage, without moving
// the step: what the steps that write it read, what the steps that read it write
// (model/cell-links.js); every other cell dims. The hovered cell's tooltip says it in
// words (a tooltip: the layout does not move under the pointer).

import { cellLinks } from "../model/cell-links.js";
import { phaseIndexAt, cellName } from "../model/trace-model.js";

const CLASSES = ["link-from", "link-to", "link-self"];

export class Hover {
  /** stage: the stage element; cellOf(tensor, flat): its cell element (the Stage's);
   *  where(): {model, step} now, or null without a trace. */
  constructor(stage, cellOf, where) {
    this.stage = stage;
    this.cellOf = cellOf;
    this.where = where;
    this.model = null;
    this.lit = [];
    this.key = "";
    this.cell = null; // the hovered cell {tensor, flat}
    this.said = null; // the cell whose tooltip says its links, and its own tooltip
    stage.addEventListener("pointerover", (e) => {
      if (e.pointerType === "touch") return; // (a tap opens the inspector instead)
      const cell = e.target.closest(".cell");
      if (cell) this.show(cell.dataset.tensor, Number(cell.dataset.idx));
    });
    stage.addEventListener("pointerleave", () => this.clear());
  }

  /** Light up the links of cell `flat` of `tensor` in the current step's phase. */
  show(tensor, flat) {
    const here = this.where();
    if (!here) return this.clear();
    const { model, step } = here;
    const p = model.phases[phaseIndexAt(model.phases, step)];
    if (!p) return this.clear();
    const key = `${tensor}/${flat}/${p.start}`;
    if (key === this.key && model === this.model) return;
    this.clear();
    this.cell = { tensor, flat };
    this.model = model;
    this.key = key;
    const links = cellLinks(model, p.start, p.stop, tensor, flat);
    const self = this.cellOf(tensor, flat);
    if (!links.steps) {
      this._say(self, `${cellName(model.tensors[tensor], flat)}: no step of the ${p.name} phase reads or writes it`);
      return;
    }
    this.stage.classList.add("linking");
    for (const [cls, map] of [["link-from", links.from], ["link-to", links.to]]) {
      for (const [t, flats] of map) for (const f of flats) this._light(t, f, cls);
    }
    this._light(tensor, flat, "link-self");
    const count = (map) => [...map].map(([t, s]) => `${s.size} of ${t}`).join(", ");
    const parts = [];
    if (links.from.size) parts.push(`its ${p.name} steps read ${count(links.from)}`);
    if (links.to.size) parts.push(`it feeds ${count(links.to)}`);
    this._say(self, `${cellName(model.tensors[tensor], flat)} in ${p.name}: ${parts.join("; ")}`);
  }

  /** The step moved: the hovered cell's links in the new step's phase. */
  follow() {
    if (this.cell) this.show(this.cell.tensor, this.cell.flat);
  }

  clear() {
    this.cell = null;
    for (const [c, cls] of this.lit) c.classList.remove(cls);
    this.lit = [];
    this.key = "";
    this.stage.classList.remove("linking");
    if (this.said) this.said.cell.title = this.said.before;
    this.said = null;
  }

  _light(tensor, flat, cls) {
    const c = this.cellOf(tensor, flat);
    if (!c) return;
    c.classList.add(cls);
    this.lit.push([c, cls]);
  }

  /** The links in words, as `cell`'s tooltip (its own tooltip, a difference, after them). */
  _say(cell, text) {
    if (!cell) return;
    const before = cell.title;
    this.said = { cell, before };
    cell.title = before ? `${text}\n${before}` : text;
  }
}
