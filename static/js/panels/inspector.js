// The inspector: a cell's story (model/cell-story.js) in a panel beside the stage, each
// step a button that jumps there. Drawn from the page state's `inspect` {tensor, flat}.

import { cellStory, cellFormula } from "../model/cell-story.js";
import { formatLong, formatDelta } from "../model/number-format.js";

const $ = (id) => document.getElementById(id);

function stepButton(k, onJump) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = "insp-step";
  b.textContent = `step ${k + 1}`;
  b.addEventListener("click", () => onJump(k));
  return b;
}

/** "dz[0,1,1,1] 2 · w[1,0,0,1] −1" (a product), "… + b[1] 1" (with a bias), or the sum's word. */
function factorText(factors) {
  if (!factors) return "the step's sum";
  const named = factors.map((f) => `${f.name} ${formatLong(f.value)}`);
  return named.length === 3 ? `${named[0]} · ${named[1]} + ${named[2]}` : named.join(" · ");
}

export class Inspector {
  /** onJump(step): a step of the story was chosen; onClose(): the panel was closed. */
  constructor({ onJump, onClose }) {
    this.onJump = onJump;
    this.shown = null;
    $("insp-close").addEventListener("click", onClose);
  }

  /** Show the story of state.inspect on `model` (close the panel when it is null). */
  draw(model, inspect) {
    const d = $("inspector");
    const key = inspect && model ? `${inspect.tensor}/${inspect.flat}` : null;
    if (!key) {
      if (d.open) d.close();
      this.shown = null;
      return;
    }
    if (key === this.shown && d.open) return;
    this.shown = key;
    const story = cellStory(model, inspect.tensor, inspect.flat);
    $("insp-title").textContent = `${story.cell} = ${formatLong(story.value)}`;
    $("insp-via").textContent = story.via ? `copied from ${story.via.name}: its story` : "";
    const closed = cellFormula(model, inspect.tensor, inspect.flat);
    $("insp-formula").hidden = !closed;
    $("insp-formula").textContent = closed ? `${closed.formula}, with ${closed.where}` : "";
    $("insp-torch").hidden = !closed || !closed.torch.length;
    $("insp-torch-code").textContent = closed ? closed.torch.join("\n") : "";
    const items = [];
    let sum = 0;
    for (const w of story.writes) {
      sum += w.delta;
      const li = document.createElement("li");
      li.append(stepButton(w.event, this.onJump), ` ${w.phase}: ${factorText(w.factors)} → ${formatDelta(w.delta)}, now ${formatLong(sum)}`);
      items.push(li);
    }
    if (!story.writes.length) {
      for (const r of story.reads.slice(0, 60)) {
        const li = document.createElement("li");
        li.append(stepButton(r.event, this.onJump), ` ${r.phase}: read, fed ${r.fed.join(", ")}${r.fed.length >= 4 ? " …" : ""}`);
        items.push(li);
      }
    }
    $("insp-steps").replaceChildren(...items);
    $("insp-sum").textContent = story.writes.length
      ? `${story.writes.length} contribution${story.writes.length === 1 ? "" : "s"}, summing to ${formatLong(sum)}`
      : `no step writes it; ${story.reads.length} step${story.reads.length === 1 ? "" : "s"} read it`;
    if (!d.open) d.show();
  }
}
