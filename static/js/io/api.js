// Talking to the page's own server (relative URLs only): presets and the trace stream.

import { readNdjsonBatches, consumeTrace, detailMessage } from "../model/ndjson.js";
import { embeddedLesson, embeddedPreset, canonical, replayEmbedded, EDITING_NEEDS_SERVER, QUESTIONS_NEED_SERVER } from "./lesson-file.js";

/** An Error carrying FastAPI's detail: err.status, err.detail ([{loc, msg}] or string). */
export class ApiError extends Error {
  constructor(status, detail) {
    super(detailMessage(detail));
    this.status = status;
    this.detail = detail;
  }
}

async function errorOf(response) {
  let detail = `${response.status} ${response.statusText}`;
  try {
    const body = await response.json();
    if (body && body.detail) detail = body.detail;
  } catch {
    /* not JSON */
  }
  return new ApiError(response.status, detail);
}

/** The offline lesson file of `config` (POST /api/lesson) as a Blob; it opens at `step`,
 *  with the code panel open if `code`. */
export async function fetchLessonFile(config, { name, title, sentence }, step = 0, code = false) {
  const response = await fetch("/api/lesson", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ setup: config, name, title, sentence, step, code }),
  });
  if (!response.ok) throw await errorOf(response);
  return response.blob();
}

/** Send `body` as JSON with `method` (and `headers`); the answer's JSON (null for 204).
 *  With `deadline` (ms), a reply not all in by then is given up: a NoReply error. */
export async function sendJson(method, path, body, headers = {}, deadline = 0) {
  const signal = deadline ? AbortSignal.timeout(deadline) : undefined;
  try {
    const response = await fetch(path, { method, signal, headers: { "Content-Type": "application/json", Accept: "application/json", ...headers }, body: JSON.stringify(body) });
    if (!response.ok) throw await errorOf(response);
    return response.status === 204 ? null : await response.json();
  } catch (err) {
    if (signal && signal.aborted) throw new NoReply(deadline);
    throw err;
  }
}

/** A request whose reply did not come within its deadline (a dropped connection the
 *  browser would otherwise wait on for minutes). */
export class NoReply extends Error {
  constructor(deadline) {
    super(`no reply within ${deadline / 1000} s`);
    this.deadline = deadline;
  }
}

export async function getJson(path) {
  const response = await fetch(path, { headers: { Accept: "application/json" } });
  if (!response.ok) throw await errorOf(response);
  return response.json();
}

/** The presets: [{name, title, sentence, config}] whatever the server's wrapping. */
export async function fetchPresets() {
  const lesson = embeddedLesson();
  if (lesson) return [embeddedPreset(lesson)];
  const body = await getJson("api/presets");
  const list = Array.isArray(body) ? body : body.presets ?? Object.values(body);
  return list.map((p) => ({
    name: p.name,
    title: p.title ?? p.name,
    sentence: p.teaches ?? p.sentence ?? p.description ?? "",
    config: p.config ?? null,
  }));
}

/** The mistakes catalogue as lessons (GET /api/mistakes); none in a lesson file (no server). */
export async function fetchMistakes() {
  if (embeddedLesson()) return [];
  return (await getJson("api/mistakes")).mistakes;
}

/** What the page builds its controls from (GET /api/meta: convcore's registries). */
export function fetchMeta() {
  const lesson = embeddedLesson();
  if (lesson && lesson.meta) return Promise.resolve(lesson.meta);
  return getJson("api/meta");
}

export async function fetchPreset(name) {
  const lesson = embeddedLesson();
  if (lesson) return embeddedPreset(lesson);
  const p = await getJson(`api/presets/${encodeURIComponent(name)}`);
  return { name: p.name ?? name, title: p.title ?? name, sentence: p.teaches ?? p.sentence ?? p.description ?? "", config: p.config ?? p };
}

/**
 * POST the config to the trace stream and feed its lines to the handlers
 * ({onHeader, onEvents, onEnd}); resolves when the end line has arrived. Rejects with
 * an ApiError for 4xx/5xx answers and error lines, an AbortError when aborted.
 */
export async function streamTrace(config, handlers, signal) {
  const lesson = embeddedLesson();
  if (lesson) {
    if (canonical(config) !== canonical(lesson.preset.config)) throw new ApiError(409, EDITING_NEEDS_SERVER);
    return replayEmbedded(lesson, handlers);
  }
  const response = await fetch("api/trace/stream", {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/x-ndjson" },
    body: JSON.stringify(config),
    signal,
  });
  if (!response.ok) throw await errorOf(response);
  try {
    await consumeTrace(readNdjsonBatches(response.body), handlers);
  } catch (err) {
    if (err.detail) throw new ApiError(422, err.detail);
    throw err;
  }
}

/** The questions of step `step` of `config`'s trace (POST /api/questions; a lesson file's
 *  own, which has no server to ask). */
export async function fetchQuestions(config, step) {
  const lesson = embeddedLesson();
  if (!lesson) return sendJson("POST", "api/questions", { config, step });
  if (!lesson.questions) throw new Error(QUESTIONS_NEED_SERVER);
  return lesson.questions[step] ?? [];
}

/** Field of the config a FastAPI error is about: loc ["body", "stride", ...] -> "stride". */
export function errorFields(detail) {
  const out = {};
  if (!Array.isArray(detail)) return { _: detailMessage(detail) };
  for (const d of detail) {
    const loc = Array.isArray(d.loc) ? d.loc.filter((p) => p !== "body") : [];
    const field = typeof loc[0] === "string" ? loc[0] : "_";
    out[field] = out[field] ? `${out[field]}; ${d.msg}` : d.msg;
  }
  return out;
}
