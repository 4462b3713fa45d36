"""Named lesson configs: each is a valid trace config with a title, one sentence on
what it teaches, and a statement of its upstream gradient dout.

Lessons about the backward pass use a random integer dout: an all-ones dout hides a
flipped or transposed gradient. Lessons about the forward pass leave dout out (ones,
loss = sum of outputs) and say so.
"""

from __future__ import annotations

from copy import deepcopy
from dataclasses import dataclass
from typing import Any

__all__ = ["PRESETS", "LessonPreset", "get_preset"]

ONES = "omitted: ones (loss = sum of the outputs)"


def _randint(shape: list[int], low: int, high: int, seed: int) -> dict[str, Any]:
    return {"fill": "randint", "shape": shape, "low": low, "high": high, "seed": seed}


@dataclass(frozen=True)
class LessonPreset:
    name: str
    title: str
    teaches: str
    config: dict[str, Any]

    @property
    def dout(self) -> str:
        """The statement of the lesson's upstream gradient, read from its config."""
        dout = self.config.get("dout")
        if dout is None:
            return ONES
        if not isinstance(dout, dict) or dout.get("fill") != "randint":
            raise ValueError(f"lesson {self.name}: its dout {dout!r} has no statement here")
        return f"random integers in [{dout['low']}, {dout['high']}] (randint, seed {dout['seed']})"

    def summary(self) -> dict[str, str]:
        return {"name": self.name, "title": self.title, "teaches": self.teaches, "dout": self.dout}

    def to_dict(self) -> dict[str, Any]:
        return {**self.summary(), "config": deepcopy(self.config)}


def _edge_image() -> list[list[list[list[int]]]]:
    """d2l's 6×8 image: ones with a band of zeros in columns 2–5, as (1, 1, 6, 8)."""
    row = [1, 1, 0, 0, 0, 0, 1, 1]
    return [[[list(row) for _ in range(6)]]]


_PRESETS = [
    LessonPreset(
        name="cs231n",
        title="CS231n's convolution demo",
        teaches=(
            "Two 3×3×3 filters slide with stride 2 over a 5×5×3 input padded by 1; each "
            "output number sums a window over all three channels and adds its filter's bias."
        ),
        config={
            "x": _randint([1, 3, 5, 5], 0, 2, 231),
            "w": _randint([2, 3, 3, 3], -1, 1, 232),
            "b": [1, 0],
            "dout": _randint([1, 2, 3, 3], -2, 2, 4),
            "stride": 2,
            "padding": 1,
        },
    ),
    LessonPreset(
        name="d2l",
        title="Dive into Deep Learning's 3×3 example",
        teaches=(
            "Cross-correlation by hand: each output is a 2×2 window of the input times the "
            "kernel, summed, giving 19, 25, 37 and 43."
        ),
        config={
            "x": [[[[0, 1, 2], [3, 4, 5], [6, 7, 8]]]],
            "w": [[[[0, 1], [2, 3]]]],
        },
    ),
    LessonPreset(
        name="edge",
        title="Edge detection with a [1, −1] kernel",
        teaches=(
            "The kernel [1, −1] subtracts each pixel's right neighbour, so the output is 1 "
            "where the image steps down from 1 to 0, −1 where it steps up from 0 to 1 and 0 elsewhere."
        ),
        config={"x": _edge_image(), "w": [[[[1, -1]]]]},
    ),
    LessonPreset(
        name="stride2",
        title="Stride 2 with a 2×2 kernel",
        teaches=(
            "With stride 2 the 2×2 windows tile a 5×5 input without overlap and never reach "
            "its last row and column, so dX has gaps: exactly zero where no window read."
        ),
        config={
            "x": _randint([1, 1, 5, 5], -2, 2, 10),
            "w": _randint([1, 1, 2, 2], -2, 2, 11),
            "dout": _randint([1, 1, 2, 2], -2, 2, 12),
            "stride": 2,
        },
    ),
    LessonPreset(
        name="dilation2",
        title="Dilation 2",
        teaches=(
            "A 3×3 kernel with dilation 2 reads every other cell of a 5×5 patch: the "
            "receptive field grows to 5×5 while the kernel keeps 9 weights."
        ),
        config={
            "x": _randint([1, 1, 7, 7], -2, 2, 20),
            "w": _randint([1, 1, 3, 3], -1, 1, 21),
            "dout": _randint([1, 1, 3, 3], -2, 2, 22),
            "dilation": 2,
        },
    ),
    LessonPreset(
        name="depthwise",
        title="Depthwise convolution (groups = channels)",
        teaches=(
            "With groups equal to the 3 input channels each filter has one channel and "
            "reads only its own input channel, so dX of a channel comes from one filter."
        ),
        config={
            "x": _randint([1, 3, 4, 4], -2, 2, 30),
            "w": _randint([3, 1, 3, 3], -1, 1, 31),
            "dout": _randint([1, 3, 4, 4], -2, 2, 32),
            "padding": 1,
            "groups": 3,
        },
    ),
    LessonPreset(
        name="same_even",
        title="'same' padding with an even kernel",
        teaches=(
            "A 2×2 kernel needs one row and one column of padding to keep a 4×4 input 4×4; "
            "one cannot split evenly, so 'same' puts it at the bottom and right."
        ),
        config={
            "x": _randint([1, 1, 4, 4], -2, 2, 40),
            "w": _randint([1, 1, 2, 2], -1, 1, 41),
            "dout": _randint([1, 1, 4, 4], -2, 2, 42),
            "padding": "same",
        },
    ),
    LessonPreset(
        name="nhwc_relu",
        title="Seed 001's NHWC layer with ReLU",
        teaches=(
            "An NHWC input, HWIO weights, 'same' padding and a ReLU: where z is not positive "
            "the ReLU passes no gradient, so those dead units add nothing to dW, db or dX."
        ),
        config={
            "layout": "NHWC",
            "x": _randint([1, 4, 4, 2], -2, 2, 50),
            "w": _randint([3, 3, 2, 2], -1, 1, 51),
            "b": [0, -1],
            "dout": _randint([1, 4, 4, 2], -2, 2, 52),
            "padding": "same",
            "activation": "relu",
        },
    ),
    LessonPreset(
        name="batch2",
        title="A batch of 2 images and 2 filters",
        teaches=(
            "dW and db add up the contributions of both images, while each image's dX comes only from its own outputs."
        ),
        config={
            "x": _randint([2, 1, 4, 4], -2, 2, 60),
            "w": _randint([2, 1, 3, 3], -1, 1, 61),
            "b": [0, 1],
            "dout": _randint([2, 2, 2, 2], -2, 2, 62),
        },
    ),
]

