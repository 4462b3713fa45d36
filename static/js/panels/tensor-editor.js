// One tensor input's editor (x, w, b, dout: the inputs the server publishes): where its
// values come from (a generator with its parameters, or typed values), and a grid of
// cells to type or paste into. What was typed is remembered (`typed`: {shape, data}),
// so that a generator picked and then left, or a shape changed away and back, gives it
// back. A cell or paste that holds something else than numbers is refused with a
// message naming it; nothing is dropped, cut or shifted silently.

import { unravel } from "../model/trace-model.js";
import { PUBLISHED, isFill, nestFlat, flattenNested, shapeOf, parseCells, pasteCells, resizeTyped, clone } from "../model/trace-config.js";
import { parsePaste, placePaste } from "../model/paste-block.js";
import { formatValue } from "../model/number-format.js";

const MAX_EDIT_CELLS = 1024;

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

/** The text a cell shows for value `v` (a minus a keyboard types). */
const cellText = (v) => formatValue(v, 6).replace("−", "-");

function indexText(flat, shape) {
  return unravel(flat, shape).join(",");
}

export class TensorEditor {
  /**
   * input: {name, title, null} as GET /api/meta publishes it; host: the element to
   * build in; onEdit(value, {immediate}) gets the tensor's new config value;
   * onProblem(text or "") says what is wrong with the editor's cells (or that nothing is).
   */
  constructor(input, host, { onEdit, onProblem }) {
    this.name = input.name;
    this.optional = input.null;
    this.onEdit = onEdit;
    this.onProblem = onProblem;
    this.value = null; // the config's value of this tensor
    this.tensor = null; // the header's tensor {shape, axes, data} of the trace on screen
    this.typed = null; // what was last typed: {shape, data}
    this.invalid = new Map(); // flat index -> message, for cells that do not hold a number
    this.pendingDraft = null; // a draft to put back once the grid has its shape (draft())
    this.gridShape = []; // the shape the grid's cells were built for
    this.inputs = [];
    this.shownKey = "";
    this._build(input, host);
  }

  _build(input, host) {
    const name = this.name;
    const box = (this.box = el("details", "tensor-editor"));
    box.dataset.editor = name;
    const sum = el("summary");
    sum.append(el("span", "tname", name), " ", el("span", "tdesc", input.title));
    box.append(sum);
    const gen = el("div", "gen-row");
    const kind = (this.kind = el("select"));
    kind.name = `${name}_fill`;
    kind.setAttribute("aria-label", `${name}: values from`);
    if (input.null) kind.append(new Option(input.null, "default"));
    for (const [k, v] of Object.entries(PUBLISHED.fills)) kind.append(new Option(v.label, k));
    kind.append(new Option("typed values", "values"));
    const kindLabel = el("label", null, "values from");
    kindLabel.append(kind);
    gen.append(kindLabel);
    const most = Math.max(...Object.values(PUBLISHED.fills).map((f) => Object.keys(f.params).length));
    this.params = [];
    for (let i = 0; i < most; i++) {
      const lab = el("label");
      const span = el("span", "param-name", "");
      const inp = el("input");
      inp.type = "number";
      inp.step = "any";
      inp.name = `${name}_p${i}`;
      lab.append(span, inp);
      gen.append(lab);
      this.params.push({ lab, span, inp });
    }
    const seedLab = el("label", null, "seed");
    const seed = (this.seed = el("input"));
    seed.type = "number";
    seed.step = "1";
    seed.min = "0";
    seed.name = `${name}_seed`;
    seedLab.append(seed);
    gen.append(seedLab);
    box.append(gen);
    this.error = el("p", "field-error");
    this.error.dataset.errorFor = name === "x" || name === "w" ? `${name}_values` : name;
    this.error.setAttribute("role", "alert");
    this.error.hidden = true;
    this.note = el("p", "editor-note", "Type a number and press Tab for the next cell; paste numbers into a cell to fill from there (a block of rows lands as rows).");
    this.grid = el("div", "edit-grid-wrap");
    box.append(this.error, this.note, this.grid);
    const onGen = (e) => this._onGenerator(e);
    kind.addEventListener("change", onGen);
    for (const p of this.params) p.inp.addEventListener("change", onGen);
    seed.addEventListener("change", onGen);
    this.grid.addEventListener("change", (e) => this._onCell(e));
    this.grid.addEventListener("paste", (e) => this._onPaste(e));
    host.append(box);
  }

