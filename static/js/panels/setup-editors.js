// The setup controls: the parameter form (menus built from what the server publishes)
// and one TensorEditor per tensor input. They read the config into the controls and
// turn edits into a new config through onChange(config, {immediate}); a field that does
// not hold a whole number is refused here with a message (never rounded), through
// onProblem(errors), as is a size that makes an input larger than the server's published
// limit. They never compute anything else the server computes.

import {
  PUBLISHED, dimsOf, withDims, withBias, withLayer, isTransposed, isSequence, layoutFits, layoutOf, paddingFormsFor,
  pairOf, pairValue, paddingOf, paddingValue, clone, wholeNumber, withDoutFreed, oversizedInput,
} from "../model/trace-config.js";
import { TensorEditor } from "./tensor-editor.js";

// the form's whole-number fields: the config field their errors belong to, their name
// for people, and for the sizes the page builds shapes from, their smallest value (the
// other bounds are the server's to check and to state)
const WHOLE = {
  N: ["x", "N", 1], C: ["x", "C", 1], H: ["x", "H", 1], W: ["x", "W", 1],
  F: ["w", "F", 1], KH: ["w", "KH", 1], KW: ["w", "KW", 1], groups: ["groups", "groups", 1],
  stride_h: ["stride", "stride h", null], stride_w: ["stride", "stride w", null],
  dilation_h: ["dilation", "dilation h", null], dilation_w: ["dilation", "dilation w", null],
  pad0: ["padding", "padding", null], pad1: ["padding", "padding", null], pad2: ["padding", "padding", null], pad3: ["padding", "padding", null],
  op_h: ["output_padding", "output padding h", null], op_w: ["output_padding", "output padding w", null],
};
const DIMS = ["N", "C", "H", "W", "F", "KH", "KW", "groups"];
// a Conv1d's: no rows (H and KH are hidden, 1), W and KW are its length L and taps K,
// stride w and dilation w its stride and dilation (their names in its messages)
const SEQUENCE_DIMS = DIMS.filter((k) => k !== "H" && k !== "KH");
const SEQUENCE_LABELS = { W: "L", KW: "K", stride_w: "stride", dilation_w: "dilation" };
/** The name a message gives control `name` (a whole-number field; a sequence's own), or undefined. */
const labelOf = (name, sequence) => (sequence && SEQUENCE_LABELS[name]) || WHOLE[name]?.[1];
// the controls a ConvTranspose2d's trace does not take (the layer's own defaults stand)
const CONV2D_ONLY = ["layout", "activation", "granularity", "backward", "padding_mode", "flip", "loop_order", "dx_loop_order"];
// config field -> the controls its errors mark
const CONTROLS = {
  x: ["N", "C", "H", "W"], w: ["F", "KH", "KW"], groups: ["groups"], stride: ["stride_h", "stride_w"],
  dilation: ["dilation_h", "dilation_w"], padding: ["padding_form", "pad0", "pad1", "pad2", "pad3"],
  padding_mode: ["padding_mode"], flip: ["flip"], layer: ["layer"], output_padding: ["op_h", "op_w"],
  loop_order: ["loop_order"], view: ["view"], granularity: ["granularity"], backward: ["backward"],
  activation: ["activation"], layout: ["layout"], phases: ["phases"], copies: ["copies"], b: ["bias"],
};
// each control's field (CONTROLS turned round)
const FIELD_OF = Object.fromEntries(Object.entries(CONTROLS).flatMap(([field, names]) => names.map((n) => [n, field])));
const MENU_FIELDS = ["activation", "view", "granularity", "backward", "phases", "copies", "padding_mode"];

/** Fill the form's menus from GET /api/meta's lists (padding_form: the layer's own, and
 *  of the layouts only the layer's shown, by _showLayer). */
function buildMenus(form, meta) {
  const menus = {
    activation: meta.activations, view: meta.views, layout: meta.choices.layout, granularity: meta.choices.granularity,
    backward: meta.choices.backward, phases: meta.choices.phases, copies: meta.choices.copies,
    padding_mode: meta.choices.padding_mode, layer: meta.choices.layer,
  };
  for (const [name, list] of Object.entries(menus)) fillMenu(form.elements[name], list);
}

function fillMenu(select, list) {
  select.replaceChildren(...list.map((c) => new Option(c.title, c.name)));
}

/** The words of the layers: "conv2d", "transposed" or "conv1d" (the data-* attributes
 *  of the form's captions). */
