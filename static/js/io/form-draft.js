// The setup form's draft: what was typed there and is not on the stage (a setup edited
// but not yet traced or refused by the server, fields and cells refused here), kept in
// this tab's session storage so that a reload puts it back over the setup the address
// names. It belongs to that setup (`place`): a draft of another setup is not put back.
// (A page that cannot keep it loses it on a reload, as before.)

const DRAFT_KEY = "convscope.formDraft";

/** The setup a draft belongs to: a lesson by name, a custom setup by its config. */
export const draftPlace = ({ lesson, config }) => (lesson ? `lesson:${lesson}` : `setup:${JSON.stringify(config ?? null)}`);

/** Keep `draft` ({place, ...what the form holds}), or forget the kept one (null). */
export function keepDraft(draft) {
  try {
    if (draft) sessionStorage.setItem(DRAFT_KEY, JSON.stringify(draft));
    else sessionStorage.removeItem(DRAFT_KEY);
  } catch {
    /* storage refused (or full): a reload loses the draft */
  }
}

/** The kept draft, or null. */
export function keptDraft() {
  try {
    const text = sessionStorage.getItem(DRAFT_KEY);
    const draft = text ? JSON.parse(text) : null;
    return draft && typeof draft === "object" && typeof draft.place === "string" ? draft : null;
  } catch {
    return null;
  }
}
