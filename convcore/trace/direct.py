"""The direct view: the loops of the seeds, over output positions or single MACs.

Window granularity (loop letters n, f, i, j; default order "nfij"): one event per
output position, see ``direct_window``. Mac granularity (letters n, f, i, j, c, k, l;
default "nfijckl"): one event per multiply-accumulate, see ``direct_mac``.

Phases: ``forward``; then ``backward`` (fused: each position sends dz back through its
window into db, dw and dxp at once) or ``db``, ``dw``, ``dx`` (separate, as CS231n's
naive code; ``dx`` follows ``dx_loop_order``).
"""

from __future__ import annotations

import math

from .direct_mac import mac_backward_phases, mac_forward_phase
from .direct_window import backward_window, db_window, forward_window
from .views import Phase, View, register_view

__all__ = ["DirectView"]


class DirectView(View):
    name = "direct"
    title = "direct loops"
    granularities = ("window", "mac")

    def loop_letters(self, granularity: str) -> str:
        return "nfij" if granularity == "window" else "nfijckl"

    def forward_phases(self, rc) -> list[Phase]:
        if rc.granularity == "mac":
            return [mac_forward_phase(rc)]
        return [Phase("forward", math.prod(rc.spec.out_shape), forward_window)]

    def backward_phases(self, rc) -> list[Phase]:
        if rc.granularity == "mac":
            return mac_backward_phases(rc)
        positions = math.prod(rc.spec.out_shape)
        bias = rc.has_bias
        if rc.backward == "fused":
            return [Phase("backward", positions,
                          lambda ctx: backward_window(ctx, "backward", rc.loop_order, bias, True, True))]
        phases = [Phase("db", rc.spec.F, db_window)] if bias else []
        phases.append(Phase("dw", positions,
                            lambda ctx: backward_window(ctx, "dw", rc.loop_order, False, True, False)))
        phases.append(Phase("dx", positions,
                            lambda ctx: backward_window(ctx, "dx", rc.dx_loop_order, False, False, True)))
        return phases


register_view(DirectView())
