// The handout: one printed page per chosen step (by default the first step of each phase
// that has steps), each with the phase's name and rule (the header's formulas of the
// tensors the phase writes), the step's text whole, and the stage as the page draws it
// (io/export.js's painter, every cell painted). It is built into #handout, which only
// print shows (style.css, @media print); the page's Export → Handout prints it with
// window.print(), `convscope export handout.pdf` with Chromium's Page.printToPDF.

import { paintStage } from "../io/export.js";
import { phaseIndexAt } from "../model/trace-model.js";
import { orderedNames } from "../model/tensor-layout.js";

const $ = (id) => document.getElementById(id);
/** Pixels of the stage's picture per CSS pixel: sharp digits on paper. */
export const PRINT_SCALE = 2;

/** The steps a handout shows by default: the first step of each phase that has steps.
 *  phases: [{name, start, stop}] (the header's) -> [step, ...] (0-based). */
export function handoutSteps(phases) {
  return phases.filter((p) => p.stop > p.start).map((p) => p.start);
}

/** The rule of phase `pi`: the header's formula of each tensor the phase writes, in the
 *  header's order -> [formula, ...] (none for a phase whose tensors have no formula). */
export function phaseRule(model, pi) {
  const wrote = model.wrote[pi];
  if (!wrote) return [];
  const tensors = model.header.tensors;
  return orderedNames(model.tensors)
    .filter((name) => wrote.has(name) && tensors[name] && tensors[name].formula)
    .map((name) => tensors[name].formula);
}

/** The lesson's title for the pages' foot, from the page state ("" for a custom setup). */
export function handoutTitle(state) {
  const lesson = state.trace ? state.lessons.find((p) => p.name === state.trace.lesson) : null;
  return lesson ? lesson.title : "";
}

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text != null) node.textContent = text;
  return node;
}

/**
 * Build the handout's pages into #handout: steps (0-based) in order; show(step) draws
 * the page at a step now, every cell painted; stage: the stage element; model: the
 * TraceModel; title: the lesson's name for the pages' foot; append: after the pages
 * already there (else instead of them). Resolves to the number of pages when every
 * picture is decoded (ready to print).
 */
export async function buildHandout({ steps, show, stage, model, title = "", append = false }) {
  const pages = [];
  for (const k of steps) {
    // drawn, then again once the stage has settled: a new phase's arrangement is measured
    // by the resize observers in the frames after it (the picture is of the settled one)
    show(k);
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    show(k);
    const pi = phaseIndexAt(model.phases, k);
    const ev = model.compiled[k];
    const page = el("article", "handout-page");
    page.dataset.step = String(k);
    const head = el("header", "handout-head");
    head.append(el("h2", "handout-phase", pi >= 0 ? model.phases[pi].name : "–"), el("span", "handout-step", `step ${k + 1} of ${model.total}`));
    const rule = el("div", "handout-rule");
    for (const line of phaseRule(model, pi)) rule.append(el("p", null, line));
    const picture = paintStage(stage, PRINT_SCALE);
    const img = el("img", "handout-stage");
    img.alt = `The tensors at step ${k + 1}`;
    img.width = Math.round(picture.width / PRINT_SCALE);
    img.height = Math.round(picture.height / PRINT_SCALE);
    img.src = picture.toDataURL("image/png");
    const text = el("p", "handout-text", ev ? ev.text : "");
    page.append(head, rule, text, img, el("footer", "handout-foot", title ? `ConvScope · ${title}` : "ConvScope"));
    pages.push(page);
  }
  const root = $("handout");
  if (append) root.append(...pages);
  else root.replaceChildren(...pages);
  await Promise.all(pages.map((p) => p.querySelector("img").decode()));
  return root.children.length;
}

/** Take the handout away (after printing): print shows the page's own step again. */
export function clearHandout() {
  $("handout").replaceChildren();
}
