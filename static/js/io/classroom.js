// Follow mode on the page (server/follow/, docs/service.md): a teacher's page opens a
// session and publishes its place; a student's page follows the session's states as
// Server-Sent Events, breaks away and rejoins. The secret stays in this object and in
// this tab's session storage (so that a reload keeps the session): never in the state,
// the address or a student's page.
//
// It survives a lecture: the teacher's page resumes its session after a reload and
// says so when the server cannot take its states (it keeps trying); a student's page
// says when the teacher has gone quiet (no state, not even the heartbeat, for
// AWAY_MS), reconnects by itself with a growing pause when its stream is lost, and
// applies the teacher's places one at a time, the latest winning, each once its
// lesson's trace is loaded.

import { getJson, sendJson, ApiError } from "./api.js";
import { teacherToken } from "./teacher-token.js";

/** The pauses (ms) before a lost publication is sent again (the last one repeats). */
const RETRIES = [250, 500, 1000, 2000, 4000, 5000];
/** The least time (ms) between two publications: the latest place waits (the server
 *  takes 20 states a second per session; a play at top speed makes far more). */
const PUBLISH_GAP = 100;
/** A quiet teacher's page says it is there this often (ms): the place again. */
const HEARTBEAT = 4000;
/** A publication whose reply has not come in this long (ms) is given up and the latest
 *  place sent again: a connection dropped without a word (a room's Wi-Fi) would
 *  otherwise hold every later step, and the heartbeat, for minutes. */
const PUBLISH_DEADLINE = 8000;
/** A student's page that heard nothing for this long (ms) says the teacher has left. */
const AWAY_MS = 10000;
/** The pauses (ms) before a lost stream is opened again (the last one repeats). */
const RECONNECTS = [1000, 2000, 4000, 8000, 10000];
/** Where this tab keeps its teacher session (a reload resumes it). */
const KEPT = "convscope.classSession";

/** Whether a join link reaches only the machine that shows it (a loopback address). */
export function loopbackOnly(url) {
  let host;
  try {
    host = new URL(url).hostname;
  } catch {
    return false;
  }
  return host === "localhost" || host === "[::1]" || host === "::1" || /^127\./.test(host);
}

/** The words of a follow state's trouble or presence, for the bar (pure). */
export function studentStatus({ following, away, reconnecting }) {
  if (!following) return "exploring";
  if (reconnecting) return "reconnecting";
  return away ? "away" : "following";
}

export class Classroom {
  /** onState(place): the teacher's place arrived (a student following): may return a
   *  promise, and the next place waits for it; onChange(follow): the session's public
   *  facts changed (for the page state). */
  constructor({ onState, onChange, storage = globalThis.sessionStorage }) {
    this.onState = onState;
    this.onChange = onChange;
    this.storage = storage;
    this.teacher = null; // {session, secret, driver, code, url}
    this.student = null; // {code, eventsPath, source, lastHeard, away, reconnecting, tries}
    this.pending = null; // the latest place not yet published
    this.place = null; // the latest place published (the heartbeat sends it again)
    this.sending = false;
    this.failures = 0; // publications lost in a row
    this.followers = null; // the students' pages following, as the server last said
    this.lastSent = 0; // when the last publication left (ms)
    this.wanted = null; // the latest teacher's place not yet applied (a student)
    this.applying = false;
    this.timer = null; // the heartbeat's or the watchdog's interval
  }

  // ---- the teacher's page ------------------------------------------------------------

  /** Open a session with the page's `place`; the class joins at the URL it shows. */
  async start(place) {
    const token = teacherToken();
    const s = await sendJson("POST", "/api/follow/sessions", { state: place }, token ? { Authorization: `Bearer ${token}` } : {});
    // the link and its QR code as the server makes them (convscope serve --classroom: on
    // the machine's network address)
    this._teach({ session: s.session, secret: s.secret, driver: s.driver, code: s.code, url: s.join_url, qr: s.join_qr_path });
    this.place = place;
    this.lastSent = Date.now();
  }

  /** After a reload: take the session this tab kept back, and publish `place` to it.
   *  Resolves true when it did; a session that has ended is forgotten. */
  async resume(place) {
    let kept = null;
    try {
      kept = JSON.parse(this.storage.getItem(KEPT) ?? "null");
    } catch {
      kept = null;
    }
    if (!kept || !kept.session || !kept.secret) return false;
    try {
      const { driver } = await sendJson("POST", `/api/follow/sessions/${kept.session}/takeover`, { secret: kept.secret });
      this._teach({ ...kept, driver });
    } catch (err) {
      if (err instanceof ApiError && [403, 404].includes(err.status)) this._forget();
      this.onChange({ role: "ended", message: `The class session ${kept.code} could not be resumed: ${err.message}` });
      return false;
    }
    this.publish(place);
    return true;
  }

