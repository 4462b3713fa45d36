// The setup controls: the parameter form and the tensor editors (generators and grids).
// They read the config into the controls, and turn user edits into a new config through
// onChange(config). They never compute anything the server computes.

import {
  FILLS, dimsOf, withDims, withBias, pairOf, pairValue, paddingOf, paddingValue, isFill, clone,
  nestFlat, parseNumbers, pasteInto, shapeOf, defaultFill,
} from "./setup.js";
import { formatValue } from "./format.js";
import { DESCRIPTIONS } from "./render.js";

const MAX_EDIT_CELLS = 1024;
const TENSORS = ["x", "w", "b", "dout"];
const PAD_NAMES = { int: ["p"], pair: ["rows", "cols"], four: ["top", "bottom", "left", "right"], same: [], valid: [] };

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

export class SetupEditors {
  /** form: the setup <form>; onChange(config, {immediate}) is called after every edit. */
  constructor(form, onChange) {
    this.form = form;
    this.onChange = onChange;
    this.config = null;
    this.header = null;
    this.tensorBoxes = {};
    const host = form.querySelector("#tensor-editors");
    for (const name of TENSORS) host.append(this._buildTensorEditor(name));
    form.addEventListener("input", (e) => this._onInput(e));
    form.addEventListener("change", (e) => this._onInput(e, true));
    form.addEventListener("submit", (e) => e.preventDefault());
  }

  /** Show `config` in the controls (does not call onChange). */
  show(config) {
    this.config = clone(config);
    const f = this.form.elements;
    const dims = dimsOf(config);
    for (const k of ["N", "C", "H", "W", "F", "KH", "KW"]) this._set(f[k], dims[k]);
    this._set(f.groups, config.groups ?? 1);
    const [sh, sw] = pairOf(config.stride, 1);
    const [dh, dw] = pairOf(config.dilation, 1);
    this._set(f.stride_h, sh);
    this._set(f.stride_w, sw);
    this._set(f.dilation_h, dh);
    this._set(f.dilation_w, dw);
    const pad = paddingOf(config.padding ?? 0);
    this._set(f.padding_mode, pad.mode);
    for (let i = 0; i < 4; i++) this._set(f[`pad${i}`], pad.values[i] ?? pad.values[0] ?? 0);
    this._showPadFields(pad.mode);
    f.bias.checked = config.b != null;
    this._set(f.activation, config.activation ?? "identity");
    this._set(f.layout, config.layout ?? "NCHW");
    this._set(f.view, config.view ?? "direct");
    this._set(f.granularity, config.granularity ?? "window");
    this._set(f.backward, config.backward ?? "fused");
    this._set(f.phases, config.phases ?? "both");
    this._set(f.loop_order, config.loop_order ?? "");
    for (const name of TENSORS) this._showGenerator(name);
  }

  /** The trace header arrived: show its tensors in the grid editors and the resolved loop order. */
  showHeader(header) {
    this.header = header;
    const lo = this.form.elements.loop_order;
    lo.placeholder = header.spec && header.spec.loop_order ? `default: ${header.spec.loop_order}` : "default";
    for (const name of TENSORS) this._showGrid(name);
  }

  /** Show the server's messages next to their controls: errors = {field: message}. */
  showErrors(errors) {
    const shown = new Set();
    for (const p of this.form.querySelectorAll("[data-error-for]")) {
      const field = p.dataset.errorFor;
      const msg = errors[field];
      if (msg) {
        p.textContent = msg;
        p.hidden = false;
        shown.add(field);
      } else {
        p.textContent = "";
        p.hidden = true;
      }
    }
    // fields without a slot of their own go to the form's banner
    const rest = Object.entries(errors).filter(([k]) => !shown.has(k)).map(([k, m]) => (k === "_" ? m : `${k}: ${m}`));
    const banner = this.form.querySelector("#form-error");
    if (rest.length) {
      banner.textContent = rest.join("; ");
      banner.hidden = false;
    }
    for (const input of this.form.querySelectorAll("[aria-invalid]")) input.removeAttribute("aria-invalid");
    const controls = {
      x: ["N", "C", "H", "W"], w: ["F", "KH", "KW"], groups: ["groups"], stride: ["stride_h", "stride_w"],
      dilation: ["dilation_h", "dilation_w"], padding: ["padding_mode", "pad0", "pad1", "pad2", "pad3"],
      loop_order: ["loop_order"], view: ["view"], granularity: ["granularity"], backward: ["backward"],
      activation: ["activation"], layout: ["layout"], phases: ["phases"], b: ["bias"],
    };
    for (const field of Object.keys(errors)) {
      for (const name of controls[field] ?? []) {
        const c = this.form.elements[name];
        if (c) c.setAttribute("aria-invalid", "true");
      }
    }
  }

