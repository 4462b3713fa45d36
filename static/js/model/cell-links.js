// A cell's links across one phase (ezyang-style hover): the cells that the phase's
// steps writing it read, and the cells that the phase's steps reading it write. Pure:
// from the compiled events (model/trace-model.js) alone, so it names no tensor.

/** {tensor: Set of flat indices} with `flats` added under `tensor`. */
function add(into, tensor, flats) {
  let set = into.get(tensor);
  if (!set) into.set(tensor, (set = new Set()));
  for (const f of flats) set.add(f);
}

/**
 * The links of cell `flat` of `tensor` over events `start`..`stop`-1 of `model`:
 * {from: Map tensor -> Set (what the steps that write it read), to: Map tensor -> Set
 * (what the steps that read it write), steps: how many steps touch it}. A step both
 * reading and writing the cell (an accumulation) counts on both sides.
 */
export function cellLinks(model, start, stop, tensor, flat) {
  const from = new Map();
  const to = new Map();
  let steps = 0;
  for (let k = Math.max(0, start); k < Math.min(stop, model.compiled.length); k++) {
    const ev = model.compiled[k];
    const writes = ev.writes.some((w) => w.tensor === tensor && w.idx.includes(flat));
    const reads = ev.reads.some((r) => r.tensor === tensor && r.idx.includes(flat));
    if (!writes && !reads) continue;
    steps += 1;
    if (writes) for (const r of ev.reads) add(from, r.tensor, r.idx);
    if (reads) for (const w of ev.writes) add(to, w.tensor, w.idx);
  }
  return { from, to, steps };
}