  /** Show config value `value`; `fresh`: a new setup (what it types is what was typed). */
  show(value, { fresh = false } = {}) {
    this.value = clone(value);
    if (fresh) {
      this.typed = value != null && !isFill(value) ? { shape: shapeOf(value), data: flattenNested(value) } : null;
      this.pendingDraft = null;
      this._clearRefused(); // (a new setup: its cells hold its values, whatever the shape)
    }
    const kind = isFill(value) ? value.fill : value != null ? "values" : this.optional ? "default" : "randint";
    this.kind.value = kind;
    const spec = PUBLISHED.fills[kind];
    const keys = spec ? Object.keys(spec.params) : [];
    this.params.forEach((p, i) => {
      p.lab.hidden = i >= keys.length;
      if (i >= keys.length) return;
      p.span.textContent = keys[i];
      p.inp.dataset.key = keys[i];
      const v = isFill(value) && value[keys[i]] != null ? value[keys[i]] : spec.params[keys[i]];
      if (document.activeElement !== p.inp) p.inp.value = String(v);
    });
    const seeded = Boolean(spec && spec.random);
    this.seed.parentElement.hidden = !seeded;
    if (seeded && document.activeElement !== this.seed) this.seed.value = String(isFill(value) && value.seed != null ? value.seed : 0);
    this.box.classList.toggle("is-off", Boolean(this.optional) && value == null);
  }

  /** The trace on screen has this tensor as `tensor` ({shape, axes, data}; null: none). */
  showTensor(tensor) {
    this.tensor = tensor;
    if (!tensor) {
      this.grid.replaceChildren();
      this.note.hidden = true;
      return;
    }
    const size = tensor.data.length;
    if (size > MAX_EDIT_CELLS) {
      this.grid.replaceChildren(el("p", "editor-note", `${this.name} has ${size} numbers, more than the ${MAX_EDIT_CELLS} this editor shows; paste or generate it.`));
      this.shownKey = "";
      return;
    }
    this.note.hidden = false;
    const key = `${tensor.shape.join("x")}|${tensor.axes.join(",")}`;
    if (this.shownKey !== key) this._buildGrid(tensor, key);
    for (let i = 0; i < size; i++) {
      const inp = this.inputs[i];
      // a cell being typed in, or holding what is not a number, keeps its text
      if (document.activeElement === inp || this.invalid.has(i)) continue;
      const text = cellText(tensor.data[i]);
      if (inp.value !== text) inp.value = text;
    }
    if (this.pendingDraft) this.restoreDraft(this.pendingDraft);
  }

  /** What the cells hold that is not on the stage, or null: while a cell is refused or
   *  being typed in, {shape, data (the values typed, those cells' last good ones),
   *  refused {flat index: text}} (no edit runs until every cell holds a number). */
  draft() {
    if (!this.tensor || !this.inputs.length) return null;
    const refused = Object.fromEntries(Array.from(this.invalid.keys(), (i) => [i, this.inputs[i].value]));
    const data = this._data();
    // a cell being typed in (its change not come yet) is kept as refused text is: typed again
    const at = this.inputs.indexOf(document.activeElement);
    if (at >= 0 && !(at in refused) && this.inputs[at].value !== cellText(data[at])) refused[at] = this.inputs[at].value;
    if (!Object.keys(refused).length) return null;
    return { shape: this.tensor.shape.slice(), data, refused };
  }

