// Everything around the stage, drawn from the page state and the frame: the step panel,
// the transport, the badge and the stale banner, the lesson's line, the page's modes.
// Each draw writes only what differs from what it last wrote.

import { staleReason } from "../model/page-state.js";
import { SPEEDS } from "../model/player.js";
import { loopbackOnly } from "../io/classroom.js";

/** What a student's follow bar says, by the page's follow status. */
const STUDENT_WORDS = {
  following: (code) => `Following the teacher's screen (session ${code}).`,
  away: (code) => `The teacher has left (nothing heard from session ${code} for 10 s): this page keeps the last step and follows again when the teacher is back.`,
  reconnecting: (code) => `Reconnecting to the class session ${code}… (the last step stays on screen)`,
  exploring: (code) => `Exploring on your own (session ${code}).`,
};
import { mistakeLessonName } from "../model/lab.js";

const $ = (id) => document.getElementById(id);

/** Set `el.textContent` (or a property/attribute) only when it differs. */
function text(el, value) {
  if (el.textContent !== value) el.textContent = value;
}

export class Chrome {
  constructor() {
    this.panelEvent = undefined;
    this.lessonKey = undefined;
    this.legendModel = undefined;
    this.narrated = "";
    this.joinQr = null; // the join QR code's image, made once
  }

  /** The step panel for `frame` (once per event; narrated when not playing fast). */
  drawPanel(frame, state, pending = "") {
    if (frame.event === this.panelEvent && !pending) return "";
    this.panelEvent = frame.event;
    const p = frame.panel;
    text($("eq-phase"), p.phase);
    text($("eq-loop"), p.loop);
    text($("eq-text"), p.text);
    const spans = p.writes.map((w) => {
      const s = document.createElement("span");
      s.className = "w";
      s.textContent = w;
      return s;
    });
    if (p.more) spans.push(document.createTextNode(`… ${p.more} more cells`));
    $("eq-writes").replaceChildren(...spans);
    // (projector mode leaves out a long list: the written cells show their values on the stage)
    $("equation").classList.toggle("many-writes", p.writes.length + p.more > 4);
    text($("eq-reads"), p.reads);
    if (frame.event && (!state.playing || SPEEDS[state.speedIndex] <= 2)) {
      const said = `${pending ? `${pending}. ` : ""}${p.narration}`;
      this.narrate(said);
      return said;
    }
    return "";
  }

  /** The next drawPanel narrates its step again (a pause, a new trace). */
  renarrate() {
    this.panelEvent = undefined;
  }

  /** An empty panel: no trace on show. */
  drawNoTrace() {
    this.panelEvent = undefined;
    text($("eq-phase"), "–");
    text($("eq-loop"), "");
    text($("eq-text"), "No trace: fix the setup and it runs again.");
    $("eq-writes").replaceChildren();
    text($("eq-reads"), "");
  }

  /** The toast: a notice for a few seconds ("" hides it). */
  drawToast(said) {
    const t = $("toast");
    text(t, said);
    t.hidden = !said;
  }

  /** The page could not start (its controls did not load): said in the step panel. */
  drawStartError(said) {
    text($("eq-text"), said);
  }

  narrate(said) {
    this.narrated = said;
    text($("narration"), said);
  }

  drawTransport(frame, state) {
    const t = frame.transport;
    const sc = $("scrubber");
    if (sc.max !== String(t.max)) sc.max = String(t.max);
    if (document.activeElement !== sc || !state.scrubbing) sc.value = String(t.value);
    const loaded = `${t.loaded}%`;
    if ($("scrub-loaded").style.width !== loaded) $("scrub-loaded").style.width = loaded;
    text($("step-counter"), t.counter);
    if (sc.getAttribute("aria-valuetext") !== t.valuetext) sc.setAttribute("aria-valuetext", t.valuetext);
    const play = $("btn-play");
    if (play.textContent !== t.playLabel) {
      play.textContent = t.playLabel;
      play.setAttribute("aria-label", t.playAria);
    }
  }

  /** The badge, and the stage's banner when what is drawn is not what the form says. */
  drawBadge(state) {
    const why = staleReason(state);
    const banner = $("stale");
    banner.hidden = !why;
    if (why) text(banner, `Showing the last good trace, not the form: ${why}.`);
    const b = $("badge");
    const { state: kind, text: said, title, short } = state.badge;
    b.dataset.state = why ? "stale" : kind;
    text(b, why ? `last good trace, not the form · ${said}` : said);
    // (a projector's one-line bar shows these words instead: style.css)
    const brief = why ? "not the form" : (short ?? said);
    if (b.dataset.short !== brief) b.dataset.short = brief;
    if (b.title !== title) b.title = title;
  }

  drawProgress(state) {
    const t = state.trace;
    const what =
      state.run === "tracing" ? "Computing the trace…" : state.run === "streaming" && t && !t.complete ? `Streaming ${t.received} of ${t.model.total} steps…` : "";
    $("progress").hidden = !what;
    if (what) text($("progress-text"), what);
  }

