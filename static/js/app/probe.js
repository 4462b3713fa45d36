// Frame timing for tests and benchmarks: js/io/debug.js (loaded on ?debug only) hooks
// into it; the redraw and the trace stream report to it. Without ?debug it only notes
// two times.

export class Probe {
  constructor() {
    this.onFrame = null; // (ms, frame) after each frame drawn
    this.part = null; // (name, start) per part of a frame: bench/page.py's breakdown
    this.measureLayout = false; // include style and layout in a frame's time
    this.runStartedAt = 0;
    this.firstStepDrawnAt = 0;
  }

  /** Set the hooks given (io/debug.js). */
  hook({ onFrame = this.onFrame, part = this.part, measureLayout = this.measureLayout }) {
    this.onFrame = onFrame;
    this.part = part;
    this.measureLayout = measureLayout;
  }

  /** A trace request starts: the time to its first step drawn is measured from here. */
  runStarted() {
    this.runStartedAt = performance.now();
    this.firstStepDrawnAt = 0;
  }

  /** A frame was drawn in `ms`, showing `frame`. */
  frameDrawn(ms, frame) {
    if (frame.step >= 0 && !this.firstStepDrawnAt) this.firstStepDrawnAt = performance.now();
    this.onFrame?.(ms, frame);
  }
}