function layerWords(config) {
  return isTransposed(config) ? "transposed" : isSequence(config) ? "conv1d" : "conv2d";
}

export class SetupEditors {
  /** form: the setup <form>; onChange(config, {immediate}) after every valid edit;
   *  onProblem(errors {field: message}) when the form holds something it cannot send;
   *  onDraft() after anything the form holds may have changed (see draft()). */
  constructor(form, { onChange, onProblem, onDraft = () => {} }) {
    this.form = form;
    this.onChange = (config, how) => {
      onChange(config, how);
      onDraft();
    };
    this.onProblem = onProblem;
    this.onDraft = onDraft;
    this.config = null;
    this.asked = null; // the setup last put here whole (a lesson, a link): not a draft
    this.replacing = false; // true while a new setup is shown (see _set)
    this.problems = {}; // field -> message, found here (not sent to the server)
    this.invalid = new Set(); // the controls those problems are in (a field's others are not marked)
    buildMenus(form, PUBLISHED.meta);
    this.menusLayer = null; // the layer the layout and padding menus were built for
    this.padNames = {};
    this._buildLayerMenus("conv2d");
    const host = form.querySelector("#tensor-editors");
    this.tensors = {};
    for (const input of PUBLISHED.meta.inputs) {
      const field = input.name === "x" || input.name === "w" ? `${input.name}_values` : input.name;
      this.tensors[input.name] = new TensorEditor(input, host, {
        onEdit: (value, how) => this._onTensor(input.name, value, how),
        onProblem: (text) => this._setProblem(field, text),
      });
    }
    form.addEventListener("input", (e) => this._onInput(e));
    form.addEventListener("change", (e) => this._onInput(e, true));
    form.addEventListener("submit", (e) => e.preventDefault());
    // (after the cells' own handlers: a cell typed, or typed while another is refused,
    // changes no setup yet)
    for (const type of ["input", "change", "paste"]) form.addEventListener(type, () => this.onDraft());
  }

  /** Show `config` in the controls (does not call onChange); `fresh`: a new setup. */
  show(config, { fresh = false } = {}) {
    this.config = clone(config);
    if (fresh) {
      this.asked = clone(config);
      this._clearProblems();
      this.note("");
    }
    this.replacing = fresh; // (a new setup replaces even the field being typed in)
    const f = this.form.elements;
    const dims = dimsOf(config);
    const d = PUBLISHED.defaults;
    this._showLayer(config); // (first: the layer's own layout and padding menus)
    for (const k of ["N", "C", "H", "W", "F", "KH", "KW"]) this._set(f[k], dims[k]);
    this._set(f.groups, config.groups ?? d.groups);
    const [sh, sw] = pairOf(config.stride, 1);
    const [dh, dw] = pairOf(config.dilation, 1);
    this._set(f.stride_h, sh);
    this._set(f.stride_w, sw);
    this._set(f.dilation_h, dh);
    this._set(f.dilation_w, dw);
    const pad = paddingOf(config.padding ?? d.padding);
    this._set(f.padding_form, pad.mode);
    for (let i = 0; i < 4; i++) this._set(f[`pad${i}`], pad.values[i] ?? pad.values[0] ?? 0);
    this._showPadFields(pad.mode);
    f.bias.checked = config.b != null;
    f.flip.checked = config.flip === true;
    this._set(f.layout, layoutOf(config));
    for (const k of MENU_FIELDS) this._set(f[k], config[k] ?? d[k]);
    this._set(f.loop_order, config.loop_order ?? "");
    for (const [name, ed] of Object.entries(this.tensors)) ed.show(config[name] ?? null, { fresh });
    this.replacing = false;
    this.onDraft();
  }

  /** What the form holds that the stage, showing the trace of `shown`, does not, or null:
   *  {config} a setup edited (not one put here whole: a lesson picked, a link) but not
   *  traced yet, or refused by the server; {controls {name: text}} the fields refused
   *  here (what a number field cannot read is not kept); {cells {tensor:
   *  TensorEditor.draft()}} the tensor editors' refused cells and the cell being typed. */
  draft(shown) {
    const draft = {};
    const typed = JSON.stringify(this.config);
    if (this.config && typed !== JSON.stringify(shown ?? null) && typed !== JSON.stringify(this.asked)) draft.config = clone(this.config);
    const controls = {};
    for (const name of this.invalid) {
      const text = this.form.elements[name]?.value;
      if (text) controls[name] = text;
    }
    if (Object.keys(controls).length) draft.controls = controls;
    const cells = Object.fromEntries(Object.entries(this.tensors).map(([n, ed]) => [n, ed.draft()]).filter(([, d]) => d));
    if (Object.keys(cells).length) draft.cells = cells;
    return Object.keys(draft).length ? draft : null;
  }

