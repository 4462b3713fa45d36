// The teacher token (docs/service.md, "Follow mode"): `convscope serve` prints a teacher
// link, `/?teacher=<token>`. The page that opens it keeps the token in this browser's
// storage and takes it out of the address at once, so that no copied link, bookmark or
// student's page carries it; it is sent only to open a class session.

const KEY = "convscope.teacherToken";

/** Keep a token the address brings, and take it out of the address. */
export function adoptTeacherToken(loc = location, storage = globalThis.localStorage, history = globalThis.history) {
  const params = new URLSearchParams(loc.search);
  const token = params.get("teacher");
  if (token === null) return;
  if (token) {
    try {
      storage.setItem(KEY, token);
    } catch {
      // (storage off: the token lives only until the page is left, in the address bar no more)
      memory = token;
    }
  }
  params.delete("teacher");
  const search = params.toString();
  history.replaceState(null, "", `${loc.pathname}${search ? `?${search}` : ""}${loc.hash}`);
}

let memory = null;

/** The token this browser keeps, or null. */
export function teacherToken(storage = globalThis.localStorage) {
  try {
    return storage.getItem(KEY) ?? memory;
  } catch {
    return memory;
  }
}