  _teach(teacher) {
    this.teacher = teacher;
    try {
      this.storage.setItem(KEPT, JSON.stringify({ session: teacher.session, secret: teacher.secret, code: teacher.code, url: teacher.url, qr: teacher.qr }));
    } catch {
      /* storage refused: a reload ends the session for this page */
    }
    clearInterval(this.timer);
    this.timer = setInterval(() => {
      if (this.teacher && this.place && !this.sending && Date.now() - this.lastSent >= HEARTBEAT) this.publish(this.place);
    }, 1000);
    this._teacherChanged();
  }

  _teacherChanged(trouble = null) {
    const t = this.teacher;
    this.onChange({ role: "teacher", code: t.code, url: t.url, qr: t.qr ?? null, followers: this.followers, trouble });
  }

  _forget() {
    try {
      this.storage.removeItem(KEPT);
    } catch {
      /* nothing kept */
    }
  }

  /** Publish the teacher's place: the latest wins, one request at a time. */
  publish(place) {
    if (!this.teacher) return;
    this.pending = place;
    this.place = place;
    if (!this.sending) this._send();
  }

  async _send() {
    this.sending = true;
    try {
      while (this.pending && this.teacher) {
        const rest = this.lastSent + PUBLISH_GAP - Date.now();
        if (rest > 0) await new Promise((done) => setTimeout(done, rest)); // (the latest place is sent then)
        if (!this.pending || !this.teacher) break;
        const state = this.pending;
        this.pending = null;
        const t = this.teacher;
        this.lastSent = Date.now();
        try {
          const { followers } = await sendJson("PUT", `/api/follow/sessions/${t.session}/state`, { secret: t.secret, driver: t.driver, state }, {}, PUBLISH_DEADLINE);
          const changed = this.failures > 0 || followers !== this.followers;
          this.failures = 0;
          this.followers = followers;
          if (changed && this.teacher === t) this._teacherChanged();
        } catch (err) {
          // a refusal ends the session (409: another page took over; 404: it ended, idle;
          // 403: not its secret); a lost request (a worker restarting, the network, the
          // session store down: 5xx, 429; no reply by PUBLISH_DEADLINE) is sent again,
          // the latest place first, with a growing pause, for as long as it takes; the
          // bar says so meanwhile
          const refused = err instanceof ApiError && [403, 404, 409, 422].includes(err.status);
          if (this.teacher !== t) {
            // an answer about a session this page has left (ended, or opened another)
          } else if (err instanceof ApiError && err.status === 413) {
            // this place is too large to send (a custom setup past the state limit): not
            // sent again; the session goes on and the next place is sent as usual
            if (this.place === state) this.place = null;
            this._teacherChanged(`This setup is too large to share with the class (${err.message}); the class stays on the last one.`);
          } else if (refused) {
            this.teacher = null;
            this._forget();
            clearInterval(this.timer);
            this.onChange({ role: "ended", message: `The class session stopped: ${err.message}` });
          } else {
            this.failures += 1;
            if (this.failures === 2) this._teacherChanged(`The server is not taking this page's steps (${err.message}); trying again…`);
            if (!this.pending) this.pending = state;
            await new Promise((done) => setTimeout(done, RETRIES[Math.min(this.failures, RETRIES.length) - 1]));
          }
        }
      }
    } finally {
      this.sending = false;
    }
  }

  // ---- a class question (server/follow/question_routes.py) ----------------------------

  /** The teacher's page asks the class question `index` of `step` of `config`'s trace:
   *  {question (its number), asked (with its answer)}. */
  askClass(config, step, index) {
    const t = this._teaching();
    return sendJson("POST", `/api/follow/sessions/${t.session}/questions`, { secret: t.secret, driver: t.driver, config, step, index });
  }

  /** How many answered question `n` (the answers once it is closed). */
  tally(n) {
    const t = this._teaching();
    return sendJson("POST", `/api/follow/sessions/${t.session}/questions/${n}/tally`, { secret: t.secret });
  }

  /** Close question `n` to answers: its answers. */
  closeQuestion(n) {
    const t = this._teaching();
    return sendJson("POST", `/api/follow/sessions/${t.session}/questions/${n}/close`, { secret: t.secret, driver: t.driver });
  }

  _teaching() {
    if (!this.teacher) throw new Error("this page runs no class session");
    return this.teacher;
  }

  /** A student's page answers question `n` of the session it follows (once: `voter` is
   *  this page's token). */
  answerClass(n, voter, given) {
    const st = this.student;
    if (!st) throw new Error("this page follows no class session");
    return sendJson("POST", `${st.eventsPath.replace(/\/events$/, "")}/questions/${n}/answers`, { voter, given });
  }

  async end() {
    const t = this.teacher;
    this.teacher = null;
    this._forget();
    clearInterval(this.timer);
    if (t) await sendJson("POST", `/api/follow/sessions/${t.session}/end`, { secret: t.secret }).catch(() => {});
    this.onChange(null);
  }

