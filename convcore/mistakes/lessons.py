"""The catalogue as the page's "Common mistakes" lessons: each entry as plain data with
its smallest setup as a ready trace request and where its trace first diverges there.

``mistake_lessons()`` is computed once from ``convcore.mistakes`` and the lab (one
source of truth): the service's ``GET /api/mistakes`` serves it as it is. It lists the
lab's mistakes (``catalogue.lab_mistakes``), not the transposed layer's, which the page
does not trace yet.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from .catalogue import Mistake, lab_mistakes
from .conventions import get_convention
from .lab import build_mistake_trace

__all__ = ["mistake_lesson", "mistake_lessons"]


def mistake_lesson(mistake: Mistake) -> dict[str, Any]:
    """One entry: the catalogue's summary, the convention's title, the setup as a request
    body (``mistake`` included) and its trace's first divergence and failures."""
    summary = mistake.summary()
    request = {**summary["setup_config"], "mistake": mistake.id}
    doc = build_mistake_trace(summary["setup_config"], mistake.id)
    divergence = doc["divergence"]
    del summary["setup_config"]
    return {
        **summary,
        "convention_title": get_convention(mistake.convention).title,
        "request": request,
        "first_divergence": doc["first_divergence"],
        "divergence_phase": divergence["phase"] if divergence else None,
        "failures": sorted(doc["failures"]),
    }


@lru_cache(maxsize=1)
def mistake_lessons() -> tuple[dict[str, Any], ...]:
    """Every entry of the lab (``lab_mistakes``: the mistakes whose layer the page
    traces), in catalogue order (read-only)."""
    return tuple(mistake_lesson(m) for m in lab_mistakes())
