// The trace's event model (schema convscope.trace/3) as JSDoc types: the same shapes as
// convcore/trace/model.py (Box, Write, Event) and the stream's lines. Types only; import
// them in JSDoc with  /** @typedef {import("./trace-types.js").Event} Event */

/**
 * A strided rectangle of one tensor: one entry per axis, in the header's axis order.
 * @typedef {object} Box
 * @property {string} tensor  a name of the header's `tensors`
 * @property {number[]} start
 * @property {number[]} stop
 * @property {number[]} step
 */

/**
 * A Box plus what the event adds to its cells.
 * @typedef {Box & { delta: number[], value: number[] }} Write
 *   `delta`: added to the Box's cells, row-major; `value`: those cells after the add
 */

/**
 * One step of the trace.
 * @typedef {object} Event
 * @property {string} phase  the name of a header phase
 * @property {Object<string, number>} loop  the loop indices, e.g. {n, f, i, j}
 * @property {Box[]} reads
 * @property {Write[]} writes
 * @property {string} text  the step in words and numbers
 */

/**
 * A tensor of the header.
 * @typedef {object} TensorInfo
 * @property {number[]} shape
 * @property {number[]} data  row-major, in the axis order of `axes`
 * @property {string[]} axes
 * @property {Array<string|null>} grid  the (row, column) axes the page draws
 * @property {"input"|"intermediate"|"result"} role
 * @property {string} [formula]  its cell in closed form (the tensors the layer computes)
 * @property {string} [torch]  a PyTorch expression of one cell, {axis} placeholders for its index
 */

/**
 * @typedef {object} Phase
 * @property {string} name
 * @property {number} start  the index of its first event
 * @property {number} stop   one past its last event
 */

/**
 * The trace's header: the document without its events.
 * @typedef {object} Header
 * @property {"convscope.trace/3"} schema
 * @property {Object<string, *>} spec
 * @property {Object<string, TensorInfo>} tensors
 * @property {Object<string, string>} aliases  names that are another tensor here ({xp: "x"}: no padding)
 * @property {Object<string, string>} loop_names  each loop letter in words ({i: "output row"})
 * @property {string[]} [torch_setup]  the PyTorch lines a tensor's `torch` expression runs after
 * @property {Phase[]} phases
 * @property {number} total_events
 */

/**
 * A line of the NDJSON stream: the header, one line per event (the Event's keys after
 * its tag), batched events, the end, or an error after the header.
 * @typedef {({type: "header"} & Header)
 *   | ({type: "event"} & Event)
 *   | {type: "events", events: Event[]}
 *   | {type: "end", total_events: number}
 *   | {type: "error", detail: Array<{loc: Array<string|number>, msg: string, type: string}>}} StreamLine
 */

export {};