# the layers beside Conv2d's defaults (issue 24): PyTorch's padding modes, the true convolution
_PRESETS += [
    LessonPreset(
        name="reflect_edge",
        title="Reflect padding on an image's edge",
        teaches=(
            "Zero padding puts a dark frame around the image, and an edge kernel answers it with edges that are "
            "not there; reflect padding mirrors the image at its border, so the border's outputs see only the "
            "real edge. In the backward the padding's gradient is not thrown away: the fold step adds each "
            "padding cell's gradient back onto the cell it mirrored, row by row."
        ),
        config={
            "x": [[[[4, 4, 4, 1, 1, 1]] * 5]],
            "w": [[[[1, 0, -1], [1, 0, -1], [1, 0, -1]]]],
            "dout": _randint([1, 1, 5, 6], -2, 2, 72),
            "padding": 1,
            "padding_mode": "reflect",
            "copies": "each",
        },
    ),
    LessonPreset(
        name="gan_upsample",
        title="A GAN decoder's upsampling by 2 (ConvTranspose2d)",
        teaches=(
            "Each input cell stamps x·w[c] onto the output, two rows and columns apart (stride 2). A 3×3 stamp "
            "overlaps its neighbours on every other row and column, so some outputs add one stamp, others two "
            "or four: the checkerboard 'stamps per cell' shows. Padding 1 trims the border, output_padding 1 "
            "makes y exactly twice x (6×6 from 3×3), and the gradient dx is an ordinary convolution of dy."
        ),
        config={
            "layer": "conv_transpose2d",
            "x": _randint([1, 2, 3, 3], -2, 2, 90),
            "w": _randint([2, 1, 3, 3], -1, 1, 91),
            "b": [1],
            "dout": _randint([1, 1, 6, 6], -2, 2, 92),
            "stride": 2,
            "padding": 1,
            "output_padding": 1,
        },
    ),
    LessonPreset(
        name="causal_audio",
        title="A causal audio filter (Conv1d)",
        teaches=(
            "An echo: each output sample is twice the sample now plus the one two steps back (w = [1, 0, 2]). "
            "Causal padding puts the kernel's two extra cells on the left only, so output t reads x[t−2..t], "
            "never the future, and the output is as long as the input: the click at t = 2 sounds at t = 2 and "
            "echoes at t = 4. Backward, dx[t] gathers dy from the outputs t..t+2 that heard it."
        ),
        config={
            "layer": "conv1d",
            "x": [[[0, 0, 4, 0, 0, 0, 1, 2, 3, 2, 1, 0]]],
            "w": [[[1, 0, 2]]],
            "padding": "causal",
            "dout": _randint([1, 1, 12], -2, 2, 95),
        },
    ),
    LessonPreset(
        name="flip",
        title="Convolution flips the kernel",
        teaches=(
            "A single 1 in, the kernel out: a true convolution turns the kernel by 180° before sliding it, so "
            "its answer to an impulse is the kernel as written, where deep learning's conv2d (a "
            "cross-correlation) gives it upside down. The steps slide the turned filters wf; the last step "
            "turns their gradient back onto w."
        ),
        config={
            "x": [[[[0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]]]],
            "w": [[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]]],
            "dout": _randint([1, 1, 5, 5], -2, 2, 82),
            "padding": 1,
            "flip": True,
        },
    ),
]

PRESETS: dict[str, LessonPreset] = {p.name: p for p in _PRESETS}


def get_preset(name: str) -> LessonPreset | None:
    return PRESETS.get(name)
