// The badge's words: how the trace on screen was checked. Pure: the replay check's result
// and the header's facts in, {state, text, title} out (panels/chrome.js draws them).

/**
 * The badge for a whole trace. replay: {ok, maxError} (model/trace-model.js replayCheck:
 * this page replays every event's deltas and compares with the header); header.check:
 * {method, max_rel_error} when the server verified dx, dw and db against the forward
 * pass; header.mistake: a mistaken code's trace.
 * Returns {state: "ok" | "bad" | "lab", text, short, title} (short: the few words a
 * projector's one-line top bar has room for; the rest is in the title).
 */
export function badgeOf(replay, header) {
  const server = header.check ?? null;
  const err = replay.maxError === 0 ? "0" : replay.maxError.toExponential(1);
  const parts = [replay.ok ? (replay.maxError === 0 ? "replay-checked" : `replay-checked · max error ${err}`) : `replay mismatch · max error ${err}`];
  let ok = replay.ok;
  let title = "Replaying every event's deltas from zero rebuilds every tensor in the header (checked in this page).";
  if (server && Number.isFinite(server.max_rel_error)) {
    const verified = server.max_rel_error < 1e-8;
    ok = ok && verified;
    const rel = server.max_rel_error === 0 ? "0" : server.max_rel_error.toExponential(0);
    parts.push(verified ? `gradients verified to ${rel}` : `gradient mismatch ${rel}`);
    title += ` The server verified dx, dw and db with ${server.method}: largest relative error ${server.max_rel_error.toExponential(1)}.`;
  }
  const mistake = Boolean(header.mistake);
  const student = mistake && Boolean(header.mistake.student);
  const whose = student ? "your code" : "mistaken code";
  if (mistake) {
    // the replay holds for what the mistaken code computes; its results are not the truth's
    parts.unshift(whose);
    title += ` This is the ${student ? "trace of your own code" : "mistaken code's trace"}: the lab bar and the marked cells say where it differs from the truth.`;
  }
  const state = !ok ? "bad" : mistake ? "lab" : "ok";
  const short = { ok: "checked", bad: "mismatch", lab: whose }[state];
  return { state, text: parts.join(" · "), short, title: `${parts.join(" · ")}. ${title}` };
}
