// A Conv1d's setup (static/js/model/trace-config.js): its dims read from x (N, C, L) and
// w (F, C/groups, K) in NCL or NLC, its padding forms derived from the published ones,
// and a change of layer between Conv2d and Conv1d in both layouts (the layout to its
// twin, the rows out or back as one, stride, dilation and padding mapped, the loop
// letters back to their defaults).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  adoptMeta, dimsOf, shapesFor, shapeOf, withDims, withLayer, isSequence, layoutFits, layoutFor, layoutOf,
  paddingOf, paddingValue, paddingFormsFor, sequencePadding, imagePadding,
} from "../../static/js/model/trace-config.js";
import { loadMeta } from "./fixtures.mjs";

// what the server publishes (tests/fixtures/page/meta.json): Conv1d among the layers,
// NCL and NLC among the layouts
const META = loadMeta();
adoptMeta(META);

const ones = (shape) => ({ fill: "ones", shape });

test("a Conv1d's dims: L and K as W and KW, no rows, in NCL and NLC", () => {
  const ncl = { layer: "conv1d", groups: 2, x: ones([2, 4, 12]), w: ones([6, 2, 3]) };
  assert.equal(isSequence(ncl), true);
  assert.equal(layoutOf(ncl), "NCL"); // (the layer's default: the published default's twin)
  assert.deepEqual(dimsOf(ncl), { N: 2, C: 4, H: 1, W: 12, F: 6, KH: 1, KW: 3 });
  const nlc = { layer: "conv1d", layout: "NLC", x: ones([2, 12, 4]), w: ones([3, 4, 6]) };
  assert.deepEqual(dimsOf(nlc), { N: 2, C: 4, H: 1, W: 12, F: 6, KH: 1, KW: 3 });
  assert.deepEqual(dimsOf({ layer: "conv1d", x: [[[0, 0, 4, 0, 0, 0, 1, 2, 3, 2, 1, 0]]], w: [[[1, 0, 2]]] }), { N: 1, C: 1, H: 1, W: 12, F: 1, KH: 1, KW: 3 });
  const dims = { N: 2, C: 4, H: 7, W: 12, F: 6, KH: 5, KW: 3 }; // (H and KH: not a sequence's)
  assert.deepEqual(shapesFor(dims, "NCL", 2, "conv1d"), { x: [2, 4, 12], w: [6, 2, 3], b: [6] });
  assert.deepEqual(shapesFor(dims, "NLC", 2, "conv1d"), { x: [2, 12, 4], w: [3, 2, 6], b: [6] });
  // a new length keeps the typed cells that still exist and the generator's parameters
  const { config } = withDims({ ...nlc, x: [[[1], [2], [3]]], w: { fill: "randint", seed: 4, shape: [3, 4, 6] } }, { ...dimsOf(nlc), N: 1, C: 1, W: 5, F: 2 });
  assert.deepEqual(config.x, [[[1], [2], [3], [0], [0]]]);
  assert.deepEqual(config.w, { fill: "randint", seed: 4, shape: [3, 1, 2] });
});

test("each layer offers its own layouts, and a layout maps to its twin", () => {
  assert.deepEqual(META.choices.layout.map((c) => c.name).filter((n) => layoutFits(n, "conv1d")), ["NCL", "NLC"]);
  assert.deepEqual(META.choices.layout.map((c) => c.name).filter((n) => layoutFits(n, "conv2d")), ["NCHW", "NHWC"]);
  assert.equal(layoutFor("NCHW", "conv1d"), "NCL");
  assert.equal(layoutFor("NHWC", "conv1d"), "NLC");
  assert.equal(layoutFor("NLC", "conv2d"), "NHWC");
  assert.equal(layoutFor("NCL", "conv_transpose2d"), "NCHW");
  assert.equal(layoutFor("NLC", "conv_transpose2d"), "NCHW"); // (its only layout)
  assert.deepEqual(META.choices.layout.map((c) => c.name).filter((n) => layoutFits(n, "conv_transpose2d")), ["NCHW"]);
  assert.equal(layoutFor("NLC", "conv1d"), "NLC");
  assert.equal(layoutFor(undefined, "conv1d"), undefined);
});

test("a Conv1d's padding forms: one number, left and right, same, valid, causal", () => {
  const forms = paddingFormsFor(META, "conv1d");
  assert.deepEqual(forms.map((f) => f.name), ["int", "pair", "causal", "same", "valid"]);
  assert.deepEqual(forms.find((f) => f.name === "pair").values, ["left", "right"]);
  assert.deepEqual(paddingFormsFor(META, "conv2d"), META.padding_forms);
  assert.deepEqual(paddingFormsFor(META, "conv_transpose2d").map((f) => f.name), ["int", "pair"]); // (rows, cols cropped)
  for (const v of [0, 2, [1, 2], "same", "valid", "causal"]) assert.deepEqual(paddingValue(paddingOf(v)), v);
  assert.deepEqual(paddingOf([3]), { mode: "int", values: [3] }); // (PyTorch's (p,))
  // between the layers: the columns' part, and back as the columns' sides
  assert.equal(sequencePadding(1), 1);
  assert.equal(sequencePadding([1, 2]), 2);
  assert.deepEqual(sequencePadding([0, 1, 2, 3]), [2, 3]);
  assert.equal(sequencePadding([0, 1, 2, 2]), 2);
  assert.equal(sequencePadding("same"), "same");
  assert.equal(imagePadding(1), 1);
  assert.equal(imagePadding([3]), 3);
  assert.deepEqual(imagePadding([2, 0]), [0, 0, 2, 0]);
  assert.equal(imagePadding("valid"), "valid");
  assert.equal(imagePadding("causal"), null);
});

