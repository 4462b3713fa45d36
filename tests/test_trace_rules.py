"""The rules every trace view obeys (design.md, the trace contract), one test per rule,
parametrised over ``RULE_CONFIGS``. A new view adds its configs to that list."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from trace_checks import (
    check_only_steps_that_compute,
    check_rule1_only_inputs_unwritten,
    check_rule2_replay_matches_header_and_core,
    check_rule3_value_is_running_state,
    check_rule4_forward_window_reads_receptive_field,
    check_rule5_counts,
    check_rule7_nhwc_is_nchw_transposed,
)

from convcore.trace import count_events, iter_trace


def make_config(x_shape, w_shape, seed=0, bias=True, **settings) -> dict:
    """A config with random normal x, w, b and dout as nested lists (NCHW / OIHW)."""
    from convcore.trace import resolve_config

    rng = np.random.default_rng(seed)
    config = {"x": rng.normal(size=x_shape).tolist(), "w": rng.normal(size=w_shape).tolist(), **settings}
    if bias:
        config["b"] = rng.normal(size=w_shape[0]).tolist()
    out_shape = resolve_config(config).spec.out_shape
    config["dout"] = rng.normal(size=out_shape).tolist()
    return config


def every_geometry_config(view: str, seed: int) -> dict:
    """``view`` on a spec that uses every geometry parameter at once: two groups, a
    stride and a dilation that differ per axis, four different pads."""
    return make_config(
        (2, 4, 6, 5),
        (4, 2, 2, 3),
        groups=2,
        stride=[2, 1],
        padding=[1, 0, 2, 1],
        dilation=[1, 2],
        view=view,
        seed=seed,
    )


def _direct_configs() -> list:
    c = []
    base = dict(x_shape=(2, 3, 5, 6), w_shape=(4, 3, 3, 2))
    grouped = dict(x_shape=(2, 4, 6, 5), w_shape=(4, 2, 2, 3), groups=2)
    geometry = dict(stride=[2, 1], padding=[1, 0, 2, 1], dilation=[1, 2])
    for gran in ("window", "mac"):
        for backward in ("fused", "separate"):
            c.append(
                pytest.param(
                    make_config(**base, padding=1, granularity=gran, backward=backward), id=f"direct-{gran}-{backward}"
                )
            )
            c.append(
                pytest.param(
                    make_config(**grouped, **geometry, activation="tanh", granularity=gran, backward=backward, seed=1),
                    id=f"direct-{gran}-{backward}-groups-geometry",
                )
            )
    c += [
        pytest.param(
            make_config(**base, padding="same", activation="relu", loop_order="jinf", seed=2),
            id="direct-window-same-relu-jinf",
        ),
        pytest.param(
            make_config(
                **base,
                bias=False,
                stride=2,
                activation="leaky_relu",
                seed=3,
                backward="separate",
                loop_order="fjni",
                dx_loop_order="ijfn",
            ),
            id="direct-window-separate-nobias-orders",
        ),
        pytest.param(
            make_config(
                (1, 2, 5, 5),
                (2, 2, 3, 3),
                padding=1,
                granularity="mac",
                backward="separate",
                loop_order="nfijklc",
                dx_loop_order="nijklfc",
                seed=4,
            ),
            id="direct-mac-seed004-orders",
        ),
        pytest.param(
            make_config(
                (1, 2, 4, 4),
                (2, 1, 2, 2),
                groups=2,
                seed=5,
                granularity="mac",
                activation="sigmoid",
                loop_order="lkjicfn",
            ),
            id="direct-mac-reversed-order",
        ),
        pytest.param(make_config(**base, padding=1, phases="forward", seed=6), id="direct-forward-only"),
        pytest.param(
            make_config(**base, padding=1, phases="backward", activation="relu", seed=7), id="direct-backward-only"
        ),
        pytest.param(
            make_config(**grouped, phases="backward", granularity="mac", backward="separate", seed=8),
            id="direct-mac-backward-only",
        ),
        # no padding and the identity: no pad, crop or activation phases (xp is x, z is out, ...)
        pytest.param(make_config(**base, stride=[1, 2], seed=9), id="direct-window-fused-nopad-identity"),
        pytest.param(make_config(**grouped, granularity="mac", seed=16), id="direct-mac-fused-nopad-identity"),
        pytest.param(
            make_config(**base, phases="forward", activation="relu", seed=17), id="direct-forward-only-nopad-relu"
        ),
    ]
    return c


def _matrix_and_transposed_configs() -> list:
    """The im2col and transposed views (window granularity only): geometry, groups,
    floor truncation, every phases mode; ``backward`` does not apply to them."""
    c = []
    base = dict(x_shape=(2, 3, 5, 6), w_shape=(4, 3, 3, 2))
    grouped = dict(x_shape=(2, 4, 6, 5), w_shape=(4, 2, 2, 3), groups=2)
    geometry = dict(stride=[2, 1], padding=[1, 0, 2, 1], dilation=[1, 2])
    for view, order in (("im2col", "jinf"), ("transposed", "jinf")):
        c += [
            pytest.param(make_config(**base, padding=1, view=view, seed=10), id=f"{view}-pad1"),
            pytest.param(
                make_config(**grouped, **geometry, activation="tanh", view=view, seed=11), id=f"{view}-groups-geometry"
            ),
            pytest.param(
                make_config(
                    **base, padding="same", activation="relu", loop_order=order, view=view, backward="separate", seed=12
                ),
                id=f"{view}-same-relu-order",
            ),
            pytest.param(
                make_config((1, 2, 6, 7), (3, 2, 3, 2), bias=False, stride=2, dilation=[2, 1], view=view, seed=13),
                id=f"{view}-nobias-floor-truncation",
            ),
            pytest.param(
                make_config(**grouped, padding=1, phases="forward", view=view, seed=14), id=f"{view}-forward-only"
            ),
            pytest.param(
                make_config(**grouped, stride=2, phases="backward", activation="sigmoid", view=view, seed=15),
                id=f"{view}-backward-only",
            ),
        ]
    return c


def _padding_mode_and_flip_configs() -> list:
    """Each padding mode that copies and the flipped kernel, over every view, both
    granularities, both backward modes, both copies and every phases mode."""
    base = dict(x_shape=(2, 3, 5, 6), w_shape=(4, 3, 3, 2))
    grouped = dict(x_shape=(2, 4, 6, 5), w_shape=(4, 2, 2, 3), groups=2)
    geometry = dict(stride=[2, 1], padding=[1, 0, 2, 1], dilation=[1, 2])
    c = []
    for seed, mode in enumerate(("reflect", "replicate", "circular")):
        c += [
            pytest.param(make_config(**base, padding=1, padding_mode=mode, seed=20 + seed), id=f"direct-{mode}"),
            pytest.param(
                make_config(
                    **grouped,
                    **geometry,
                    padding_mode=mode,
                    granularity="mac",
                    backward="separate",
                    copies="each",
                    activation="tanh",
                    seed=23 + seed,
                ),
                id=f"direct-mac-{mode}-geometry-rows",
            ),  # fmt: skip
        ]
    c += [
        pytest.param(
            make_config(**base, padding=1, padding_mode="reflect", view="im2col", seed=26), id="im2col-reflect"
        ),
        pytest.param(
            make_config(**grouped, **geometry, padding_mode="replicate", view="transposed", copies="each", seed=27),
            id="transposed-replicate-geometry-rows",
        ),
        pytest.param(make_config(**base, padding=1, flip=True, seed=28), id="direct-flip"),
        pytest.param(
            make_config(**grouped, **geometry, flip=True, granularity="mac", activation="relu", seed=29),
            id="direct-mac-flip-geometry",
        ),
        pytest.param(
            make_config(**base, flip=True, padding=1, padding_mode="circular", phases="backward", seed=30),
            id="direct-flip-circular-backward-only",
        ),
        pytest.param(
            make_config(**base, flip=True, phases="forward", view="im2col", seed=31), id="im2col-flip-forward"
        ),
        pytest.param(
            make_config(**grouped, **geometry, flip=True, view="transposed", backward="separate", seed=32),
            id="transposed-flip-geometry",
        ),
    ]
    return c


# A new view appends pytest.param(config, id="view-...") entries here.
RULE_CONFIGS = _direct_configs() + _matrix_and_transposed_configs() + _padding_mode_and_flip_configs()


RULES = {
    "rule1-only-inputs-are-unwritten": check_rule1_only_inputs_unwritten,
    "rule2-replay-reproduces-header-and-core": check_rule2_replay_matches_header_and_core,
    "rule3-value-is-running-state": check_rule3_value_is_running_state,
    "rule4-forward-window-reads-receptive-field": check_rule4_forward_window_reads_receptive_field,
    "rule5-count-events-equals-events-yielded": check_rule5_counts,
    "rule7-nhwc-is-nchw-transposed": check_rule7_nhwc_is_nchw_transposed,
    "only-steps-that-compute": check_only_steps_that_compute,
}


@pytest.mark.parametrize("config", RULE_CONFIGS)
@pytest.mark.parametrize("rule", list(RULES))
def test_every_view_obeys_the_rule(rule, config):
    RULES[rule](config)


@pytest.mark.parametrize("config", RULE_CONFIGS)
def test_extra_shapes_are_the_shapes_of_the_views_tensors(config):
    # a server holds View.extra_shapes to its limits before computing: it must be true
    from convcore.trace import resolve_config, trace_header
    from convcore.trace.axes import kind_of

    rc = resolve_config(config)
    tensors = trace_header(rc)["tensors"]
    for name, shape in rc.view_impl.extra_shapes(rc.spec).items():
        if name in tensors:  # a forward-only trace has no backward tensors
            perm = kind_of(name).perm(rc.layout)
            internal = (
                tuple(np.array(tensors[name]["shape"])[np.argsort(perm)]) if perm else tuple(tensors[name]["shape"])
            )
            assert internal == tuple(shape), name


LAZY_CONFIG = {
    "x": {"fill": "normal", "shape": [2, 4, 12, 12], "seed": 0},
    "w": {"fill": "normal", "shape": [8, 4, 3, 3], "seed": 1},
    "padding": 1,
    "granularity": "mac",
    "phases": "forward",
}


def test_rule6_iter_trace_is_lazy():
    """Iterating ~83,000 events without keeping them: the traced peak stays far below
    what holding them would take (the bench iterates a million)."""
    n = count_events(LAZY_CONFIG)
    assert n > 80_000
    tracemalloc.start()
    try:
        stream = iter_trace(LAZY_CONFIG)
        next(stream)  # the header: tensors are allowed
        _, before = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        seen = 0
        for _ in stream:
            seen += 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert seen == n + 1  # events and the end line
    # one event as a dict is ~1.5 kB; holding them all would be > 100 MB
    assert peak < 8_000_000, f"peak {peak} bytes while iterating {n} events"
