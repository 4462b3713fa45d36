"""The trace engine: every step of a conv layer's forward and backward pass as data.

```python
from convcore.trace import build_trace, iter_trace, count_events, replay
doc = build_trace(config)   # {schema, spec, tensors, phases, events, total_events}
lines = iter_trace(config)  # lazy: header, events, end
n = count_events(config)    # exact, from the spec alone
state = replay(doc)         # {name: ndarray} rebuilt from the writes
story = contributions(doc, "dx", (0, 0, 2, 3))  # the writes that made one cell
```

Modules: ``model`` (Box, Write, Event and the stream's lines: the one place they are
built), ``config`` (the config dict -> ResolvedConfig), ``views`` (the view plug-in
interface and registry), ``direct`` (the direct view: ``forward_window``,
``direct_window``, ``direct_mac``), ``im2col``, ``transposed``, ``phases`` (pad,
activation, activation grad, crop, db: the phases views share), ``windows``
(receptive fields in bulk), ``reference`` (the direct view's phases as plain loops, the
fast generators' reference), ``events`` (the context: Boxes and Writes in the trace's
layout, running state), ``format`` (numbers and indices in text), ``axes`` (tensor axes
per layout), ``loops`` (loop nests in a chosen order), ``document`` (header, stream,
counts), ``replay``, ``contributions`` (one cell's writes, in order), ``questions``
(what a step answers, asked before it is shown, and the judging of an answer). The
format is described in docs/trace-format.md.
"""

from . import direct as _direct  # noqa: F401  (registers the direct view)
from . import im2col as _im2col  # noqa: F401  (registers the im2col view)
from . import transposed as _transposed  # noqa: F401  (registers the transposed view)
from .config import DEFAULTS, ResolvedConfig, TraceConfigError, resolve_config
from .contributions import contributions
from .document import SCHEMA, build_trace, count_events, iter_trace, plan_phases, trace_header
from .replay import TraceReplayError, replay
from .views import Phase, View, register_view, view_names

__all__ = [
    "DEFAULTS",
    "Phase",
    "ResolvedConfig",
    "SCHEMA",
    "TraceConfigError",
    "TraceReplayError",
    "View",
    "build_trace",
    "contributions",
    "count_events",
    "iter_trace",
    "plan_phases",
    "register_view",
    "replay",
    "resolve_config",
    "trace_header",
    "view_names",
]