  /** Put back a draft(): the typed values, and each refused text, refused again with its
   *  message. Waits for the grid of the draft's shape (dropped by a new setup). */
  restoreDraft(draft) {
    const shape = this.tensor ? this.tensor.shape : null;
    const fits = shape && shape.join() === draft.shape.join() && this.inputs.length === draft.data.length && this.shownKey;
    if (!fits) {
      this.pendingDraft = draft;
      return;
    }
    this.pendingDraft = null;
    this.box.open = true; // (the refused cells in view, as they were)
    this.typed = { shape: shape.slice(), data: draft.data.map(Number) };
    draft.data.forEach((v, i) => {
      if (!(i in draft.refused)) this.inputs[i].value = cellText(Number(v));
    });
    for (const [i, text] of Object.entries(draft.refused)) {
      const inp = this.inputs[Number(i)];
      if (!inp) continue;
      inp.value = String(text);
      // refused again with its message (or, a cell that was being typed, taken as typed)
      inp.dispatchEvent(new Event("change", { bubbles: true }));
    }
  }

  _buildGrid(tensor, key) {
    this.shownKey = key;
    // refused cells of the old grid: their text goes to the same index in the new one
    // where it has it (said again), else it is dropped and its message with it
    const refused = Array.from(this.invalid.keys(), (i) => [unravel(i, this.gridShape), this.inputs[i].value]);
    this.invalid.clear();
    this.gridShape = tensor.shape.slice();
    const { shape, axes } = tensor;
    const size = tensor.data.length;
    this.inputs = new Array(size);
    const frag = document.createDocumentFragment();
    const nd = shape.length;
    const cols = shape[nd - 1];
    const per = (nd >= 2 ? shape[nd - 2] : 1) * cols;
    for (let s = 0; s < size / per; s++) {
      if (nd > 2) {
        const lead = indexText(s, shape.slice(0, nd - 2)).split(",");
        frag.append(el("div", "edit-slice-label", `${this.name} · ${lead.map((v, a) => `${axes[a]}=${v}`).join(" · ")}`));
      }
      const g = el("div", "edit-grid");
      g.style.gridTemplateColumns = `repeat(${cols}, max-content)`;
      for (let k = 0; k < per; k++) {
        const flat = s * per + k;
        const inp = el("input");
        inp.type = "text";
        inp.inputMode = "decimal";
        inp.dataset.idx = String(flat);
        inp.setAttribute("aria-label", `${this.name}[${indexText(flat, shape)}]`);
        this.inputs[flat] = inp;
        g.append(inp);
      }
      frag.append(g);
    }
    this.grid.replaceChildren(frag);
    if (refused.length) queueMicrotask(() => this._carryRefused(refused));
  }

  /** Refused texts at their (n, c, i, j) put back in a new grid, refused again; the
   *  message follows (after the drawing that built the grid). */
  _carryRefused(refused) {
    const shape = this.gridShape;
    for (const [index, text] of refused) {
      if (index.length !== shape.length || index.some((v, a) => v >= shape[a])) continue;
      const flat = index.reduce((f, v, a) => f * shape[a] + v, 0);
      if (!this.inputs[flat]) continue;
      this.inputs[flat].value = text;
      this._read(flat);
    }
    this._problem();
  }

