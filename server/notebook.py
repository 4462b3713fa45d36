"""``show()``: the ConvScope player inline in a notebook, with no server and no network.

    from convscope import show
    lesson = show(x, w, b, stride=2, padding=1)   # the player, inline and offline
    show(x, w, b, stride=2, code=True)            # ... with the code beside the step
    lesson.trace().tensors["dw"]                  # the trace as NumPy arrays

The player is the offline lesson file (``convscope export``) in an ``<iframe srcdoc>``:
the same page, code and trace as the served one, self-contained, so the notebook keeps
working when saved, shared or opened later without ConvScope installed. (An anywidget
would need a kernel to draw and a front-end extension; a srcdoc iframe needs neither.)
The file goes into the notebook gzipped, with a few lines that unpack it in the browser
(``DecompressionStream``): CS231n's player is about 0.21 MB of the notebook instead of
0.54 MB.
"""

from __future__ import annotations

import base64
import gzip
import html
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Lesson", "LessonTrace", "show"]

DEFAULT_HEIGHT = 820  # px: the stage, the step panel and the transport without scrolling

# the srcdoc: unpack the gzipped lesson file and let it take the frame's document
UNPACK = """<!doctype html><meta charset="utf-8"><title>ConvScope</title>
<p id="unpacking" style="font: 16px sans-serif">Opening the ConvScope player…</p>
<script>
(async () => {
  try {
    const packed = Uint8Array.from(atob("%(packed)s"), (c) => c.charCodeAt(0));
    const lesson = await new Response(new Blob([packed]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
    document.open();
    document.write(lesson);
    document.close();
  } catch (err) {
    document.getElementById("unpacking").textContent =
      "This browser cannot unpack the ConvScope player (" + err + "): open the notebook in a browser " +
      "from 2023 or later, or save the lesson with lesson.save('lesson.html').";
  }
})();
</script>"""


def _plain(value: Any) -> Any:
    """NumPy arrays and scalars as nested lists and numbers (the config's JSON form)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class LessonTrace:
    """A trace as NumPy arrays.

    tensors : {name: array} every tensor of the header in its own axis order, e.g.
        x (N, C, H, W), w (F, C/groups, KH, KW), z and out (N, F, OH, OW), dw like w
    events : the steps in order, each {phase, loop, reads, writes, text}; a write's
        ``delta`` and ``value`` are 1-D arrays over its box (row-major)
    phases : [{name, start, stop, ...}] as in the header
    spec : the resolved convolution (stride, padding per side, dilation, groups, ...)
    """

    tensors: dict[str, np.ndarray]
    events: list[dict[str, Any]]
    phases: list[dict[str, Any]]
    spec: dict[str, Any]
    document: dict[str, Any] = field(repr=False)


@dataclass
class Lesson:
    """What ``show()`` returns: the config, the player's HTML and the trace."""

    config: dict[str, Any]
    title: str
    height: int = DEFAULT_HEIGHT
    code: bool = False  # the player opens with the code panel open

    def __post_init__(self) -> None:
        self._html: str | None = None
        self._document: dict[str, Any] | None = None

    @property
    def html(self) -> str:
        """The offline lesson file's text (what ``convscope export`` writes)."""
        if self._html is None:
            from .export.lesson import lesson_html
            from .http.errors import ApiError

            try:
                self._html = lesson_html(self.config, title=self.title, name="lesson", code=self.code)
            except ApiError as exc:  # the service's refusal, as a Python error
                field = ".".join(str(p) for p in exc.loc if p != "body")
                raise ValueError(f"{field + ': ' if field else ''}{exc.msg}") from None
        return self._html

    def iframe(self) -> str:
        """The player as an ``<iframe srcdoc>`` element (the lesson file inside, gzipped)."""
        packed = base64.b64encode(gzip.compress(self.html.encode("utf-8"), compresslevel=9, mtime=0))
        unpack = UNPACK.replace("%(packed)s", packed.decode("ascii"))
        return (
            f'<iframe srcdoc="{html.escape(unpack, quote=True)}" title="ConvScope: {html.escape(self.title)}" '
            f'style="width: 100%; height: {int(self.height)}px; border: 1px solid #ccc; border-radius: 4px" '
            'loading="eager"></iframe>'
        )

    def display(self) -> None:
        """Show the player in the notebook (what ``show()`` does)."""
        from IPython.display import HTML, display

        # (in a <div>: IPython warns about HTML that starts with <iframe>, and its IFrame
        # would need a URL the notebook's viewer may not reach)
        display(HTML(f"<div>{self.iframe()}</div>"))

    def save(self, path: str) -> None:
        """Write the offline lesson file (one HTML file; opens from file://)."""
        with open(path, "w", encoding="utf-8") as out:
            out.write(self.html)

    def trace(self) -> LessonTrace:
        """The trace with its tensors as NumPy arrays (built once, then kept)."""
        if self._document is None:
            from convcore.trace import build_trace

            self._document = build_trace(self.config)
        doc = self._document
        tensors = {name: np.asarray(t["data"], dtype=float).reshape(t["shape"]) for name, t in doc["tensors"].items()}
        events = [
            {
                **ev,
                "writes": [
                    {**w, "delta": np.asarray(w["delta"], dtype=float), "value": np.asarray(w["value"], dtype=float)}
                    for w in ev["writes"]
                ],
            }
            for ev in doc["events"]
        ]
        return LessonTrace(tensors=tensors, events=events, phases=doc["phases"], spec=doc["spec"], document=doc)

    def contributions(self, tensor: str, index: Any) -> list[dict[str, Any]]:
        """Any cell's story: every write that reached ``tensor[index]`` in event order
        (``index`` a tuple in the header's axis order), each a dict with ``event``,
        ``phase``, ``delta``, ``value`` and, where the reads show them, ``factors``; the
        deltas sum to the cell's value (``convcore.trace.contributions``; the page's
        inspector tells the same story)."""
        from convcore.trace import contributions

        return contributions(self.trace().document, tensor, index)

    def __repr__(self) -> str:
        spec = self.trace().spec
        return f"<ConvScope lesson {self.title!r}: {len(self.trace().events)} steps, stride {spec.get('stride')}, padding {spec.get('padding')}; .trace() gives the arrays, .contributions(tensor, index) a cell's story>"