  /** Put a draft() back after a reload: its setup shown and traced again (the server says
   *  again what it refused), each refused field's text typed again and refused again,
   *  each tensor editor's cells put back. */
  restore(draft) {
    if (draft.config) {
      this.show(draft.config);
      this.onChange(clone(draft.config), { immediate: true });
    }
    for (const [name, text] of Object.entries(draft.controls ?? {})) {
      const control = this.form.elements[name];
      if (!control || control.tagName !== "INPUT") continue;
      control.value = String(text);
      control.dispatchEvent(new Event("input", { bubbles: true }));
    }
    for (const [name, cells] of Object.entries(draft.cells ?? {})) this.tensors[name]?.restoreDraft(cells);
  }

  /** The trace header arrived: show its tensors in the grid editors and the resolved loop order. */
  showHeader(header) {
    const lo = this.form.elements.loop_order;
    lo.placeholder = header.spec && header.spec.loop_order ? `default: ${header.spec.loop_order}` : "default";
    for (const [name, ed] of Object.entries(this.tensors)) ed.showTensor(header.tensors[name] ?? null);
  }

  /** True while a field or cell holds something that cannot be sent. */
  get hasProblems() {
    return Object.keys(this.problems).length > 0;
  }

  /** Show messages next to their controls: errors = {field: message} (the server's,
   *  or, when null, this form's own problems). */
  showErrors(errors) {
    // a control stays refused while its field has a problem found here (a problem goes
    // with a field's other control's edit, a new layer or padding form hides one)
    for (const name of this.invalid) if (!(FIELD_OF[name] in this.problems)) this.invalid.delete(name);
    const all = { ...this.problems, ...(errors ?? {}) };
    const shown = new Set();
    for (const p of this.form.querySelectorAll("[data-error-for]")) {
      const msg = all[p.dataset.errorFor];
      p.textContent = msg ?? "";
      p.hidden = !msg;
      if (msg) shown.add(p.dataset.errorFor);
    }
    // fields without a slot of their own go to the form's banner
    const rest = Object.entries(all).filter(([k]) => !shown.has(k)).map(([k, m]) => (k === "_" ? m : `${k}: ${m}`));
    const banner = this.form.querySelector("#form-error");
    if (rest.length) {
      banner.textContent = rest.join("; ");
      banner.hidden = false;
    }
    for (const input of this.form.querySelectorAll("[aria-invalid]")) if (!input.closest(".edit-grid")) input.removeAttribute("aria-invalid");
    for (const field of Object.keys(all)) {
      // a problem found here marks the controls it is in; the server's, every control
      // of its field
      const controls = CONTROLS[field] ?? [];
      const own = errors && field in errors ? [] : controls.filter((name) => this.invalid.has(name));
      for (const name of own.length ? own : controls) this.form.elements[name]?.setAttribute("aria-invalid", "true");
    }
    this.onDraft();
  }

  /** A note under the Apply button (what a change of shape did to typed values). */
  note(text) {
    const banner = this.form.querySelector("#form-note");
    banner.textContent = text;
    banner.hidden = !text;
  }

  /** Show `value` in `control`, unless it is being typed in or holds what was typed
   *  and refused (its problem says why; a new setup clears both). */
  _set(control, value) {
    if (!control) return;
    const v = String(value);
    const typing = document.activeElement === control && !this.replacing;
    if (control.value !== v && !typing && !this.invalid.has(control.name)) control.value = v;
  }

