// Follow mode on the page (server/follow/, docs/service.md): a teacher's page opens a
// session and publishes its place; a student's page follows the session's states as
// Server-Sent Events, breaks away and rejoins. The secret stays in this object, in this
// page: never in the state, the address or a student's page.

import { getJson, sendJson, ApiError } from "./api.js";

/** The pauses (ms) before a lost publication is sent again; then the session is given up. */
const RETRIES = [250, 500, 1000, 2000, 4000, 4000];

export class Classroom {
  /** onState(place): the teacher's place arrived (a student following);
   *  onChange(follow): the session's public facts changed (for the page state). */
  constructor({ onState, onChange }) {
    this.onState = onState;
    this.onChange = onChange;
    this.teacher = null; // {session, secret, driver, code, url}
    this.student = null; // {code, eventsPath, source}
    this.pending = null; // the latest place not yet published
    this.sending = false;
    this.failures = 0; // publications lost in a row
  }

  /** Open a session with the page's `place`; the class joins at the URL it shows. */
  async start(place) {
    const s = await sendJson("POST", "/api/follow/sessions", { state: place });
    // (convscope serve --classroom gives the link on the machine's network address)
    const url = s.join_url ?? new URL(s.join_path, location.href).href;
    this.teacher = { session: s.session, secret: s.secret, driver: s.driver, code: s.code, url };
    this.onChange({ role: "teacher", code: s.code, url });
  }

  /** Publish the teacher's place: the latest wins, one request at a time. */
  publish(place) {
    if (!this.teacher) return;
    this.pending = place;
    if (!this.sending) this._send();
  }

  async _send() {
    this.sending = true;
    try {
      while (this.pending && this.teacher) {
        const state = this.pending;
        this.pending = null;
        const t = this.teacher;
        try {
          await sendJson("PUT", `/api/follow/sessions/${t.session}/state`, { secret: t.secret, driver: t.driver, state });
          this.failures = 0;
        } catch (err) {
          // a refusal ends the session (409: another page took over; 404: it ended, idle;
          // 403: not its secret); a lost request (a worker restarting, the network, 5xx,
          // 429) is sent again, the latest place first, a few times with a growing pause
          const refused = err instanceof ApiError && [403, 404, 409, 422].includes(err.status);
          this.failures += 1;
          if (refused || this.failures > RETRIES.length) {
            this.teacher = null;
            this.onChange({ role: "ended", message: `The class session stopped: ${err.message}` });
          } else {
            if (!this.pending) this.pending = state;
            await new Promise((done) => setTimeout(done, RETRIES[this.failures - 1]));
          }
        }
      }
    } finally {
      this.sending = false;
    }
  }

  async end() {
    const t = this.teacher;
    this.teacher = null;
    if (t) await sendJson("POST", `/api/follow/sessions/${t.session}/end`, { secret: t.secret }).catch(() => {});
    this.onChange(null);
  }

  /** Follow the session of join `code` (the teacher's current place arrives at once). */
  async join(code) {
    const j = await getJson(`/api/follow/join/${encodeURIComponent(code)}`);
    this.student = { code: j.code, eventsPath: j.events_path, source: null };
    this.rejoin();
  }

  /** Stop following (the page is the student's again); the session goes on. */
  breakAway() {
    if (!this.student) return;
    if (this.student.source) this.student.source.close();
    this.student.source = null;
    this.onChange({ role: "student", code: this.student.code, following: false });
  }

  /** Follow again: the server sends the teacher's current place first. */
  rejoin() {
    const st = this.student;
    if (!st || st.source) return;
    const source = new EventSource(st.eventsPath);
    st.source = source;
    source.addEventListener("state", (e) => {
      if (st.source !== source) return;
      this.onState(JSON.parse(e.data).state);
    });
    source.addEventListener("end", () => {
      source.close();
      st.source = null;
      this.student = null;
      this.onChange({ role: "ended", message: "The teacher ended the class session." });
    });
    this.onChange({ role: "student", code: st.code, following: true });
  }
}
