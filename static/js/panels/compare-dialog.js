// "Compare your numbers": a dialog where a student pastes their own out, dx, dw, db (as
// print() or .tolist() shows them) to compare with the trace's. What is typed is kept
// in the browser's storage, so that neither a reload nor a closed dialog loses it.

import { parseArray } from "../model/paste-array.js";

const $ = (id) => document.getElementById(id);
const KEY = "convscope.compare";
export const COMPARED = ["out", "dx", "dw", "db"];

function loadTexts() {
  try {
    const kept = JSON.parse(localStorage.getItem(KEY) ?? "{}");
    return kept && typeof kept === "object" ? kept : {};
  } catch {
    return {};
  }
}

function saveTexts(texts) {
  try {
    localStorage.setItem(KEY, JSON.stringify(texts));
  } catch {
    /* storage refused: the texts last this visit */
  }
}

/**
 * Read the pasted texts against the trace's tensors ({name: {shape}}): {compare} (the
 * request's compare object, tensors left empty left out) or {errors: {name: sentence}}.
 */
export function readCompareForm(texts, tensors) {
  const compare = {};
  const errors = {};
  for (const name of COMPARED) {
    const text = (texts[name] ?? "").trim();
    if (!text) continue;
    if (!tensors[name]) {
      errors[name] = `this trace has no ${name}${name === "db" ? " (the layer has no bias)" : ""}`;
      continue;
    }
    const r = parseArray(text, tensors[name].shape);
    if (r.error) errors[name] = `${name}: ${r.error}`;
    else compare[name] = r.value;
  }
  if (Object.keys(errors).length) return { errors };
  if (!Object.keys(compare).length) return { errors: { _: "paste at least one of out, dx, dw, db" } };
  return { compare };
}

export class CompareDialog {
  /** tensors(): the trace's {name: {shape}} or null; onApply(compare); why(): a reason it cannot compare ("" if it can). */
  constructor({ tensors, onApply, why }) {
    this.dialog = $("compare-dialog");
    this.tensors = tensors;
    this.why = why;
    this.texts = loadTexts();
    for (const name of COMPARED) {
      const area = this._field(name);
      area.value = this.texts[name] ?? "";
      area.addEventListener("input", () => {
        this.texts[name] = area.value;
        saveTexts(this.texts);
      });
    }
    $("compare-apply").addEventListener("click", () => {
      const r = readCompareForm(this.texts, this.tensors() ?? {});
      this._errors(r.errors ?? {});
      if (r.compare) {
        this.dialog.close();
        onApply(r.compare);
      }
    });
    $("compare-cancel").addEventListener("click", () => this.dialog.close());
  }

  /** The label, text area and error line of tensor `name`; returns the text area. */
  _field(name) {
    const label = Object.assign(document.createElement("label"), { htmlFor: `compare-${name}` });
    label.append(Object.assign(document.createElement("span"), { className: "compare-name", textContent: name }), " ");
    label.append(Object.assign(document.createElement("span"), { className: "hint", id: `compare-${name}-shape` }));
    const area = Object.assign(document.createElement("textarea"), { id: `compare-${name}`, rows: 3, spellcheck: false, autocomplete: "off", placeholder: `print(${name}) or ${name}.tolist()` });
    const error = Object.assign(document.createElement("p"), { id: `compare-error-${name}`, className: "field-error", hidden: true });
    $("compare-fields").append(label, area, error);
    return area;
  }

  open() {
    const tensors = this.tensors() ?? {};
    for (const name of COMPARED) {
      const t = tensors[name];
      $(`compare-${name}-shape`).textContent = t ? `shape (${t.shape.join(", ")})` : "not in this trace";
      $(`compare-${name}`).disabled = !t;
    }
    const why = this.why();
    $("compare-why").hidden = !why;
    $("compare-why").textContent = why;
    $("compare-apply").disabled = Boolean(why);
    this._errors({});
    this.dialog.showModal();
  }

  get isOpen() {
    return this.dialog.open;
  }

  _errors(errors) {
    for (const name of [...COMPARED, "_"]) {
      const p = $(`compare-error-${name}`);
      p.textContent = errors[name] ?? "";
      p.hidden = !errors[name];
    }
  }
}
