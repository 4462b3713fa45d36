// The inspector's closed form and PyTorch expression (js/model/cell-story.js cellFormula): the
// header's templates with the cell's own index put in, in the tensor's axis order.
import test from "node:test";
import assert from "node:assert/strict";
import { TraceModel } from "../../static/js/model/trace-model.js";
import { cellFormula } from "../../static/js/model/cell-story.js";
import { loadFixture, headerOf } from "./fixtures.mjs";

test("a cell's formula and torch expression carry its index, after the header's setup lines", () => {
  const doc = loadFixture("trace_nhwc_same.json");
  const model = new TraceModel(headerOf(doc));
  const dw = doc.tensors.dw; // HWIO: (kh, kw, c, f)
  const flat = dw.shape.reduce((a, b) => a * b, 1) - 1;
  const last = dw.shape.map((s) => s - 1);
  const f = cellFormula(model, "dw", flat);
  assert.equal(f.formula, dw.formula);
  assert.equal(f.where, dw.axes.map((a, i) => `${a} = ${last[i]}`).join(", "));
  assert.deepEqual(f.torch.slice(0, -1), doc.torch_setup);
  assert.equal(f.torch.at(-1), `torch.autograd.grad(out, w, dout, retain_graph=True)[0][${last.join(", ")}]`);
  assert.equal(cellFormula(model, "x", 0), null); // an input has no formula
});
