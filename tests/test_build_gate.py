"""The build gate's accounting under every interleaving of grant, cancel, timeout and
release (``convscope.traces.build_slots``): whatever happens, every slot and byte comes back.

The race of issue 28 first, written out: a slot frees in the same tick as the waiter
is cancelled (its client hung up). Then random schedules of many waiters (hypothesis),
checked at every tick: never more running than slots, never more bytes held than the
buffer, and all of it back at the end.
"""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import examples

from convscope.http.errors import ApiError
from convscope.traces.build_slots import BuildGate


def free(gate: BuildGate) -> tuple[int, int, int]:
    return gate.running, gate.waiting, gate.held_bytes


def test_a_grant_racing_a_cancel_goes_back():
    async def main():
        gate = BuildGate(slots=1, timeout=5, buffer_bytes=100)
        holder = gate.reserve(10)
        await holder.__aenter__()
        waiter = asyncio.ensure_future(_hold(gate, 10, ticks=1))
        await asyncio.sleep(0)  # the waiter is queued
        assert gate.waiting == 1
        await holder.__aexit__(None, None, None)  # grants the waiter, synchronously
        waiter.cancel()  # ... and its client hangs up in the same tick
        with pytest.raises(asyncio.CancelledError):
            await waiter
        return free(gate)

    assert asyncio.run(main()) == (0, 0, 0)


def test_a_timeout_racing_a_grant_leaves_nothing_taken():
    async def main():
        gate = BuildGate(slots=1, timeout=0.05, buffer_bytes=100)
        async with gate.reserve(10):
            waiter = asyncio.ensure_future(_hold(gate, 10, ticks=1))
            await asyncio.sleep(0.1)  # the waiter's deadline passes while the slot is held
        with pytest.raises(ApiError) as refusal:
            await waiter
        return refusal.value.status_code, free(gate)

    assert asyncio.run(main()) == (503, (0, 0, 0))


def test_a_small_build_does_not_wait_behind_one_that_does_not_fit_yet():
    async def main():
        gate = BuildGate(slots=2, timeout=1, buffer_bytes=100)
        order = []
        async with gate.reserve(60):
            big = asyncio.ensure_future(_hold(gate, 60, ticks=1, log=order, name="big"))
            await asyncio.sleep(0)
            small = asyncio.ensure_future(_hold(gate, 30, ticks=1, log=order, name="small"))
            await asyncio.sleep(0.01)
            assert order == ["small"]  # served while the big one still waits for bytes
        await asyncio.gather(big, small)
        return order, free(gate)

    assert asyncio.run(main()) == (["small", "big"], (0, 0, 0))


def test_the_slot_goes_back_when_the_build_ends_and_the_bytes_when_the_reader_is_done():
    async def main():
        gate = BuildGate(slots=1, timeout=1, buffer_bytes=100)
        async with gate.reserve(80) as grant:
            grant.end_build()
            grant.shrink(30)  # the build was smaller than predicted
            seen = free(gate)
            async with gate.reserve(70):  # another build runs while the first is read
                during = free(gate)
        return seen, during, free(gate)

    assert asyncio.run(main()) == ((0, 0, 30), (1, 0, 100), (0, 0, 0))


def test_a_reply_larger_than_the_buffer_is_refused_naming_the_numbers():
    async def main():
        gate = BuildGate(slots=1, timeout=1, buffer_bytes=100)
        with pytest.raises(ApiError) as refusal:
            async with gate.reserve(101):
                pass
        return refusal.value

    refusal = asyncio.run(main())
    assert refusal.status_code == 413 and "101" in refusal.msg and "100" in refusal.msg


async def _hold(gate: BuildGate, nbytes: int, ticks: int, log: list | None = None, name: str = "") -> None:
    async with gate.reserve(nbytes) as grant:
        if log is not None:
            log.append(name)
        for _ in range(ticks):
            await asyncio.sleep(0)
        grant.end_build()
        await asyncio.sleep(0)


waiters = st.lists(
    st.tuples(
        st.integers(0, 6),  # arrives after this many ticks
        st.integers(0, 60),  # bytes asked
        st.integers(0, 6),  # ticks it holds the slot
        st.one_of(st.none(), st.integers(0, 12)),  # cancelled after this many ticks (its client left)
    ),
    min_size=1,
    max_size=16,
)


@settings(max_examples=examples(300), deadline=None)
@given(waiters=waiters, slots=st.integers(1, 3))
def test_random_schedules_give_every_slot_and_byte_back(waiters, slots):
    async def one(gate, arrive, nbytes, hold):
        for _ in range(arrive):
            await asyncio.sleep(0)
        try:
            await _hold(gate, nbytes, hold)
        except ApiError:
            pass  # timed out: a 503

    async def main():
        gate = BuildGate(slots=slots, timeout=0.002, buffer_bytes=100)
        tasks = [asyncio.ensure_future(one(gate, a, n, h)) for a, n, h, _ in waiters]
        cancels = {k: c for k, (_, _, _, c) in enumerate(waiters) if c is not None}
        tick = 0
        while not all(t.done() for t in tasks):
            for k, at in cancels.items():
                if at == tick:
                    tasks[k].cancel()
            assert 0 <= gate.running <= slots
            assert 0 <= gate.held_bytes <= gate.buffer_bytes
            await asyncio.sleep(0 if tick < 40 else 0.001)
            tick += 1
        await asyncio.gather(*tasks, return_exceptions=True)
        return free(gate)

    assert asyncio.run(main()) == (0, 0, 0)
