"""GET /api/meta: everything a page needs to build its controls, from convcore's own
registries (activations, views, fills, the config's choices and defaults, the header's
tensor titles) and the service's limits, so that no page restates them."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from convcore.activations import ACTIVATIONS
from convcore.fill import FILLS
from convcore.trace.axes import SEQUENCE_LAYOUTS
from convcore.trace.config import CHOICE_TITLES, CHOICES, DEFAULT_FILLS, DEFAULTS, IMAGE_LAYOUTS
from convcore.trace.drawing import DRAWINGS, DRAWN_AFTER, MARK_KINDS
from convcore.trace.transpose_layer import TAKEN_SETTINGS
from convcore.trace.views import get_view, view_names

from .schemas import Limits

router = APIRouter(prefix="/api", tags=["service"])

# ConvSpec's padding forms (convcore.spec.ConvSpec.create), with the names of their numbers
PADDING_FORMS = [
    {"name": "int", "title": "one number", "values": ["p"]},
    {"name": "pair", "title": "rows, columns", "values": ["rows", "cols"]},
    {"name": "four", "title": "top, bottom, left, right", "values": ["top", "bottom", "left", "right"]},
    {"name": "same", "title": "same", "values": []},
    {"name": "valid", "title": "valid", "values": []},
]
# the padding forms each layer takes: Conv2d's all; ConvTranspose2d's an int or (h, w)
# (TransposeSpec.create: rows and columns cropped from each side); a sequence's, padded
# on its two ends, conv1d_spec's (convcore.conv1d)
LAYER_PADDING_FORMS = {
    "conv2d": PADDING_FORMS,
    "conv_transpose2d": [p for p in PADDING_FORMS if p["name"] in ("int", "pair")],
    "conv1d": [
        {"name": "int", "title": "one number", "values": ["p"]},
        {"name": "pair", "title": "left, right", "values": ["left", "right"]},
        {"name": "causal", "title": "causal (left only)", "values": []},
        {"name": "same", "title": "same", "values": []},
        {"name": "valid", "title": "valid", "values": []},
    ],
}
# the layouts each layer takes (resolve_config refuses the others, naming layout), in
# one order: channels first, then channels last (NCHW's twin is NCL, NHWC's NLC)
LAYER_LAYOUTS = {
    "conv2d": list(IMAGE_LAYOUTS),
    "conv_transpose2d": list(TAKEN_SETTINGS["layout"]),
    "conv1d": list(SEQUENCE_LAYOUTS),
}

# the config's tensor inputs, and what null means for the optional ones
INPUTS = [
    {"name": "x", "null": None},
    {"name": "w", "null": None},
    {"name": "b", "null": "no bias"},
    {"name": "dout", "null": "ones (loss = sum of outputs)"},
]


class Choice(BaseModel):
    name: str
    title: str


class ActivationInfo(Choice):
    formula: str = Field(description="The forward pass in words.")


class ViewInfo(Choice):
    granularities: list[str] = Field(description="The granularity values the view supports.")
    loop_letters: dict[str, str] = Field(description="Per granularity: the loop letters, also the default loop_order.")


class FillInfo(Choice):
    params: dict[str, int | float] = Field(description="Every parameter the fill takes, with its default.")
    integer_params: list[str] = Field(description="Parameters that must be integers.")
    random: bool = Field(description="Whether the seed matters.")


class PaddingForm(Choice):
    values: list[str] = Field(description="The names of the numbers this form takes (none for a word).")


class InputInfo(Choice):
    null: str | None = Field(description="What a null value means (None: the tensor is required).")


class Meta(BaseModel):
    activations: list[ActivationInfo]
    views: list[ViewInfo]
    choices: dict[str, list[Choice]] = Field(
        description="layout, padding_mode, granularity, backward, phases, copies, code: the allowed values."
    )
    padding_forms: list[PaddingForm]
    layer_padding_forms: dict[str, list[PaddingForm]] = Field(
        description="Per layer: the padding forms it takes (padding_forms are Conv2d's)."
    )
    layer_layouts: dict[str, list[str]] = Field(
        description="Per layer: the layouts its config takes, channels first, then channels last."
    )
    fills: list[FillInfo]
    inputs: list[InputInfo]
    tensor_titles: dict[str, str] = Field(description="The title of every tensor a trace header may name.")
    mark_kinds: dict[str, str] = Field(description="What each character of a header tensor's marks means.")
    defaults: dict[str, Any] = Field(description="The default setup: every config key's default.")
    default_fills: dict[str, dict[str, Any]] = Field(description="The generator a tensor gets when it is turned on.")
    limits: Limits


def _views() -> list[ViewInfo]:
    out = []
    for name in view_names():
        view = get_view(name)
        out.append(
            ViewInfo(
                name=name,
                title=view.title or name,
                granularities=list(view.granularities),
                loop_letters={g: view.loop_letters(g) for g in view.granularities},
            )
        )
    return out


def build_meta(limits: dict[str, Any]) -> Meta:
    """The body of GET /api/meta under ``limits`` (Settings.limits()); a lesson file embeds it."""
    return Meta(
        activations=[
            ActivationInfo(name=a.name, title=a.title or a.name, formula=a.formula) for a in ACTIVATIONS.values()
        ],
        views=_views(),
        choices={key: [Choice(name=v, title=CHOICE_TITLES[key][v]) for v in values] for key, values in CHOICES.items()},
        padding_forms=[PaddingForm(**p) for p in PADDING_FORMS],
        layer_padding_forms={layer: [PaddingForm(**p) for p in forms] for layer, forms in LAYER_PADDING_FORMS.items()},
        layer_layouts=LAYER_LAYOUTS,
        fills=[
            FillInfo(
                name=f.name,
                title=f.title or f.name,
                params=dict(f.defaults),
                integer_params=sorted(f.integer_params),
                random=f.random,
            )
            for f in FILLS.values()
        ],
        inputs=[InputInfo(name=i["name"], title=DRAWINGS[i["name"]][0], null=i["null"]) for i in INPUTS],
        tensor_titles={name: facts[0] for name, facts in (*DRAWINGS.items(), *DRAWN_AFTER.items())},
        mark_kinds=MARK_KINDS,
        defaults=DEFAULTS,
        default_fills=DEFAULT_FILLS,
        limits=Limits(**limits),
    )


@router.get("/meta", response_model=Meta, summary="What a page needs to build its controls")
def meta(request: Request) -> Meta:
    return build_meta(request.app.state.settings.limits())