  _onGenerator(e) {
    const kind = this.kind.value;
    let value;
    if (kind === "default") value = null;
    else if (kind === "values") {
      // back to typed values: what was typed (resized to the shape on screen), else the
      // values on screen
      const shape = this.tensor ? this.tensor.shape : shapeOf(this.value);
      if (this.typed && shape) value = resizeTyped(this.typed, shape).values;
      else if (this.tensor) value = nestFlat(this.tensor.data, this.tensor.shape);
      else return;
    } else {
      const shape = this.name === "dout" ? null : shapeOf(this.value) ?? (this.tensor && this.tensor.shape);
      value = shape ? { fill: kind, shape } : { fill: kind };
      const keys = Object.keys(PUBLISHED.fills[kind].params);
      this.params.forEach((p, i) => {
        if (i < keys.length) value[keys[i]] = e && e.target === this.kind ? PUBLISHED.fills[kind].params[keys[i]] : Number(p.inp.value);
      });
      if (PUBLISHED.fills[kind].random) value.seed = Math.max(0, Math.trunc(Number(this.seed.value) || 0));
    }
    // the cells now show the values picked, none of them a refused word: the marks go
    this._clearRefused();
    this.show(value);
    this.onEdit(value, { immediate: true });
  }

  _clearRefused() {
    if (!this.invalid.size) return;
    for (const i of this.invalid.keys()) this.inputs[i]?.removeAttribute("aria-invalid");
    this.invalid.clear();
    this._problem();
  }

  _problem() {
    const first = this.invalid.values().next();
    const text = first.done ? "" : `${first.value}${this.invalid.size > 1 ? ` (and ${this.invalid.size - 1} more cells)` : ""}`;
    this.error.textContent = text;
    this.error.hidden = !text;
    this.onProblem(text);
  }

  _onCell(e) {
    const inp = e.target;
    if (!inp.dataset.idx || !this.tensor) return;
    const at = Number(inp.dataset.idx);
    const numbers = this._read(at);
    this._problem();
    if (numbers) this._commit(pasteCells(this._data(), at, numbers).data);
  }

  /** Cell `at`'s text as its one number ([n]), or null: then the cell is marked refused,
   *  with a message naming it. */
  _read(at) {
    const inp = this.inputs[at];
    const parsed = parseCells(inp.value);
    if (!parsed.error && parsed.numbers.length === 1) {
      inp.removeAttribute("aria-invalid");
      this.invalid.delete(at);
      return parsed.numbers;
    }
    const label = inp.getAttribute("aria-label");
    inp.setAttribute("aria-invalid", "true");
    this.invalid.set(at, parsed.error ? `${label}: ${parsed.error}` : `${label}: "${inp.value.trim().slice(0, 20)}" is not one number`);
    return null;
  }

  _onPaste(e) {
    const inp = e.target;
    if (!inp.dataset || !inp.dataset.idx || !this.tensor) return;
    const text = e.clipboardData ? e.clipboardData.getData("text") : "";
    const pasted = parsePaste(text);
    if (!pasted.error && !pasted.rows && pasted.numbers.length <= 1) return; // one number pastes as typing does
    e.preventDefault();
    const label = inp.getAttribute("aria-label");
    const placed = placePaste(this._data(), this.tensor.shape, Number(inp.dataset.idx), pasted, label);
    if (placed.error) {
      // a block's refusal is a whole sentence naming the cell; the others name it here
      this.error.textContent = placed.size ? placed.error : `Paste into ${label} refused: ${placed.error}.`;
      this.error.hidden = false;
      return;
    }
    for (const i of placed.cells) {
      this.inputs[i].value = String(placed.data[i]);
      this.inputs[i].removeAttribute("aria-invalid");
      this.invalid.delete(i);
    }
    this._problem();
    this._commit(placed.data);
  }

  /** The values the cells hold now (the typed ones, else the trace's). flat: (size,) */
  _data() {
    const shape = this.tensor.shape;
    const typed = this.typed && this.typed.shape.join() === shape.join() ? this.typed.data : null;
    return Array.from(typed ?? this.tensor.data);
  }

  _commit(flat) {
    const shape = this.tensor.shape;
    this.typed = { shape: shape.slice(), data: flat.map(Number) };
    if (this.invalid.size) return; // the edit runs once every cell holds a number
    const value = nestFlat(flat, shape);
    this.show(value);
    this.onEdit(value, { immediate: false });
  }
}