  _set(control, value) {
    if (!control) return;
    const v = String(value);
    if (control.value !== v && document.activeElement !== control) control.value = v;
  }

  _showPadFields(mode) {
    const names = PAD_NAMES[mode] ?? [];
    for (const label of this.form.querySelectorAll(".pad-v")) {
      const i = Number(label.dataset.pad);
      label.hidden = i >= names.length;
      if (i < names.length) label.querySelector(".pad-name").textContent = names[i];
    }
  }

  _int(name, fallback) {
    const v = Number(this.form.elements[name].value);
    return Number.isFinite(v) && v !== 0 ? Math.trunc(v) : this.form.elements[name].value === "0" ? 0 : fallback;
  }

  _onInput(e, committed = false) {
    const t = e.target;
    if (!t || !t.name) return;
    if (t.closest(".tensor-editor")) return; // handled by the tensor editors
    if (t.type === "number" && e.type === "input" && t.value === "") return; // mid-typing
    if (t.tagName === "SELECT" && e.type === "input") return; // handled on change
    if (t.type === "checkbox" && e.type === "input") return;
    if ((t.tagName === "SELECT" || t.type === "checkbox") && !committed) return;
    let config = clone(this.config);
    const f = this.form.elements;
    const name = t.name;
    if (["N", "C", "H", "W", "F", "KH", "KW", "groups", "layout"].includes(name)) {
      const dims = {};
      for (const k of ["N", "C", "H", "W", "F", "KH", "KW"]) dims[k] = this._int(k, dimsOf(config)[k]);
      const res = withDims(config, dims, { layout: f.layout.value, groups: this._int("groups", 1) });
      config = res.config;
      if (res.reset.length) this._note(`Typed values of ${res.reset.join(", ")} no longer fit the new shapes; back to generators.`);
    } else if (name === "stride_h" || name === "stride_w") {
      config.stride = pairValue([this._int("stride_h", 1), this._int("stride_w", 1)]);
    } else if (name === "dilation_h" || name === "dilation_w") {
      config.dilation = pairValue([this._int("dilation_h", 1), this._int("dilation_w", 1)]);
    } else if (name === "padding_mode" || /^pad\d$/.test(name)) {
      const mode = f.padding_mode.value;
      this._showPadFields(mode);
      config.padding = paddingValue({ mode, values: [0, 1, 2, 3].map((i) => this._int(`pad${i}`, 0)) });
    } else if (name === "bias") {
      config = withBias(config, t.checked);
      this.config = config;
      this._showGenerator("b");
    } else if (name === "loop_order") {
      const v = t.value.trim();
      if (v) config.loop_order = v;
      else delete config.loop_order;
    } else if (["activation", "view", "granularity", "backward", "phases"].includes(name)) {
      config[name] = t.value;
      if (name === "view" || name === "granularity") delete config.loop_order, this._set(f.loop_order, "");
    } else return;
    this.config = config;
    this.onChange(config, { immediate: t.tagName === "SELECT" || t.type === "checkbox" });
  }

  _note(text) {
    const banner = this.form.querySelector("#form-error");
    banner.textContent = text;
    banner.hidden = false;
  }

  // ---- tensor editors -------------------------------------------------------------