  /** The layer menu, the transposed layer's output padding, the captions that name the
   *  layer's dims (C and F in and out channels for the transposed layer, W and KW a
   *  Conv1d's L and K), a Conv1d's rows hidden, the layer's layouts and padding forms,
   *  and the controls its trace does not take (disabled, their defaults shown). */
  _showLayer(config) {
    const f = this.form.elements;
    const transposed = isTransposed(config);
    const sequence = isSequence(config);
    this._set(f.layer, config.layer ?? PUBLISHED.defaults.layer);
    this._buildLayerMenus(config.layer ?? PUBLISHED.defaults.layer);
    const [oh, ow] = pairOf(config.output_padding, 0);
    this._set(f.op_h, oh);
    this._set(f.op_w, ow);
    for (const label of this.form.querySelectorAll(".transposed-only")) label.hidden = !transposed;
    for (const label of this.form.querySelectorAll(".image-only")) label.hidden = sequence;
    const words = layerWords(config);
    for (const word of this.form.querySelectorAll("[data-conv2d]")) word.textContent = word.dataset[words] ?? word.dataset.conv2d;
    for (const name of CONV2D_ONLY) {
      const control = f[name];
      if (!control) continue;
      control.disabled = transposed;
      control.title = transposed ? "ConvTranspose2d is traced without it (the default stands)" : "";
    }
  }

  /** The layout and padding menus of `layer`, as the server publishes them: its layouts
   *  (the menu keeps every published layout, the others hidden and disabled) and its
   *  padding forms (a Conv1d's left, right and causal; no four sides for a transposed
   *  layer or a sequence). Done again only when the layer changes. */
  _buildLayerMenus(layer) {
    if (this.menusLayer === layer) return;
    this.menusLayer = layer;
    const meta = PUBLISHED.meta;
    for (const option of this.form.elements.layout.options) {
      const fits = layoutFits(option.value, layer);
      option.hidden = !fits;
      option.disabled = !fits;
    }
    const forms = paddingFormsFor(meta, layer);
    fillMenu(this.form.elements.padding_form, forms);
    this.padNames = Object.fromEntries(forms.map((p) => [p.name, p.values]));
  }

  /** The dims the form's size fields hold for `config`'s layer ({N, C, H, W, F, KH, KW,
   *  groups}: a Conv1d's H and KH are 1), or null (problems shown). */
  _dims(config) {
    const v = this._wholes(isSequence(config) ? SEQUENCE_DIMS : DIMS);
    return v && { H: 1, KH: 1, ...v };
  }

  /** What was typed into each tensor editor ({name: {shape, data}}): a resize keeps it. */
  _typed() {
    return Object.fromEntries(Object.entries(this.tensors).map(([n, ed]) => [n, ed.typed]).filter(([, m]) => m));
  }

  _showPadFields(mode) {
    const names = this.padNames[mode] ?? [];
    for (const label of this.form.querySelectorAll(".pad-v")) {
      const i = Number(label.dataset.pad);
      label.hidden = i >= names.length;
      if (i < names.length) label.querySelector(".pad-name").textContent = names[i];
    }
  }

  _setProblem(field, text) {
    if (text) this.problems[field] = text;
    else delete this.problems[field];
    this.showErrors(null);
    this.onProblem(this.problems);
  }

  _clearProblems() {
    this.problems = {};
    this.invalid.clear();
    this.showErrors(null);
    this.onProblem(this.problems);
  }

  /** Whether the sizes `dims`, just edited in control `name`, make an input larger than
   *  the server takes: then said on that control, naming the count and the limit, and
   *  not sent (the last good trace stays). */
  _tooLarge(name, dims, sequence) {
    const limit = PUBLISHED.meta.limits?.max_tensor_elements;
    const over = oversizedInput(dims, limit, sequence);
    if (!over) return false;
    const label = labelOf(name, sequence);
    const typed = label ? `${label} = ${dims[name]} gives ` : "";
    const per = over.groups > 1 ? "/groups" : "";
    const names = over.sizes.map(([n]) => n).join("·") + per;
    const values = over.sizes.map(([, v]) => v).join("·") + (over.groups > 1 ? `/${over.groups}` : "");
    this.problems[over.tensor] = `${typed}${over.tensor} ${over.count.toLocaleString("en")} elements (${names} = ${values}); the limit is ${limit.toLocaleString("en")} per tensor`;
    if (label) this.invalid.add(name);
    this.showErrors(null);
    this.onProblem(this.problems);
    return true;
  }