def show(
    x: Any = None,
    w: Any = None,
    b: Any = None,
    *,
    config: Mapping[str, Any] | None = None,
    preset: str | None = None,
    title: str | None = None,
    height: int = DEFAULT_HEIGHT,
    display: bool = True,
    code: bool | str = False,
    **options: Any,
) -> Lesson:
    """Show the step-by-step player of one convolution inline (offline) and return it.

    x : (N, C, H, W) input (or NHWC with ``layout="NHWC"``; with ``layer="conv1d"``
        (N, C, L), or (N, L, C) with ``layout="NLC"``), an array, nested lists or a fill
        spec such as ``{"fill": "randint", "shape": [1, 3, 5, 5], "seed": 0}``
    w : (F, C/groups, KH, KW) filters (HWIO with NHWC; a Conv1d's (F, C/groups, K))
    b : (F,) bias, or None for none
    options : the trace config's other keys, PyTorch's names: stride, padding,
        dilation, groups, dout (N, F, OH, OW; None = ones), activation, view
        ("direct", "im2col", "transposed"), granularity, backward, loop_order, phases
    config : a whole trace config instead of the arguments above
    preset : a lesson preset's name instead ("cs231n", "d2l", ...)
    display : False to only build the lesson (``.display()`` shows it later)
    code : True opens the player with the code beside the step (the plain Python loops
        of this setting, the step's line marked, as the page's C key); a convention
        ("cs231n", "torch", "layer") also chooses the style (the trace config's
        ``code``; default: the lesson's own)

    Invalid input raises ValueError naming the field and the numbers, as the service
    would answer (its limits apply: a player of 20 000 steps teaches nobody).
    """
    if preset is not None:
        from .traces.presets import PRESETS, get_preset

        found = get_preset(preset)
        if found is None:
            raise ValueError(f"no preset named {preset!r}; the presets are {', '.join(PRESETS)}")
        chosen, title = dict(found.config), title or found.title
    elif config is not None:
        chosen = _plain(dict(config))
    else:
        chosen = {k: _plain(v) for k, v in {"x": x, "w": w, "b": b, **options}.items() if v is not None}
    if isinstance(code, str):
        chosen = {**chosen, "code": code}
    elif not isinstance(code, bool):
        raise ValueError(f"code: True, False or a convention ('cs231n', 'torch', 'layer'), got {code!r}")
    lesson = Lesson(config=chosen, title=title or "A convolution, step by step", height=height, code=bool(code))
    lesson.html  # noqa: B018 - build now: bad input fails here, not in the notebook's output
    if display:
        try:
            from IPython import get_ipython
        except ImportError:
            get_ipython = None
        if get_ipython is not None and get_ipython() is not None:
            lesson.display()
    return lesson