  _buildTensorEditor(name) {
    const box = el("details", "tensor-editor");
    box.dataset.editor = name;
    const sum = el("summary");
    sum.append(el("span", "tname", name), " ", el("span", "tdesc", DESCRIPTIONS[name] ?? ""));
    box.append(sum);
    const gen = el("div", "gen-row");
    const kind = el("select");
    kind.name = `${name}_fill`;
    kind.setAttribute("aria-label", `${name}: values from`);
    if (name === "dout") kind.append(new Option("ones (loss = sum of outputs)", "default"));
    if (name === "b") kind.append(new Option("no bias", "default"));
    for (const [k, v] of Object.entries(FILLS)) kind.append(new Option(v.label, k));
    kind.append(new Option("typed values", "values"));
    const kindLabel = el("label", null, "values from");
    kindLabel.append(kind);
    gen.append(kindLabel);
    const params = [];
    for (let i = 0; i < 2; i++) {
      const lab = el("label");
      const span = el("span", "param-name", "");
      const inp = el("input");
      inp.type = "number";
      inp.step = "any";
      inp.name = `${name}_p${i}`;
      lab.append(span, inp);
      gen.append(lab);
      params.push({ lab, span, inp });
    }
    const seedLab = el("label", null, "seed");
    const seed = el("input");
    seed.type = "number";
    seed.step = "1";
    seed.min = "0";
    seed.name = `${name}_seed`;
    seedLab.append(seed);
    gen.append(seedLab);
    box.append(gen);
    const err = el("p", "field-error");
    err.dataset.errorFor = name === "x" || name === "w" ? `${name}_values` : name;
    err.hidden = true;
    box.append(err);
    const note = el("p", "editor-note", "Type a number and press Tab for the next cell; paste a block of numbers into a cell to fill from there.");
    const grid = el("div", "edit-grid-wrap");
    box.append(note, grid);
    const onGen = (e) => this._onGenerator(name, e);
    kind.addEventListener("change", onGen);
    for (const p of params) p.inp.addEventListener("change", onGen);
    seed.addEventListener("change", onGen);
    grid.addEventListener("change", (e) => this._onCell(name, e));
    grid.addEventListener("paste", (e) => this._onPaste(name, e));
    this.tensorBoxes[name] = { box, kind, params, seed, grid, note, shownKey: "" };
    return box;
  }

  _showGenerator(name) {
    const ed = this.tensorBoxes[name];
    const value = this.config ? this.config[name] : null;
    let kind = "default";
    if (isFill(value)) kind = value.fill;
    else if (value != null) kind = "values";
    else if (name === "x" || name === "w") kind = "randint";
    ed.kind.value = kind;
    const spec = FILLS[kind];
    const keys = spec ? Object.keys(spec.params) : [];
    ed.params.forEach((p, i) => {
      p.lab.hidden = i >= keys.length;
      if (i < keys.length) {
        p.span.textContent = keys[i];
        p.inp.dataset.key = keys[i];
        const v = isFill(value) && value[keys[i]] != null ? value[keys[i]] : spec.params[keys[i]];
        if (document.activeElement !== p.inp) p.inp.value = String(v);
      }
    });
    const seeded = ["randint", "normal", "uniform"].includes(kind);
    ed.seed.parentElement.hidden = !seeded;
    if (seeded && document.activeElement !== ed.seed) ed.seed.value = String(isFill(value) && value.seed != null ? value.seed : 0);
    ed.box.classList.toggle("is-off", name === "b" && value == null);
  }

  _shapeFor(name) {
    const cur = this.config[name];
    const fromConfig = shapeOf(cur);
    if (fromConfig) return fromConfig;
    const t = this.header && this.header.tensors[name];
    if (t) return t.shape;
    if (name === "b") return [dimsOf(this.config).F];
    return null;
  }

  _onGenerator(name, e) {
    const ed = this.tensorBoxes[name];
    const kind = ed.kind.value;
    const config = clone(this.config);
    if (kind === "default") config[name] = null;
    else if (kind === "values") {
      const t = this.header && this.header.tensors[name];
      if (t) config[name] = nestFlat(t.data, t.shape);
      else return;
    } else {
      const shape = this._shapeFor(name);
      if (!shape) {
        this._note(`${name}: the output shape is not known yet; run a valid setup first.`);
        return;
      }
      const fill = { fill: kind, shape };
      const keys = Object.keys(FILLS[kind].params);
      ed.params.forEach((p, i) => {
        if (i < keys.length) fill[keys[i]] = e && e.target === ed.kind ? FILLS[kind].params[keys[i]] : Number(p.inp.value);
      });
      if (["randint", "normal", "uniform"].includes(kind)) fill.seed = Math.max(0, Math.trunc(Number(ed.seed.value) || 0));
      config[name] = fill;
    }
    if (name === "b") this.form.elements.bias.checked = config.b != null;
    this.config = config;
    this._showGenerator(name);
    this.onChange(config, { immediate: true });
  }