  /** The lesson menu (the lessons, then the "Common mistakes" group), its choice, and the
   *  lesson's title and whole description. A mistake's lesson stays chosen while its
   *  setup is changed (the config still names the mistake). */
  drawLesson(state) {
    const mistake = state.config && state.config.mistake ? mistakeLessonName(state.config.mistake) : "";
    const chosen = state.lesson || mistake;
    const key = `${chosen}|${state.lesson}|${state.lessons.length}`;
    if (key === this.lessonKey) return;
    this.lessonKey = key;
    const sel = $("preset");
    if (sel.options.length <= 1 && state.lessons.length) {
      const groups = { lessons: sel, mistakes: null };
      for (const p of state.lessons) {
        let into = groups[p.group ?? "lessons"];
        if (!into) into = groups[p.group] = sel.appendChild(Object.assign(document.createElement("optgroup"), { label: "Common mistakes" }));
        into.append(new Option(p.title, p.name));
      }
    }
    sel.value = chosen;
    const p = state.lessons.find((q) => q.name === chosen);
    // (a narrow menu cuts a long title: it ends in an ellipsis, and is whole on hover)
    sel.title = p ? p.title : "";
    const line = $("preset-sentence");
    line.replaceChildren();
    if (p) {
      const title = document.createElement("strong");
      title.className = "preset-title";
      title.textContent = p.title;
      const own = !state.lesson && mistake ? " (your setup: change it to see when the mistake shows and when it hides)" : "";
      line.append(title, ` — ${p.sentence}${own}`);
    }
  }

  /** The legend names only the marks this trace's header uses, and the loop letters its
   *  steps show, in words (the header's loop_names). */
  drawLegend(model) {
    if (model === this.legendModel) return;
    this.legendModel = model;
    const words = Object.entries((model && model.header.loop_names) || {});
    $("legend-loops").hidden = !words.length;
    $("legend-loops").textContent = words.map(([k, w]) => `${k} = ${w}`).join(" · ");
    $("eq-loop").title = words.map(([k, w]) => `${k} = ${w}`).join(", ");
    const kinds = new Set(Object.values(model ? model.tensors : {}).flatMap((t) => (t.marks ? Array.from(t.marks.join("")) : [])));
    $("legend-pad").hidden = !kinds.has("p") && !kinds.has("g");
    $("legend-gap").hidden = !kinds.has("z");
    $("legend-unread").hidden = !kinds.has("u") && !kinds.has("n");
  }

  _joinQr(src, url) {
    this.joinQr ??= Object.assign(document.createElement("img"), { className: "join-qr" });
    if (this.joinQr.getAttribute("src") !== src) this.joinQr.src = src;
    this.joinQr.alt = `QR code of ${url}`;
    return this.joinQr;
  }

  /** Follow mode's bar: the join code and URL on the teacher's page; following or
   *  exploring on a student's. Returns the action its button does ("" none). */
  drawFollow(state) {
    const f = state.follow;
    const bar = $("follow-bar");
    bar.hidden = !f;
    $("class-session").hidden = Boolean(f && f.role !== "ended");
    if (!f) return;
    const said = $("follow-text");
    const button = $("follow-action");
    $("follow-ask").hidden = f.role !== "teacher";
    if (f.role === "teacher") {
      const code = document.createElement("span");
      code.className = "join-code";
      code.textContent = f.code;
      // the link as a QR code the class can scan from the screen (an SVG the server draws),
      // one image kept across draws so that a redraw neither reloads nor blinks it
      const qr = f.qr ? [this._joinQr(f.qr, f.url)] : [];
      said.replaceChildren(...qr, "Class session: students open ", Object.assign(document.createElement("code"), { textContent: f.url }), " or join with ", code);
      if (f.followers != null) said.append(Object.assign(document.createElement("span"), { className: "join-count", textContent: ` · ${f.followers} following` }));
      if (loopbackOnly(f.url)) {
        const warn = document.createElement("strong");
        warn.className = "join-warning";
        warn.textContent = " This link reaches no student: it names this computer only. Start ConvScope with convscope serve --classroom (or make run HOST=0.0.0.0) and press Class again.";
        said.append(warn);
      }
      if (f.trouble) said.append(Object.assign(document.createElement("strong"), { className: "join-warning", textContent: ` ${f.trouble}` }));
      button.textContent = "End session";
      button.dataset.does = "end";
    } else if (f.role === "student") {
      said.textContent = STUDENT_WORDS[f.status ?? (f.following ? "following" : "exploring")](f.code);
      said.dataset.status = f.status ?? "";
      button.textContent = f.following ? "Break away (B)" : "Rejoin the teacher (B)";
      button.dataset.does = f.following ? "breakAway" : "rejoin";
    } else {
      said.textContent = f.message;
      button.textContent = "Close";
      button.dataset.does = "dismiss";
    }
  }

  /** The page's modes: projector, the drawer, "All tensors", the speed menu. */
  drawModes(state) {
    document.body.classList.toggle("projector", state.projector);
    document.documentElement.classList.toggle("projector", state.projector);
    $("projector").setAttribute("aria-pressed", String(state.projector));
    document.body.classList.toggle("setup-closed", !state.setupOpen);
    $("toggle-setup").setAttribute("aria-expanded", String(state.setupOpen));
    $("all-tensors").setAttribute("aria-pressed", String(state.allTensors));
    $("code-toggle").setAttribute("aria-pressed", String(state.codeOpen));
    $("predict-toggle").setAttribute("aria-pressed", String(state.predict));
    const speed = $("speed");
    if (speed.value !== String(state.speedIndex)) speed.value = String(state.speedIndex);
  }
}
