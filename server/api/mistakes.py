"""GET /api/mistakes: the mistakes catalogue for the page's "Common mistakes" lessons."""

from __future__ import annotations

from fastapi import APIRouter

from convcore.mistakes.lessons import mistake_lessons

from .schemas import MistakeEntry, MistakeList

router = APIRouter(prefix="/api", tags=["mistakes"])


@router.get("/mistakes", response_model=MistakeList, summary="Every catalogued Conv2d mistake (the lab's), as a lesson")
def list_mistakes() -> MistakeList:
    return MistakeList(mistakes=[MistakeEntry(**entry) for entry in mistake_lessons()])
