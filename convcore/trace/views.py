"""The view plug-in interface: how a view (direct, im2col, transposed) joins the engine.

A view is an object registered with ``register_view(view)``; it says which steps
compute the forward pass and the backward pass. Everything else — config parsing,
the reference results, the shared phases (pad, activation, activation grad, crop),
the header, phase boundaries, streaming, replay, NHWC — is the engine's.

A view provides:

``name``                       the config's ``view`` value, e.g. ``"im2col"``
``title``                      its name for people, e.g. ``"direct loops"``
``letters``                    ``{granularity: loop letters}`` for each ``granularity`` it
                               supports (direct: {"window": "nfij", "mac": "nfijckl"}):
                               ``granularities`` and ``loop_letters(granularity)`` read it;
                               the letters are also the default ``loop_order``, and
                               ``loop_order`` and ``dx_loop_order`` must be permutations of them
``extra_tensors(rc, ref)``     ``{name: (array in internal order, role)}``: the intermediates
                               the view names beyond the shared ones (im2col: ``cols``,
                               ``dcols``; register their kind in ``axes.TENSOR_KINDS``).
                               ``ref`` holds the shared reference arrays (below).
``extra_shapes(spec)``         ``{name: shape}`` of those tensors from the ConvSpec alone
                               (a server's size limits read it before computing)
``forward_phases(rc)``         ``[Phase]`` from z's point of view: events that write ``z``
``backward_phases(rc)``        ``[Phase]``: events that read ``dz`` and write ``db`` (when
                               there is a bias), ``dw`` and ``dxp`` (and any view tensor)

``Phase(name, count, events)``: ``count`` is the exact number of events, from the
resolved config alone (no arithmetic on tensors) — the header's phase boundaries and
``count_events`` come from it, before anything is generated; ``events(ctx)`` returns a
lazy iterator of event dicts, ``ctx`` being an ``events.TraceContext``.

An event is a ``model.Event`` (``{"phase", "loop", "reads", "writes", "text"}``) made by
``model.make_event``, with the context: ``ctx.box`` for reads, ``ctx.write`` /
``ctx.write_cell`` for writes (they keep the running state that fills ``value`` and
convert to NHWC at the edge; a generator that makes Writes in bulk uses
``model.make_write`` with ``ctx.order`` / ``ctx.block_order``),
``ctx.text`` / ``ctx.cell_text`` for the text, ``ctx.cells(name)`` for per-cell tables
in hot loops (released between phases), ``ctx.memo`` for objects a view shares between
its own phases, ``events.running_sums`` and ``format.number_list`` to compute running
values and their text for a whole chunk of events at once. Generators work in internal
order (NCHW, OIHW) and read the reference
arrays ``ctx.ref[name]``: x, xp, w, b (when there is a bias), z, out, dout, dz, db
(when there is a bias), dw, dxp, dx, plus the view's extra tensors.

Rules every view obeys (``tests/test_trace_rules.py`` checks each one; add the view's
configs to ``RULE_CONFIGS`` there): only inputs are unwritten; replaying the writes
reproduces every written tensor; ``value`` is the running state; forward window events
read exactly the receptive field; the counts are exact; generation is lazy; NHWC is
NCHW transposed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .model import Event

__all__ = ["Phase", "View", "get_view", "register_view", "view_names"]


@dataclass(frozen=True)
class Phase:
    """One named phase: its exact event count, the generator of its events and the
    letters of its events' ``loop`` (None: the view's letters at the granularity; "":
    none, a phase of one step)."""

    name: str
    count: int
    events: Callable[[Any], Iterator[Event]]
    letters: str | None = None


class View:
    """Base class of views; subclasses set ``name`` and ``letters`` and override the
    phase methods (and the extra tensors, if they name any)."""

    name: str = ""
    title: str = ""  # its name for people ("direct loops"), as a page's menu shows it
    letters: dict[str, str] = {}

    @property
    def granularities(self) -> tuple[str, ...]:
        return tuple(self.letters)

    def loop_letters(self, granularity: str) -> str:
        return self.letters[granularity]

    def extra_tensors(self, rc: Any, ref: dict) -> dict[str, tuple[Any, str]]:
        return {}

    def extra_shapes(self, spec: Any) -> dict[str, tuple[int, ...]]:
        """The shapes of ``extra_tensors`` from the geometry alone (a ConvSpec), so that a
        server can hold them to its size limits before anything is computed."""
        return {}

    def forward_phases(self, rc: Any) -> list[Phase]:
        raise NotImplementedError

    def backward_phases(self, rc: Any) -> list[Phase]:
        raise NotImplementedError


_VIEWS: dict[str, View] = {}


def register_view(view: View) -> View:
    _VIEWS[view.name] = view
    return view


def get_view(name: str) -> View | None:
    return _VIEWS.get(name)


def view_names() -> list[str]:
    return list(_VIEWS)