  /** The whole numbers of the form's fields `names`: {values} or null (problems shown). */
  _wholes(names) {
    const values = {};
    const problems = {};
    const sequence = this.config != null && isSequence(this.config);
    for (const name of names) {
      const [field, , min] = WHOLE[name];
      const control = this.form.elements[name];
      const r = wholeNumber(control.value, labelOf(name, sequence), min, control.validity.badInput);
      this.invalid.delete(name);
      if (r.error) {
        problems[field] = problems[field] ? `${problems[field]}; ${r.error}` : r.error;
        this.invalid.add(name);
      } else values[name] = r.value;
    }
    // the fields checked here are this edit's: their old problems go, new ones come
    for (const name of names) delete this.problems[WHOLE[name][0]];
    Object.assign(this.problems, problems);
    this.showErrors(null);
    this.onProblem(this.problems); // (a field mended clears the form's problem too)
    return Object.keys(problems).length ? null : values;
  }

  _onInput(e, committed = false) {
    const t = e.target;
    if (!t || !t.name || t.closest(".tensor-editor")) return; // (the tensor editors handle theirs)
    if ((t.tagName === "SELECT" || t.type === "checkbox") && !committed) return; // handled on change
    if (t.type === "number" && e.type === "input" && t.value === "") return; // mid-typing
    let config = clone(this.config);
    const f = this.form.elements;
    const name = t.name;
    if (name === "layer") {
      const v = this._dims(config);
      if (!v) return;
      const typed = this._typed();
      const res = withLayer(config, t.value, v, typed);
      config = res.config;
      if (res.notes.length) this.note(res.notes.join(" "));
      for (const [n, ed] of Object.entries(this.tensors)) ed.show(config[n] ?? null);
      this.show(config);
    } else if (name === "op_h" || name === "op_w") {
      const v = this._wholes(["op_h", "op_w"]);
      if (!v) return;
      config = this._withGeometry(config, "output_padding", pairValue([v.op_h, v.op_w]));
    } else if ([...DIMS, "layout"].includes(name)) {
      const v = this._dims(config);
      if (!v || this._tooLarge(name, v, isSequence(config))) return;
      const typed = this._typed();
      const res = withDims(config, v, { layout: f.layout.value, groups: v.groups, typed });
      config = res.config;
      if (res.notes.length) this.note(res.notes.join(" "));
      for (const [n, ed] of Object.entries(this.tensors)) ed.show(config[n] ?? null);
    } else if (name === "stride_h" || name === "stride_w" || name === "dilation_h" || name === "dilation_w") {
      const kind = name.split("_")[0];
      // (a Conv1d's: one number, the "w" field captioned "stride" / "dilation")
      const v = this._wholes(isSequence(config) ? [`${kind}_w`] : [`${kind}_h`, `${kind}_w`]);
      if (!v) return;
      config = this._withGeometry(config, kind, isSequence(config) ? v[`${kind}_w`] : pairValue([v[`${kind}_h`], v[`${kind}_w`]]));
    } else if (name === "padding_form" || /^pad\d$/.test(name)) {
      const mode = f.padding_form.value;
      this._showPadFields(mode);
      const used = [0, 1, 2, 3].slice(0, (this.padNames[mode] ?? []).length).map((i) => `pad${i}`);
      const v = this._wholes(used);
      if (!v) return;
      config = this._withGeometry(config, "padding", paddingValue({ mode, values: used.map((k) => v[k]) }));
    } else if (name === "flip") {
      if (t.checked) config.flip = true;
      else delete config.flip;
    } else if (name === "bias") {
      config = withBias(config, t.checked);
      this.tensors.b?.show(config.b);
    } else if (name === "loop_order") {
      const v = t.value.trim();
      if (v) config.loop_order = v;
      else delete config.loop_order;
    } else if (MENU_FIELDS.includes(name)) {
      config[name] = t.value;
      if (name === "view" || name === "granularity") delete config.loop_order, this._set(f.loop_order, "");
    } else return;
    this.config = config;
    this.onChange(config, { immediate: t.tagName === "SELECT" || t.type === "checkbox" });
  }

  /** The config with stride, dilation or padding `value`: a new value may change the
   *  output's shape, so dout is freed from the old one (said in a note). */
  _withGeometry(config, field, value) {
    if (JSON.stringify(config[field] ?? null) === JSON.stringify(value)) return config;
    const { config: next, note } = withDoutFreed({ ...config, [field]: value });
    if (note) {
      this.note(note);
      this.tensors.dout?.show(next.dout ?? null);
    }
    return next;
  }

  _onTensor(name, value, { immediate }) {
    const config = clone(this.config);
    config[name] = value;
    if (name === "b") this.form.elements.bias.checked = value != null;
    this.config = config;
    this.onChange(config, { immediate });
  }
}
