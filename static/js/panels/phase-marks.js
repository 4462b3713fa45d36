// The scrubber's phase marks: one per non-empty phase, labelled with the longest form
// of its name that fits the mark (never a cut-off stub); the full name is in its
// tooltip and in the step panel.

/**
 * The forms of a phase name, longest first, by one rule: the name; each word of more
 * than four letters cut to its first three and a full stop; the initials (names of
 * several words); nothing.
 * "activation grad" -> ["activation grad", "act. grad", "a.g.", ""]
 */
export function phaseLabelForms(name) {
  const words = String(name).split(/\s+/).filter(Boolean);
  const short = words.map((w) => (w.length > 4 ? `${w.slice(0, 3)}.` : w)).join(" ");
  const initials = words.length > 1 ? words.map((w) => `${w[0]}.`).join("") : "";
  const forms = [words.join(" "), short, initials, ""];
  return forms.filter((f, i) => forms.indexOf(f) === i);
}

/**
 * Draw the marks of `phases` ([{name, start, stop}], `total` steps) into `host`, each
 * with the longest label form that its width holds (measured once drawn).
 */
export function drawPhaseMarks(host, phases, total) {
  host.replaceChildren();
  const span = Math.max(1, total - 1);
  const marks = [];
  for (const p of phases) {
    if (p.stop <= p.start) continue;
    const m = document.createElement("div");
    m.className = "phase-mark";
    const left = (100 * p.start) / span;
    m.style.left = `${left}%`;
    m.style.width = `${Math.max(0, Math.min(100 - left, (100 * (p.stop - p.start)) / span))}%`;
    m.title = `${p.name}: steps ${p.start + 1}–${p.stop}`;
    m.dataset.phase = p.name;
    host.append(m);
    marks.push(m);
  }
  fitPhaseMarks(host);
}

/** Give every mark in `host` the longest label form that fits its width (after a resize). */
export function fitPhaseMarks(host) {
  for (const m of host.querySelectorAll(".phase-mark")) {
    for (const form of phaseLabelForms(m.dataset.phase)) {
      m.textContent = form;
      if (m.scrollWidth <= m.clientWidth + 0.5) break;
    }
  }
}