test("Conv2d NCHW to Conv1d and back: NCL, the first row of typed values, loop letters dropped", () => {
  const conv = {
    layout: "NCHW", x: [[[[1, 2, 3], [4, 5, 6]]]], w: { fill: "randint", seed: 1, shape: [2, 1, 2, 2] },
    dout: { fill: "randint", seed: 3, shape: [1, 2, 1, 2] }, stride: [2, 1], dilation: [1, 1], padding: [0, 1, 2, 3],
    loop_order: "nfij", dx_loop_order: "nijklfc", code: "auto", activation: "relu", view: "im2col",
  };
  const { config, notes } = withLayer(conv, "conv1d", dimsOf(conv));
  assert.equal(config.layer, "conv1d");
  assert.equal(config.layout, "NCL");
  assert.deepEqual(config.x, [[[1, 2, 3]]]); // (N, C, L): the first row
  assert.deepEqual(config.w, { fill: "randint", seed: 1, shape: [2, 1, 2] }); // (F, C, K)
  assert.deepEqual(config.dout, { fill: "randint", seed: 3 }); // (the server gives it the output's shape)
  assert.deepEqual([config.stride, config.dilation, config.padding], [1, 1, [2, 3]]);
  for (const k of ["loop_order", "dx_loop_order", "code", "output_padding"]) assert.equal(config[k], undefined, k);
  assert.deepEqual([config.activation, config.view], ["relu", "im2col"]); // (a Conv1d takes them)
  assert.match(notes[0], /^Conv1d: H 2 and KH 2 go/);
  assert.match(notes[0], /stride \[2,1\] → 1/);
  assert.match(notes[0], /loop_order, dx_loop_order back to the default/);
  assert.match(notes[1], /^x: 3 typed values kept, 3 set aside/);

  // and back, from the typed values: H and KH 1, the columns' padding as four sides
  const back = withLayer({ ...config, padding: [2, 0], loop_order: "nfj" }, "conv2d", dimsOf(config), {
    x: { shape: [1, 1, 2, 3], data: [1, 2, 3, 4, 5, 6] },
  });
  assert.equal(back.config.layer, undefined);
  assert.equal(back.config.layout, "NCHW");
  assert.deepEqual(back.config.x, [[[[1, 2, 3]]]]);
  assert.deepEqual(shapeOf(back.config.w), [2, 1, 1, 2]);
  assert.deepEqual(back.config.padding, [0, 0, 2, 0]);
  assert.equal(back.config.loop_order, undefined);
  assert.match(back.notes[0], /^Conv2d: loop_order back to the default/);
});

test("Conv2d NHWC to Conv1d NLC and back; causal padding back to 0, said", () => {
  const conv = { layout: "NHWC", x: ones([1, 3, 5, 2]), w: ones([3, 2, 2, 4]), padding: "same", stride: 2 };
  const { config, notes } = withLayer(conv, "conv1d", dimsOf(conv));
  assert.equal(config.layout, "NLC");
  assert.deepEqual(config.x, ones([1, 5, 2])); // (N, L, C)
  assert.deepEqual(config.w, ones([2, 2, 4])); // (K, C, F)
  assert.deepEqual([config.padding, config.stride], ["same", 2]);
  assert.deepEqual(dimsOf(config), { N: 1, C: 2, H: 1, W: 5, F: 4, KH: 1, KW: 2 });
  assert.match(notes[0], /H 3 and KH 3 go/);

  const causal = { ...config, padding: "causal" };
  const back = withLayer(causal, "conv2d", dimsOf(causal));
  assert.equal(back.config.layout, "NHWC");
  assert.deepEqual(back.config.x, ones([1, 1, 5, 2])); // (N, H, W, C), one row
  assert.deepEqual(back.config.w, ones([1, 2, 2, 4])); // (KH, KW, C, F)
  assert.equal(back.config.padding, 0);
  assert.match(back.notes[0], /^Conv2d: padding 0 \(Conv2d has no "causal"/);
  // an int padding stays as it is (for Conv2d it pads the rows too)
  assert.equal(withLayer({ ...config, padding: 1 }, "conv2d", dimsOf(config)).config.padding, 1);
  // the layout of a sequence given none is the layer's default: NCL, and NCHW back
  const bare = { layer: "conv1d", x: ones([1, 2, 6]), w: ones([3, 2, 2]), stride: [2] };
  const image = withLayer(bare, "conv2d", dimsOf(bare)).config;
  assert.deepEqual([image.layout, image.x.shape, image.w.shape, image.stride], [undefined, [1, 2, 1, 6], [3, 2, 1, 2], 2]);
});

test("Conv1d to ConvTranspose2d and back: one row, what the transposed trace does not take dropped", () => {
  const seq = { layer: "conv1d", layout: "NLC", x: ones([1, 6, 2]), w: ones([3, 2, 4]), padding: [1, 2], activation: "relu" };
  const { config } = withLayer(seq, "conv_transpose2d", dimsOf(seq));
  assert.equal(config.layer, "conv_transpose2d");
  assert.deepEqual([config.layout, config.activation, config.padding], [undefined, undefined, 0]);
  assert.deepEqual(config.x, ones([1, 2, 1, 6])); // (N, C_in, H, W)
  assert.deepEqual(config.w, ones([2, 4, 1, 3])); // (C_in, C_out, KH, KW)
  const back = withLayer({ ...config, output_padding: 1 }, "conv1d", dimsOf(config)).config;
  assert.deepEqual([back.layer, back.layout, back.output_padding], ["conv1d", undefined, undefined]);
  assert.deepEqual([back.x.shape, back.w.shape], [[1, 2, 6], [4, 2, 3]]);
});