  _showGrid(name) {
    const ed = this.tensorBoxes[name];
    const t = this.header && this.header.tensors[name];
    if (!t) {
      ed.grid.replaceChildren();
      ed.note.hidden = true;
      return;
    }
    const size = t.data.length;
    const key = `${t.shape.join("x")}|${t.axes.join(",")}`;
    if (size > MAX_EDIT_CELLS) {
      ed.grid.replaceChildren(el("p", "editor-note", `${name} has ${size} numbers, more than the ${MAX_EDIT_CELLS} this editor shows; paste or generate it.`));
      ed.shownKey = "";
      return;
    }
    ed.note.hidden = false;
    if (ed.shownKey !== key) {
      ed.shownKey = key;
      ed.inputs = new Array(size);
      const frag = document.createDocumentFragment();
      const axes = t.axes;
      const nd = t.shape.length;
      const cols = t.shape[nd - 1];
      const rows = nd >= 2 ? t.shape[nd - 2] : 1;
      const per = rows * cols;
      for (let s = 0; s < size / per; s++) {
        if (nd > 2) {
          const idx = [];
          let rem = s;
          for (let a = nd - 3; a >= 0; a--) {
            idx.unshift(`${axes[a]}=${rem % t.shape[a]}`);
            rem = Math.floor(rem / t.shape[a]);
          }
          frag.append(el("div", "edit-slice-label", `${name} · ${idx.join(" · ")}`));
        }
        const g = el("div", "edit-grid");
        g.style.gridTemplateColumns = `repeat(${cols}, max-content)`;
        for (let k = 0; k < per; k++) {
          const flat = s * per + k;
          const inp = el("input");
          inp.type = "text";
          inp.inputMode = "decimal";
          inp.dataset.idx = String(flat);
          const idx = [];
          let rem = flat;
          for (let a = nd - 1; a >= 0; a--) {
            idx.unshift(rem % t.shape[a]);
            rem = Math.floor(rem / t.shape[a]);
          }
          inp.setAttribute("aria-label", `${name}[${idx.join(",")}]`);
          ed.inputs[flat] = inp;
          g.append(inp);
        }
        frag.append(g);
      }
      ed.grid.replaceChildren(frag);
    }
    for (let i = 0; i < size; i++) {
      const inp = ed.inputs[i];
      const text = formatValue(t.data[i], 6).replace("−", "-");
      if (inp.value !== text && document.activeElement !== inp) inp.value = text;
    }
  }

  _currentData(name) {
    const t = this.header.tensors[name];
    return { data: Array.from(t.data), shape: t.shape };
  }

  _onCell(name, e) {
    const inp = e.target;
    if (!inp.dataset.idx || !this.header) return;
    const v = parseNumbers(inp.value);
    if (v.length !== 1) {
      inp.setAttribute("aria-invalid", "true");
      return;
    }
    inp.removeAttribute("aria-invalid");
    const { data, shape } = this._currentData(name);
    this._commitValues(name, pasteInto(data, Number(inp.dataset.idx), v), shape);
  }

  _onPaste(name, e) {
    const inp = e.target;
    if (!inp.dataset || !inp.dataset.idx || !this.header) return;
    const text = e.clipboardData ? e.clipboardData.getData("text") : "";
    const numbers = parseNumbers(text);
    if (numbers.length <= 1) return; // a single number pastes normally
    e.preventDefault();
    const { data, shape } = this._currentData(name);
    const at = Number(inp.dataset.idx);
    const next = pasteInto(data, at, numbers);
    const ed = this.tensorBoxes[name];
    for (let i = at; i < next.length && i < at + numbers.length; i++) ed.inputs[i].value = String(next[i]);
    this._commitValues(name, next, shape);
  }

  _commitValues(name, flat, shape) {
    const config = clone(this.config);
    config[name] = nestFlat(flat, shape);
    if (name === "b") this.form.elements.bias.checked = true;
    this.config = config;
    this._showGenerator(name);
    this.onChange(config, { immediate: false });
  }
}

export { defaultFill };
