"""GET /api/presets and GET /api/presets/{name}: named lesson configs."""

from __future__ import annotations

from fastapi import APIRouter, Path

from ..http.errors import ApiError
from ..traces.presets import PRESETS, get_preset
from .schemas import ErrorBody, Preset, PresetList, PresetSummary

router = APIRouter(prefix="/api/presets", tags=["presets"])


@router.get("", response_model=PresetList, summary="Every lesson preset")
def list_presets() -> PresetList:
    return PresetList(presets=[PresetSummary(**p.summary()) for p in PRESETS.values()])


@router.get(
    "/{name}",
    response_model=Preset,
    summary="One lesson preset with its trace config",
    responses={404: {"model": ErrorBody, "description": "No preset of that name."}},
)
def read_preset(name: str = Path(max_length=64)) -> Preset:
    preset = get_preset(name)
    if preset is None:
        known = ", ".join(PRESETS)
        raise ApiError(404, ["path", "name"], f"no preset named {name!r}; the presets are {known}", "not_found")
    return Preset(**preset.to_dict())
