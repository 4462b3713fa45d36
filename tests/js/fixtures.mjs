// Trace fixtures for the unit tests, read from tests/fixtures/ (produced by convcore:
// tests/fixtures/make_trace_fixtures.py).
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

export const FIXTURE_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures");

export function loadFixture(name) {
  return JSON.parse(readFileSync(join(FIXTURE_DIR, name), "utf8"));
}

/** GET /api/meta as the server publishes it (tests/fixtures/page/meta.json). */
export function loadMeta() {
  return JSON.parse(readFileSync(join(FIXTURE_DIR, "page", "meta.json"), "utf8"));
}

export function fixtureNames() {
  return readdirSync(FIXTURE_DIR).filter((f) => f.endsWith(".json")).sort();
}

/** The stream header of a document (document minus events). */
export function headerOf(doc) {
  const { events, ...rest } = doc;
  return { type: "header", ...rest };
}

/** Independent replay -> {values, counts} after events 0..upto, the contract's rule: written tensors start at zero, add deltas. */
export function naiveReplay(doc, upto) {
  const state = {};
  const counts = {};
  for (const [name, t] of Object.entries(doc.tensors)) {
    if (t.role !== "input") {
      state[name] = new Array(t.data.length).fill(0);
      counts[name] = new Array(t.data.length).fill(0);
    }
  }
  const strides = (shape) => shape.map((_, a) => shape.slice(a + 1).reduce((p, v) => p * v, 1));
  for (let k = 0; k <= upto; k++) {
    for (const w of doc.events[k].writes) {
      const shape = doc.tensors[w.tensor].shape;
      const st = strides(shape);
      const cells = [];
      const rec = (a, base) => {
        if (a === shape.length) return cells.push(base);
        for (let i = w.start[a]; i < w.stop[a]; i += w.step[a]) rec(a + 1, base + i * st[a]);
      };
      rec(0, 0);
      cells.forEach((flat, i) => {
        state[w.tensor][flat] += w.delta[i];
        counts[w.tensor][flat] += 1;
      });
    }
  }
  return { values: state, counts };
}
