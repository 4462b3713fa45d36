// Timing and keys. The player only moves an integer step; drawing reads the step.

/** Steps per second, slowest first: one step every 2 s up to a thousand a second. */
export const SPEEDS = [0.5, 1, 2, 3, 5, 8, 12, 20, 30, 60, 120, 250, 500, 1000];
export const DEFAULT_SPEED = 2;

export function speedLabel(index) {
  const s = SPEEDS[index];
  return s < 1 ? `1 step / ${1 / s} s` : `${s} steps/s`;
}

/** Input types a person types into: there keys are theirs (Escape hands them back). */
const TYPED_INPUTS = new Set(["text", "number", "search", "email", "url", "tel", "password"]);

/** True when `target` is a field the user types in (text, number, textarea, editable). */
export function isTypingField(target) {
  if (!target || !target.tagName) return false;
  const tag = target.tagName.toLowerCase();
  if (tag === "textarea" || target.isContentEditable) return true;
  return tag === "input" && TYPED_INPUTS.has(String(target.type || "text").toLowerCase());
}

/**
 * The action a key press asks for, or null. The player's keys act whatever has focus
 * (a select just used, a button, the scrubber), except in a field the user types in;
 * there Escape is "leaveField" (it hands the keys back). Enter is never taken (it
 * presses a focused button).
 * event: {key, target?, ctrlKey?, metaKey?, altKey?}
 */
export function keyAction(event) {
  if (event.ctrlKey || event.metaKey || event.altKey) return null;
  if (isTypingField(event.target)) return event.key === "Escape" ? "leaveField" : null;
  switch (event.key) {
    case " ":
    case "Spacebar":
      return "toggle";
    case "ArrowRight":
    case "PageDown":
      return "next";
    case "ArrowLeft":
    case "PageUp":
      return "prev";
    case "Home":
      return "first";
    case "End":
      return "last";
    case "]":
      return "nextPhase";
    case "[":
      return "prevPhase";
    case "+":
    case "=":
      return "faster";
    case "-":
    case "−":
    case "_":
      return "slower";
    case "f":
    case "F":
      return "fullscreen";
    case "p":
    case "P":
      return "projector";
    case "?":
      return "keys";
    case "i":
    case "I":
      return "inspect";
    case "d":
    case "D":
      return "divergence";
    case "b":
    case "B":
      return "follow";
    case "c":
    case "C":
      return "code";
    case "q":
    case "Q":
      return "predict";
    case "a":
    case "A":
      return "ask";
    default:
      return null;
  }
}

export const KEY_SHEET = [
  ["Space", "play / pause"],
  ["→  or  Page Down", "next step"],
  ["←  or  Page Up", "previous step"],
  ["Home / End", "first / last step"],
  ["[  /  ]", "previous / next phase"],
  ["+  /  −", "faster / slower"],
  ["F", "full screen"],
  ["P", "projector mode"],
  ["C", "the code beside the step: the line it runs (click a line: the next step that runs it)"],
  ["Q", "Predict: each step forward is asked before it is shown (→ on a question: show it)"],
  ["Y / N", "yes / no, to a question that asks it; Enter checks the cells picked"],
  ["A", "ask the class about the next step (in a class session; → reveals the answers)"],
  ["I", "the story of a cell this step writes (or click any cell)"],
  ["D", "the first step where a mistake's code leaves the correct code (in a mistake lesson)"],
  ["B", "break away from the teacher's screen / rejoin it (in a class session)"],
  ["?", "this key sheet"],
];

/**
 * Steps to advance after `dt` ms at `speed` steps/s with carried fraction `carry`:
 * returns {steps, carry}.
 */
export function advance(dt, speed, carry) {
  const total = carry + (Math.max(0, Math.min(dt, 250)) / 1000) * speed;
  const steps = Math.floor(total);
  return { steps, carry: total - steps };
}

/**
 * A requestAnimationFrame loop that calls onSteps(n) with the whole steps due at the
 * current speed. start()/stop(); speed is read from getSpeed() every frame.
 */
export class Ticker {
  constructor({ getSpeed, onSteps, raf = globalThis.requestAnimationFrame?.bind(globalThis) }) {
    this.getSpeed = getSpeed;
    this.onSteps = onSteps;
    this.raf = raf;
    this.running = false;
    this.carry = 0;
    this.last = 0;
    this._tick = this._tick.bind(this);
  }

  start() {
    if (this.running) return;
    this.running = true;
    // the first step comes at once, then at the speed's pace
    this.carry = 1 - 1e-9;
    this.last = performance.now();
    this.raf(this._tick);
  }

  stop() {
    this.running = false;
  }

  _tick(now) {
    if (!this.running) return;
    const { steps, carry } = advance(now - this.last, this.getSpeed(), this.carry);
    this.last = now;
    this.carry = carry;
    if (steps > 0) this.onSteps(steps);
    if (this.running) this.raf(this._tick);
  }
}