  // ---- a student's page ----------------------------------------------------------------

  /** Follow the session of join `code` (the teacher's current place arrives at once). */
  async join(code) {
    const j = await getJson(`/api/follow/join/${encodeURIComponent(code)}`);
    this.student = { code: j.code, eventsPath: j.events_path, source: null, lastHeard: Date.now(), away: false, reconnecting: false, tries: 0 };
    clearInterval(this.timer);
    this.timer = setInterval(() => this._watch(), 1000);
    this.rejoin();
  }

  _studentChanged() {
    const st = this.student;
    const following = Boolean(st.source);
    this.onChange({ role: "student", code: st.code, following, status: studentStatus({ following, away: st.away, reconnecting: st.reconnecting }) });
  }

  /** Every second: a following page that heard nothing for AWAY_MS says so. */
  _watch() {
    const st = this.student;
    if (!st || !st.source || st.reconnecting) return;
    const away = Date.now() - st.lastHeard > AWAY_MS;
    if (away !== st.away) {
      st.away = away;
      this._studentChanged();
    }
  }

  /** Stop following (the page is the student's again); the session goes on. */
  breakAway() {
    const st = this.student;
    if (!st || !st.source) return;
    st.source.close();
    st.source = null;
    clearTimeout(st.retry);
    this.wanted = null;
    this._studentChanged();
  }

  /** Follow again: the server sends the teacher's current place first. */
  rejoin() {
    const st = this.student;
    if (!st || st.source) return;
    const source = new EventSource(st.eventsPath);
    st.source = source;
    st.lastHeard = Date.now();
    source.addEventListener("state", (e) => {
      if (st.source !== source) return;
      st.lastHeard = Date.now();
      st.tries = 0;
      if (st.away || st.reconnecting) {
        st.away = st.reconnecting = false;
        this._studentChanged();
      }
      this._deliver(JSON.parse(e.data).state);
    });
    source.addEventListener("end", (e) => {
      if (st.source !== source) return;
      source.close();
      let reason = "ended";
      try {
        reason = JSON.parse(e.data).reason ?? reason;
      } catch {
        /* an end without words */
      }
      if (reason === "shutdown") this._lost(source); // the server restarts: come back with it
      else this._ended(reason === "expired" ? "The class session ended: the teacher was away too long." : "The teacher ended the class session.");
    });
    source.addEventListener("open", () => {
      if (st.source === source && st.reconnecting) {
        st.reconnecting = false;
        st.tries = 0;
        this._studentChanged();
      }
    });
    source.addEventListener("error", () => {
      // the browser reconnects a dropped stream by itself (the server asks for 1 s);
      // a refused one (the server or its session store down) it gives up: this does not
      if (st.source !== source) return;
      if (source.readyState === EventSource.CLOSED) this._lost(source);
      else if (!st.reconnecting) {
        st.reconnecting = true;
        this._studentChanged();
      }
    });
    this._studentChanged();
  }

  /** The stream is gone: ask whether the session still is, then open it again after a
   *  growing pause (the last place stays on screen meanwhile). */
  _lost(source) {
    source.close();
    const st = this.student;
    if (!st || st.source !== source) return; // (another session's stream)
    st.reconnecting = true;
    this._studentChanged();
    const pause = RECONNECTS[Math.min(st.tries, RECONNECTS.length - 1)];
    st.tries += 1;
    clearTimeout(st.retry);
    st.retry = setTimeout(async () => {
      if (this.student !== st || st.source !== source) return; // (broke away meanwhile)
      try {
        await getJson(`/api/follow/join/${encodeURIComponent(st.code)}`);
      } catch (err) {
        if (this.student !== st || st.source !== source) return; // (broke away or rejoined meanwhile)
        if (err instanceof ApiError && err.status === 404) {
          this._ended("The class session has ended.");
          return;
        }
        this._lost(source); // the server or its store still down: again, later
        return;
      }
      if (this.student !== st || st.source !== source) return;
      st.source = null;
      this.rejoin();
    }, pause);
  }

  _ended(message) {
    const st = this.student;
    if (st && st.source) st.source.close();
    clearInterval(this.timer);
    this.student = null;
    this.wanted = null;
    this.onChange({ role: "ended", message });
  }

  /** Apply the teacher's places one at a time, the latest winning: a place that comes
   *  while a lesson loads waits for it, and only the newest of those is applied. */
  _deliver(place) {
    this.wanted = place;
    if (!this.applying) this._apply();
  }

  async _apply() {
    this.applying = true;
    try {
      while (this.wanted && this.student && this.student.source) {
        const place = this.wanted;
        this.wanted = null;
        try {
          await this.onState(place);
        } catch {
          /* the page says what went wrong; the next place is applied all the same */
        }
      }
    } finally {
      this.applying = false;
    }
  }
}
