// The page's one state owner: the state is replaced, never edited, by reduce(state,
// action); listeners hear (state, previous, action) after each change. No DOM.

/**
 * createStore(reduce, initial) -> {state, dispatch(action), subscribe(listener)}.
 * reduce(state, action) returns the next state (the same object when nothing changed:
 * then no listener is called).
 */
export function createStore(reduce, initial) {
  let state = initial;
  const listeners = new Set();
  let dispatching = false;
  const queue = [];
  return {
    get state() {
      return state;
    },
    /** Apply `action`; an action dispatched by a listener runs after the current one. */
    dispatch(action) {
      queue.push(action);
      if (dispatching) return state;
      dispatching = true;
      try {
        while (queue.length) {
          const a = queue.shift();
          const previous = state;
          const next = reduce(previous, a);
          if (next === previous) continue;
          state = next;
          for (const listener of listeners) listener(state, previous, a);
        }
      } finally {
        dispatching = false;
        queue.length = 0;
      }
      return state;
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
