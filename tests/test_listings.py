"""The listings (convcore/listings/) are correct, runnable code: every one, called as a
student calls it, matches PyTorch's conv2d and autograd (float64, a random upstream
gradient) and the trace engine's header tensors for the same setting; the registry
finds each by its trace setting; the files import NumPy only; the marks parse."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import geometry, torch_layer
from strategies import ConvCase, conv_cases, cs231n_cases, examples
from trace_checks import assert_close, case_config, tensor, traced

from convcore.activations import get_activation
from convcore.listings import (
    ListingMarkError,
    ListingNotFound,
    get_listing,
    listing_for,
    listings,
    read_marks,
)
from convcore.listings.layer.conv2d import Conv2D
from convcore.trace import resolve_config, trace_header

LISTINGS = listings()
FOLDER = Path(__file__).resolve().parent.parent / "convcore" / "listings"
RTOL = 1e-10


def torch_cases(**limits):
    """``conv_cases`` with a bias (the torch style's backward always returns db): every
    padding, (top, bottom, left, right) too."""
    return conv_cases(**limits).map(lambda case: replace(case, bias=True))


def layer_cases(**limits):
    """``conv_cases`` in seed 001's layer's reach: no dilation, no groups (any stride and
    padding, with or without a bias)."""
    return conv_cases(**limits, max_dilation=1).filter(lambda case: case.groups == 1)


# each convention's specs (tests/strategies.py), small: a listing runs one Python step a loop
CASES = {
    "cs231n": cs231n_cases(max_n=2, max_cf=3, max_hw=6, max_k=3),
    "torch": torch_cases(max_n=2, max_cf=3, max_hw=6, max_k=3, max_dilation=2),
    "layer": layer_cases(max_n=2, max_cf=3, max_hw=6, max_k=3),
}
# the layer computes its activation: its listings are tested with one
ACTIVATIONS = {"cs231n": ("identity",), "torch": ("identity",), "layer": ("identity", "relu", "tanh")}


def run(listing, case, activation="identity") -> dict[str, np.ndarray]:
    """Call the listing's forward then backward on a case's arrays as its convention
    calls them (convcore.mistakes.conventions): {out, dx, dw, db}, NCHW / OIHW."""
    x, w, b, dout = case.arrays()
    forward, backward = listing.functions["forward"], listing.functions["backward"]
    if listing.convention == "layer":
        act = None if activation == "identity" else get_activation(activation)
        layer = Conv2D(w.transpose(2, 3, 1, 0), b, case.spec.stride, case.spec.padding, act)
        out = forward(layer, x.transpose(0, 2, 3, 1))
        dx = backward(layer, dout.transpose(0, 2, 3, 1))
        dw, db = layer.dW.transpose(3, 2, 0, 1), layer.db
        return {"out": out.transpose(0, 3, 1, 2), "dx": dx.transpose(0, 3, 1, 2), "dw": dw, "db": db}
    if listing.convention == "cs231n":
        out, cache = forward(x, w, b, {"stride": case.stride, "pad": case.padding})
        dx, dw, db = backward(dout, cache)
    else:
        kwargs = {"stride": case.spec.stride, "padding": case.spec.padding, "dilation": case.spec.dilation}
        out = forward(x, w, b, groups=case.groups, **kwargs)
        dx, dw, db = backward(dout, x, w, groups=case.groups, **kwargs)
    return {"out": out, "dx": dx, "dw": dw, "db": db}


def setting(listing) -> dict:
    """The trace config keys of a listing's setting."""
    keys = ("view", "granularity", "backward", "loop_order", "dx_loop_order")
    config = {key: getattr(listing, key) for key in keys}
    if listing.backward == "fused":
        del config["dx_loop_order"]  # the engine refuses it where no phase reads it
    return config


def drawn(data, cases: dict, listing) -> tuple[ConvCase, str]:
    """A case of ``cases[listing.convention]`` and an activation the convention has, drawn."""
    case = data.draw(cases[listing.convention], label="case")
    return case, data.draw(st.sampled_from(ACTIVATIONS[listing.convention]), label="activation")


@pytest.mark.parametrize("listing", LISTINGS, ids=lambda listing: listing.name)
@settings(max_examples=examples(200), deadline=None)
@given(data=st.data())
def test_every_listing_matches_torch_and_the_trace_header(listing, data):
    case, activation = drawn(data, CASES, listing)
    got = run(listing, case, activation)
    x, w, b, dout = case.arrays()
    truth = torch_layer(x, w, b, dout, **geometry(case.spec), activation=activation)
    header = trace_header(case_config(case, activation=activation, **setting(listing)))
    for name in ("out", "dx", "dw", "db") if b is not None else ("out", "dx", "dw"):
        assert_close(got[name], getattr(truth, name), f"{listing.name} {name} against torch", RTOL)
        assert_close(got[name], tensor(header, traced(header, name)), f"{listing.name} {name} against the header", RTOL)


def test_a_wrong_listing_would_fail():
    """The comparison can fail: a forward without its bias differs from torch."""
    listing = get_listing("cs231n", granularity="window")
    case = ConvCase((2, 2, 5, 5), (3, 2, 3, 3), 2, 1, 1, 1, True, seed=7)
    x, w, b, _ = case.arrays()
    out, _ = listing.functions["forward"](x, w, np.zeros_like(b), {"stride": case.stride, "pad": case.padding})
    with pytest.raises(AssertionError):
        assert_close(out, torch_layer(x, w, b, **geometry(case.spec)).out, "out", RTOL)


@pytest.mark.parametrize("listing", LISTINGS, ids=lambda listing: listing.name)
def test_the_registry_finds_each_listing_by_its_setting(listing):
    found = listing_for(resolve_config(setting(listing)), listing.convention)
    assert found.name == listing.name and found.lines == listing.lines
    assert found.lines[0] == "import numpy as np"
    assert set(found.functions) == {"forward", "backward"}
    for mark in found.marks:  # a marked line writes the name its mark says
        assert found.lines[mark.line - 1].lstrip().startswith(mark.target)
    namespace = {}
    exec("\n".join(found.lines), namespace)  # the listing as a student copies it runs as one file
    assert {"conv2d_forward", "conv_forward_naive", "Conv2D"} & set(namespace)


def test_the_default_listing_and_its_line_map():
    listing = get_listing()
    assert (listing.convention, listing.view, listing.granularity, listing.backward) == (
        "cs231n",
        "direct",
        "window",
        "fused",
    )
    assert listing.loop_order == listing.dx_loop_order == "nfij"
    lines = listing.line_map
    # as docs/listings.md and convcore/listings/__init__.py show it
    assert lines == {
        "pad": {"xp": 12},
        "forward": {"out": 19},
        "backward": {"db": 37, "dw": 38, "dxp": 39},
        "crop": {"dx": 40},
    }
    assert listing.lines[lines["forward"]["out"] - 1].strip().startswith("out[n, f, i, j] = ")
    # without padding the trace's dx is the listing's dxp (the header's aliases say so)
    assert listing.line_of("backward", "dx", {"dxp": "dx"}) == lines["backward"]["dxp"]
    event = {"phase": "backward", "writes": [{"tensor": "db"}, {"tensor": "dw"}, {"tensor": "dxp"}]}
    assert listing.event_lines(event) == (lines["backward"]["db"], lines["backward"]["dw"], lines["backward"]["dxp"])


def test_the_torch_style_forward_takes_no_bias():
    listing = get_listing("torch", granularity="mac")
    case = ConvCase((1, 4, 5, 6), (2, 2, 2, 3), (1, 2), (1, 0), (2, 1), 2, False, seed=5)
    x, w, _, _ = case.arrays()
    out = listing.functions["forward"](x, w, None, stride=(1, 2), padding=(1, 0), dilation=(2, 1), groups=2)
    assert_close(out, torch_layer(x, w, None, **geometry(case.spec)).out, "out", RTOL)


def test_one_pass_alone():
    forward = get_listing("cs231n", granularity="mac", phases="forward")
    backward = get_listing("cs231n", granularity="mac", backward="separate", phases="backward")
    assert set(forward.functions) == {"forward"} and set(forward.line_map) == {"pad", "forward"}
    assert set(backward.functions) == {"backward"} and set(backward.line_map) == {"db", "dw", "dx", "crop"}


@pytest.mark.parametrize(
    "asked",
    [
        {"convention": "fortran"},
        {"convention": "torch", "view": "im2col", "granularity": "mac"},
        {"convention": "layer", "view": "transposed", "loop_order": "nfi"},
        {"view": "lens"},
        {"granularity": "mac", "loop_order": "nfij"},
        {"granularity": "window", "backward": "separate", "dx_loop_order": "jinx"},
    ],
)
def test_a_setting_without_a_listing_is_refused_with_what_there_is(asked):
    with pytest.raises(ListingNotFound, match="there are, each in every loop order .*: cs231n forward window.* torch"):
        get_listing(**asked)


# every (convention, granularity, backward) in other loop orders (convcore/listings/orders.py)
FORMS = [(c, g, b) for c in CASES for g in ("window", "mac") for b in ("fused", "separate")]


def orders(granularity):
    return st.permutations(list("nfij" if granularity == "window" else "nfijckl")).map("".join)


def reordered(data, convention, granularity, backward):
    loop_order = data.draw(orders(granularity), label="loop_order")
    dx_order = data.draw(orders(granularity), label="dx_loop_order") if backward == "separate" else None
    return get_listing(convention, "direct", granularity, backward, loop_order, dx_order)


@pytest.mark.parametrize(("convention", "granularity", "backward"), FORMS)
@settings(max_examples=examples(100), deadline=None)
@given(data=st.data())
def test_every_loop_order_matches_torch_and_the_trace_header(convention, granularity, backward, data):
    test_every_listing_matches_torch_and_the_trace_header.hypothesis.inner_test(
        reordered(data, convention, granularity, backward), data
    )


# the other views' listings (im2col, transposed): one a convention, in every order of the view's letters
VIEWS = [(listing.view, listing.convention) for listing in LISTINGS if listing.view != "direct"]


def view_reordered(data, view, convention):
    loop_order = data.draw(st.permutations(list("fnij" if view == "im2col" else "nfij")).map("".join), label="order")
    return get_listing(convention, view, loop_order=loop_order)


@pytest.mark.parametrize(("view", "convention"), VIEWS)
@settings(max_examples=examples(100), deadline=None)
@given(data=st.data())
def test_every_loop_order_of_another_view_matches_torch_and_the_trace_header(view, convention, data):
    test_every_listing_matches_torch_and_the_trace_header.hypothesis.inner_test(
        view_reordered(data, view, convention), data
    )


def said(line_map) -> str:
    """A line map in one line: ``pad xp 13, forward out 19, ...``."""
    return ", ".join(f"{phase} {tensor} {line}" for phase, lines in line_map.items() for tensor, line in lines.items())


def test_every_view_has_a_listing_in_every_convention():
    from convcore.trace import view_names

    assert {(listing.view, listing.convention) for listing in LISTINGS} == {
        (view, convention) for view in view_names() for convention in CASES
    }


def test_the_transposed_listing_and_its_line_map():
    listing = get_listing("cs231n", "transposed", loop_order="jifn")
    assert listing.name == "cs231n/forward_window in loop order jifn + cs231n/backward_transposed"
    assert said(listing.line_map) == (
        "pad xp 12, forward out 19, db db 42, dw dw 45, dilate dz dz_dilated 48, rotate w w_rot 51, dx dxp 54, crop dx 55"
    )
    # the forward is the direct view's window forward; the backward runs row-major
    forward = get_listing("cs231n", loop_order="jifn", phases="forward").lines
    assert listing.lines[: len(forward)] == forward
    assert "    for n, c, y, x in np.ndindex(N, C, Hp, Wp):" in listing.lines


def test_the_im2col_listing_and_its_line_map():
    listing = get_listing("cs231n", "im2col")
    assert listing.name == "cs231n/forward_im2col + cs231n/backward_im2col"
    assert (listing.granularity, listing.loop_order, listing.dx_loop_order) == ("window", "fnij", "fnij")
    assert said(listing.line_map) == (
        "pad xp 13, im2col cols 20, forward out 25, db db 42, dw dw 45, dcols dcols 51, col2im dxp 55, crop dx 56"
    )
    # the engine ignores backward and dx_loop_order in this view: so does the registry
    assert get_listing("cs231n", "im2col", backward="separate", dx_loop_order="jifn").lines == listing.lines
    # its backward orders the columns only: the forward's f moves, the backward stays
    assert get_listing("cs231n", "im2col", loop_order="nfij").name == (
        "cs231n/forward_im2col in loop order nfij + cs231n/backward_im2col"
    )
    backward = get_listing("cs231n", "im2col", loop_order="jifn", phases="backward")
    assert set(backward.line_map) == {"db", "dw", "dcols", "col2im", "crop"}
    assert backward.loop_order == "jifn" and "for f, c, k, l in np.ndindex(F, C, HH, WW):" in "\n".join(
        backward.lines
    )  # dW runs row-major whatever the order, as the engine's dw does


@pytest.mark.parametrize(("convention", "granularity", "backward"), FORMS)
def test_another_loop_order_rewrites_only_the_loop_lines(convention, granularity, backward):
    default = get_listing(convention, "direct", granularity, backward)
    order = default.loop_order[::-1]
    other = get_listing(convention, "direct", granularity, backward, order, order[1:] + order[0])
    changed = [k for k, (a, b) in enumerate(zip(default.lines, other.lines)) if a != b]
    assert len(default.lines) == len(other.lines) and changed
    assert all("in np.ndindex(" in other.lines[k] for k in changed)
    assert other.loop_order == order and f"in loop order {order}" in other.name
    assert other.line_map == default.line_map  # the same lines write


def test_listing_files_import_numpy_only():
    files = sorted(p for p in FOLDER.glob("*/*.py") if p.name != "__init__.py")
    assert len(files) >= 19
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imports = [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]
        assert [ast.unparse(node) for node in imports] == ["import numpy as np"], path.name


def test_marks_name_the_phase_the_tensor_and_the_loops():
    lines = [
        "def f(x, dout):",
        "    xp = x + 0  # step: pad",
        "    for n, f in np.ndindex(2, 3):",
        "        for k in range(4):",
        "            dw[f, k] += dout[n, f]  # step: activation grad",
    ]
    (pad, grad) = read_marks(lines)
    assert (pad.line, pad.phase, pad.target, pad.loops) == (2, "pad", "xp", ())
    assert (grad.line, grad.phase, grad.target, grad.loops) == (5, "activation grad", "dw", ("n", "f", "k"))


@pytest.mark.parametrize("line", ["    print(x)  # step: forward", "    a = b = x  # step: forward"])
def test_a_mark_on_a_line_that_writes_no_one_name_is_refused(line):
    with pytest.raises(ListingMarkError, match="line 2 is marked"):
        read_marks(["def f(x):", line])
