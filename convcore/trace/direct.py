"""The direct view: the loops of the seeds, over output positions or single MACs.

Window granularity (loop letters n, f, i, j; default order "nfij"): one event per
output position, see ``forward_window`` and ``direct_window``. Mac granularity (letters n, f, i, j, c, k, l;
default "nfijckl"): one event per multiply-accumulate, see ``direct_mac``.

Phases: ``forward``; then ``backward`` (fused: each position sends dz back through its
window into db, dw and dxp at once) or ``db``, ``dw``, ``dx`` (separate, as CS231n's
naive code; ``dx`` follows ``dx_loop_order``).
"""

from __future__ import annotations

from .direct_mac import mac_backward_phases, mac_forward_phase
from .direct_window import window_backward_phases
from .forward_window import forward_window_phase
from .views import Phase, View, register_view

__all__ = ["DirectView"]


class DirectView(View):
    name = "direct"
    title = "direct loops"
    letters = {"window": "nfij", "mac": "nfijckl"}

    def forward_phases(self, rc) -> list[Phase]:
        return [mac_forward_phase(rc) if rc.granularity == "mac" else forward_window_phase(rc)]

    def backward_phases(self, rc) -> list[Phase]:
        return mac_backward_phases(rc) if rc.granularity == "mac" else window_backward_phases(rc)


register_view(DirectView())
