"""convcore forward+backward against PyTorch (CPU, float64) and a naive seven-loop version.

Measured side by side in one run: for each case the contenders alternate, each timed over
a batch of calls, and the median of the repeats is compared. Prints ratios; targets are
≤ 1.0× torch on the teaching shape and ≤ 1.5× on the medium one.

    .venv/bin/python bench/core.py [--repeats 15]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
from naive import naive_forward_backward as naive_step

from convcore import ConvSpec
from convcore.functional import backward_padded, crop_padding, forward_padded, pad_input


def convcore_step(x, w, b, dout, stride, pad):
    """One forward + backward through convcore's spec-level path (as the trace engine uses it)."""
    spec = ConvSpec.create(x.shape, w.shape, stride=stride, padding=pad)
    xp = pad_input(spec, x)
    out = forward_padded(spec, xp, w, b)
    dxp, dw, db = backward_padded(spec, dout, xp, w)
    return out, crop_padding(spec, dxp), dw, db


def public_step(module):
    """One forward + backward through the public API (conv2d_forward, conv2d_backward:
    validation included) of ``module`` (convcore.functional, or an older one)."""

    def step(x, w, b, dout, stride, pad):
        out = module.conv2d_forward(x, w, b, stride=stride, padding=pad)
        return (out, *module.conv2d_backward(dout, x, w, stride=stride, padding=pad))

    return step


def functional_at(revision: str):
    """convcore/functional.py as it was at ``revision`` (git), loaded beside today's as a
    module of the convcore package (its relative imports are today's spec and input
    checks), so that both run in one process, alternating."""
    import importlib.util
    import subprocess
    import tempfile
    from pathlib import Path

    source = subprocess.run(
        ["git", "show", f"{revision}:convcore/functional.py"],
        check=True,
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    ).stdout
    path = Path(tempfile.mkdtemp()) / "functional_then.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("convcore.functional_then", path)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "convcore"
    spec.loader.exec_module(module)
    return module


def torch_step_factory():
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(max(1, torch.get_num_threads()))

    def torch_step(x, w, b, dout, stride, pad):
        xt = torch.from_numpy(x).requires_grad_()
        wt = torch.from_numpy(w).requires_grad_()
        bt = torch.from_numpy(b).requires_grad_()
        out = F.conv2d(xt, wt, bt, stride=stride, padding=pad)
        out.backward(torch.from_numpy(dout))
        return out.detach().numpy(), xt.grad.numpy(), wt.grad.numpy(), bt.grad.numpy()

    return torch_step


def time_calls(fn: Callable, args: tuple, calls: int) -> float:
    """Seconds per call, over ``calls`` back-to-back calls."""
    start = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    return (time.perf_counter() - start) / calls


def compare(contenders: dict[str, Callable], args: tuple, repeats: int, calls: dict[str, int]):
    """Alternate the contenders ``repeats`` times; median seconds per call of each."""
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for fn in contenders.values():  # warm-up
        fn(*args)
    for _ in range(repeats):
        for name, fn in contenders.items():
            samples[name].append(time_calls(fn, args, calls[name]))
    return {name: statistics.median(s) for name, s in samples.items()}


def case(shape_x, shape_w, stride, pad, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape_x)
    w = rng.normal(size=shape_w)
    b = rng.normal(size=shape_w[0])
    n, _, h, wd = shape_x
    ho = (h + 2 * pad - shape_w[2]) // stride + 1
    wo = (wd + 2 * pad - shape_w[3]) // stride + 1
    dout = rng.normal(size=(n, shape_w[0], ho, wo))
    return (x, w, b, dout, stride, pad)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument(
        "--against", metavar="REV", help="also time the public API as convcore/functional.py was at REV"
    )
    args = parser.parse_args()

    torch_step = torch_step_factory()
    import torch

    print(
        f"numpy {np.__version__}, torch {torch.__version__} ({torch.get_num_threads()} threads), "
        f"float64, median of {args.repeats} alternating repeats"
    )

    teaching = case((1, 3, 7, 7), (2, 3, 3, 3), 2, 1)
    medium = case((8, 16, 32, 32), (32, 16, 3, 3), 1, 1)

    # the three implementations agree before anything is timed
    for c in (teaching,):
        ref = torch_step(*c)
        for impl in (convcore_step, naive_step):
            for a, r in zip(impl(*c), ref):
                np.testing.assert_allclose(a, r, rtol=1e-10, atol=1e-12)
    for a, r in zip(convcore_step(*medium), torch_step(*medium)):
        np.testing.assert_allclose(a, r, rtol=1e-9, atol=1e-9)

    import convcore.functional as functional

    public = {"public": public_step(functional)}
    if args.against:
        public[f"public@{args.against}"] = public_step(functional_at(args.against))
    for c in (teaching, medium):
        for step in public.values():
            for a, r in zip(step(*c), torch_step(*c)):
                np.testing.assert_allclose(a, r, rtol=1e-9, atol=1e-9)

    t = compare(
        {"convcore": convcore_step, **public, "torch": torch_step, "naive": naive_step},
        teaching,
        args.repeats,
        {"convcore": 200, **{k: 200 for k in public}, "torch": 200, "naive": 3},
    )
    print("teaching x (1,3,7,7) w (2,3,3,3) stride 2 pad 1, forward+backward:")
    print(
        f"  convcore {t['convcore'] * 1e6:9.1f} us   torch {t['torch'] * 1e6:9.1f} us   "
        f"naive {t['naive'] * 1e6:9.1f} us"
    )
    print(f"  convcore / torch = {t['convcore'] / t['torch']:.2f}x   (spec-level, as the trace engine calls it)")
    for name in public:
        print(f"  {name} {t[name] * 1e6:9.1f} us: {name} / torch = {t[name] / t['torch']:.2f}x   (target <= 1.0)")
    print(
        f"  convcore / naive = {t['convcore'] / t['naive']:.4f}x  (naive is {t['naive'] / t['convcore']:.0f}x slower)"
    )

    m = compare(
        {"convcore": convcore_step, **public, "torch": torch_step},
        medium,
        max(5, args.repeats // 3),
        {"convcore": 3, **{k: 3 for k in public}, "torch": 3},
    )
    print("medium x (8,16,32,32) w (32,16,3,3) stride 1 pad 1, forward+backward:")
    print(f"  convcore {m['convcore'] * 1e3:9.2f} ms   torch {m['torch'] * 1e3:9.2f} ms")
    print(f"  convcore / torch = {m['convcore'] / m['torch']:.2f}x")
    for name in public:
        print(f"  {name} {m[name] * 1e3:9.2f} ms: {name} / torch = {m[name] / m['torch']:.2f}x   (target <= 1.5)")

    # For context only: torch in float32 takes its oneDNN path; convcore stays float64.
    medium32 = tuple(a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in medium)
    c32 = compare(
        {"convcore": lambda *a: convcore_step(*medium), "torch32": torch_step},
        medium32,
        max(5, args.repeats // 3),
        {"convcore": 3, "torch32": 3},
    )
    print(
        f"  context: torch float32 {c32['torch32'] * 1e3:.2f} ms; convcore float64 / torch float32 = "
        f"{c32['convcore'] / c32['torch32']:.2f}x (no target)"
    )


if __name__ == "__main__":
    main()
