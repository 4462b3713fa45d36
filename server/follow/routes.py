"""Follow mode's HTTP API, under ``/api/follow``.

    POST /api/follow/sessions                     open a session: {session, code, secret, driver}
    GET  /api/follow/join/{code}                  a join code's session
    PUT  /api/follow/sessions/{session}/state     drive: {secret, driver, state} -> {seq}
    POST /api/follow/sessions/{session}/takeover  {secret} -> {driver}: this page drives now
    POST /api/follow/sessions/{session}/end       {secret}: close it
    GET  /api/follow/sessions/{session}/events    Server-Sent Events: the latest state at
         once (or, after a reconnect, if newer than Last-Event-ID), each newer state, an end
    GET  /api/follow                              the broker, open sessions and the limits

Every request that changes a session carries its secret; the server hashes it and
compares with the session id. A wrong secret gets 403, a page that another page took
over from gets 409.

In debug mode (CONVSCOPE_DEBUG=1, for tests) a state's publication and the event stream
name the worker process that served them in ``X-ConvScope-Worker``: a test of several
workers can see a state cross from one worker to another.
"""

from __future__ import annotations

import asyncio
import hmac
import math
import os
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Path, Request, Response
from fastapi.responses import JSONResponse
from fastapi.sse import KEEPALIVE_COMMENT, EventSourceResponse, format_sse_event
from pydantic import BaseModel, Field

from ..api.schemas import ErrorBody
from ..http.errors import ApiError, error_body
from ..http.fair_share import TokenBucket
from ..http.stopping import stopping
from .broker import Broker, BrokerDown, CodeTaken, MemoryBroker, NoSession, StaleDriver, TooManySessions
from .channel import KEEPALIVE, Message
from .join_qr import join_qr_svg
from .session import CODE_LENGTH, SESSION_ID_HEX, StateError, encode_state, new_credentials, normal_code, secret_matches

__all__ = ["broker_down", "broker_of", "make_broker", "router"]

router = APIRouter(prefix="/api/follow", tags=["follow"])

SessionId = Annotated[
    str, Path(pattern=f"^[0-9a-f]{{{SESSION_ID_HEX}}}$", description="the session id (hash of its secret)")
]
Secret = Annotated[str, Field(min_length=1, max_length=256, description="the secret the session was opened with")]
RETRY = format_sse_event(retry=1000)  # a dropped EventSource reconnects after 1 s
SHUTDOWN = Message(seq=0, data='{"reason":"shutdown"}', end=True)  # this worker stops
ENDED = Message(seq=0, data='{"reason":"ended"}', end=True)
WORKER_HEADER = "X-ConvScope-Worker"


class NewSession(BaseModel):
    state: dict[str, Any] | None = Field(None, description="the teacher's first state (setup, view, step)")


class SessionCreated(BaseModel):
    session: str = Field(description="session id: the channel students follow")
    code: str = Field(description="join code to show the class")
    secret: str = Field(description="keep it in the teacher's page: it drives the session")
    driver: int = Field(description="this page's driver number (a take-over makes a new one)")
    join_path: str
    join_url: str = Field(
        description="the join link: on the server's public address (convscope serve --classroom), "
        "else on the address this request came to"
    )
    join_qr_path: str = Field(description="the join link's QR code (an SVG)")
    events_path: str
    idle_seconds: float = Field(description="the session ends after this long without the teacher")


class Drive(BaseModel):
    secret: Secret
    driver: int = Field(ge=1, le=2**31, description="the driver number the page got")
    state: dict[str, Any] = Field(description="the teacher's state: lesson/setup, view settings, step")


class Published(BaseModel):
    seq: int = Field(description="the state's number, the SSE event id subscribers see")
    followers: int = Field(0, description="event streams following the session now (its students' pages)")


class Authority(BaseModel):
    secret: Secret


class TookOver(BaseModel):
    driver: int


class Joined(BaseModel):
    session: str
    code: str
    events_path: str


class FollowInfo(BaseModel):
    broker: str
    open_sessions: int
    max_sessions: int
    idle_seconds: float
    max_state_bytes: int
    worker: int | None = Field(None, description="this worker's process id (debug mode only, for tests)")


def make_broker(
    max_sessions: int, idle_seconds: float, redis_url: str = "", unpublished_seconds: float | None = None
) -> Broker:
    """The Redis broker when ``redis_url`` is set, else the in-process one."""
    if redis_url:
        from .redis_broker import RedisBroker

        return RedisBroker(
            redis_url, max_sessions=max_sessions, idle_seconds=idle_seconds, unpublished_seconds=unpublished_seconds
        )
    return MemoryBroker(max_sessions=max_sessions, idle_seconds=idle_seconds, unpublished_seconds=unpublished_seconds)


def broker_of(request: Request) -> Broker:
    """The app's broker, made on first use (inside the worker's event loop)."""
    state = request.app.state
    broker = getattr(state, "follow_broker", None)
    if broker is None:
        s = state.settings
        broker = state.follow_broker = make_broker(
            s.follow_max_sessions,
            s.follow_idle_seconds,
            s.follow_redis_url,
            unpublished_seconds=s.follow_unpublished_seconds,
        )
    return broker


BrokerDep = Annotated[Broker, Depends(broker_of)]


async def broker_down(request: Request, exc: Exception) -> JSONResponse:
    """The sessions' store does not answer (Redis down or restarting): a 503 that the
    page tries again, with the store's own words."""
    return JSONResponse(
        error_body(["request"], f"{exc}; the page tries again by itself", "unavailable"),
        status_code=503,
        headers={"Retry-After": "2"},
    )


def _no_session(session: str) -> ApiError:
    return ApiError(
        404, ["path", "session"], f"no follow session {session} (it ended, or expired after being idle)", "not_found"
    )


def _check_secret(secret: str, session: str) -> None:
    if not secret_matches(secret, session):
        raise ApiError(
            403,
            ["body", "secret"],
            f"the secret is not the secret of session {session}: only the teacher's page that opened it can drive it",
            "forbidden",
        )


def _state_text(state: dict[str, Any], request: Request) -> str:
    try:
        return encode_state(state, request.app.state.settings.follow_max_state_bytes)
    except StateError as exc:
        raise ApiError(
            413 if exc.too_large else 422, ["body", "state"], str(exc), "too_large" if exc.too_large else "value_error"
        ) from exc


def _worker(request: Request) -> dict[str, str]:
    """The X-ConvScope-Worker header in debug mode (this worker's process id), else none."""
    return {WORKER_HEADER: str(os.getpid())} if request.app.state.settings.debug else {}


def _refusals(*codes: int) -> dict[int | str, dict[str, Any]]:
    return {code: {"model": ErrorBody} for code in codes}


@router.get("", response_model=FollowInfo, summary="Follow mode's broker and limits")
async def info(request: Request, broker: BrokerDep) -> FollowInfo:
    s = request.app.state.settings
    return FollowInfo(
        broker=type(broker).__name__.removesuffix("Broker").lower(),
        open_sessions=await broker.count(),
        max_sessions=s.follow_max_sessions,
        idle_seconds=s.follow_idle_seconds,
        max_state_bytes=s.follow_max_state_bytes,
        worker=os.getpid() if s.debug else None,
    )


def _check_teacher(authorization: str | None, settings: Any) -> None:
    """Only the teacher's page opens sessions: it sends the server's teacher token as
    ``Authorization: Bearer <token>`` (from the teacher link ``convscope serve``
    prints). No address is exempt; students need no token to follow."""
    expected = settings.teacher_token
    scheme, _, given = (authorization or "").partition(" ")
    if not expected:
        raise ApiError(
            401,
            ["header", "authorization"],
            "this server has no teacher token, so no class session "
            "can be opened: start it with convscope serve, which prints the teacher link, or set "
            "CONVSCOPE_TEACHER_TOKEN",
            "unauthorized",
            headers={"WWW-Authenticate": "Bearer"},
        )
    if scheme.lower() != "bearer" or not given:
        raise ApiError(
            401,
            ["header", "authorization"],
            "opening a class session needs the teacher token "
            "(Authorization: Bearer <token>): open the teacher link convscope serve printed",
            "unauthorized",
            headers={"WWW-Authenticate": "Bearer"},
        )
    if not hmac.compare_digest(given.strip().encode(), expected.encode()):
        raise ApiError(
            401,
            ["header", "authorization"],
            "the teacher token is not this server's: open the teacher link convscope serve printed at its start",
            "unauthorized",
            headers={"WWW-Authenticate": "Bearer"},
        )


@router.post(
    "/sessions",
    status_code=201,
    response_model=SessionCreated,
    summary="Open a follow session (the teacher's token)",
    responses=_refusals(401, 413, 422, 429, 503),
)
async def open_session(
    body: NewSession,
    request: Request,
    broker: BrokerDep,
    authorization: Annotated[str | None, Header(max_length=300, description="Bearer <the teacher token>")] = None,
) -> SessionCreated:
    if request.app.state.settings.follow_max_sessions == 0:
        raise ApiError(
            503,
            ["body"],
            "follow mode is off on this server (CONVSCOPE_FOLLOW_MAX_SESSIONS=0; several workers need CONVSCOPE_FOLLOW_REDIS_URL)",
            "follow_off",
        )
    _check_teacher(authorization, request.app.state.settings)
    state_text = None if body.state is None else _state_text(body.state, request)
    for _ in range(5):
        credentials = new_credentials()
        try:
            await broker.create(credentials, state_text)
            break
        except CodeTaken:
            continue
        except TooManySessions as exc:
            raise ApiError(
                429,
                ["body"],
                f"{exc.open_sessions} follow sessions are open and this server allows {exc.limit} "
                "(CONVSCOPE_FOLLOW_MAX_SESSIONS); try again when one ends or expires",
                "too_many_sessions",
            ) from exc
    else:  # pragma: no cover - five clashes in a row
        raise ApiError(503, ["body"], "no free join code was found; try again", "unavailable")
    session = credentials.session
    return SessionCreated(
        session=session,
        code=credentials.code,
        secret=credentials.secret,
        driver=1,
        join_path=f"/?follow={credentials.code}",
        join_url=_join_url(request, credentials.code),
        join_qr_path=f"/api/follow/join/{credentials.code}/qr.svg",
        events_path=f"/api/follow/sessions/{session}/events",
        idle_seconds=broker.idle_seconds,
    )


def _join_url(request: Request, code: str) -> str:
    """The link a student opens: the public address when the server has one (a server on
    every interface knows which one students reach), else the one this request used."""
    return f"{request.app.state.settings.public_url or request.base_url}?follow={code}"


async def _resolve(broker: Broker, code: str) -> tuple[str, str]:
    wanted = normal_code(code)
    try:
        return wanted, await broker.resolve(wanted)
    except NoSession:
        raise ApiError(
            404,
            ["path", "code"],
            f"no follow session has the join code {wanted!r} (codes have {CODE_LENGTH} letters and digits; a session ends when its teacher is idle)",
            "not_found",
        ) from None


JoinCode = Annotated[str, Path(min_length=1, max_length=32)]


@router.get("/join/{code}", response_model=Joined, summary="The session of a join code", responses=_refusals(404))
async def join(broker: BrokerDep, code: JoinCode) -> Joined:
    wanted, session = await _resolve(broker, code)
    return Joined(session=session, code=wanted, events_path=f"/api/follow/sessions/{session}/events")


QR_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {"description": "the QR code of the join link", "content": {"image/svg+xml": {"schema": {"type": "string"}}}},
    **_refusals(404),
}


@router.get(
    "/join/{code}/qr.svg", response_class=Response, summary="The QR code of a join code's link", responses=QR_RESPONSE
)
async def join_qr(request: Request, broker: BrokerDep, code: JoinCode) -> Response:
    wanted, _ = await _resolve(broker, code)  # (a lookup like /join: the same per-client rate)
    svg = join_qr_svg(_join_url(request, wanted))
    return Response(svg, media_type="image/svg+xml", headers={"Cache-Control": "private, max-age=600"})


PACED_SESSIONS = 4096  # sessions whose publishing pace this worker remembers (least recent forgotten)


def _check_pace(session: str, request: Request) -> None:
    """At most ``follow_states_per_second`` states a second to one session (bursts of
    twice that): a page's step keys stay well under it, a runaway script does not."""
    s = request.app.state.settings
    paces = getattr(request.app.state, "follow_paces", None)
    if paces is None:
        paces = request.app.state.follow_paces = OrderedDict()
    bucket = paces.get(session)
    if bucket is None:
        bucket = paces[session] = TokenBucket(s.follow_states_per_second, 2 * s.follow_states_per_second)
        while len(paces) > PACED_SESSIONS:
            paces.popitem(last=False)
    paces.move_to_end(session)
    wait = bucket.take(time.monotonic())
    if wait:
        raise ApiError(
            429,
            ["body", "state"],
            f"states come faster than this server takes them: {s.follow_states_per_second:g} a second to one session",
            "too_many_requests",
            headers={"Retry-After": str(max(1, math.ceil(wait)))},
        )


@router.put(
    "/sessions/{session}/state",
    response_model=Published,
    summary="Drive: publish the teacher's state",
    responses=_refusals(403, 404, 409, 413, 422, 429),
)
async def drive(session: SessionId, body: Drive, request: Request, response: Response, broker: BrokerDep) -> Published:
    response.headers.update(_worker(request))
    _check_secret(body.secret, session)
    _check_pace(session, request)
    state_text = _state_text(body.state, request)
    try:
        seq = await broker.publish(session, body.driver, state_text)
        return Published(seq=seq, followers=await broker.followers(session))
    except NoSession:
        raise _no_session(session) from None
    except StaleDriver as exc:
        raise ApiError(
            409,
            ["body", "driver"],
            f"another page took over this session (driver {exc.current}, this page is {body.driver}); take over again to drive",
            "conflict",
        ) from None


@router.post(
    "/sessions/{session}/takeover",
    response_model=TookOver,
    summary="Take over driving (needs the secret)",
    responses=_refusals(403, 404),
)
async def take_over(session: SessionId, body: Authority, broker: BrokerDep) -> TookOver:
    _check_secret(body.secret, session)
    try:
        return TookOver(driver=await broker.take_over(session))
    except NoSession:
        raise _no_session(session) from None


@router.post(
    "/sessions/{session}/end",
    status_code=204,
    summary="End the session (needs the secret)",
    responses=_refusals(403, 404),
)
async def end(session: SessionId, body: Authority, broker: BrokerDep) -> None:
    _check_secret(body.secret, session)
    try:
        await broker.end(session)
    except NoSession:
        raise _no_session(session) from None


async def _open_session(session: SessionId, broker: BrokerDep) -> str:
    if not await broker.exists(session):
        raise _no_session(session)
    return session


def _last_seq(header: str | None) -> int:
    """The state a reconnecting EventSource has seen (its Last-Event-ID); 0 if none."""
    try:
        return max(0, int(header)) if header is not None else 0
    except ValueError:
        return 0


SSE_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Server-Sent Events: `state` events, then one `end`.",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    },
    **_refusals(404),
}


# Not response_class=EventSourceResponse: FastAPI would then treat the function as an
# item generator and encode every item for every subscriber; here each state's bytes
# are made once (Message.wire) and the route returns the response itself.
@router.get(
    "/sessions/{session}/events",
    response_class=Response,
    summary="Follow: the session's states as Server-Sent Events",
    responses=SSE_RESPONSE,
)
async def events(
    request: Request,
    broker: BrokerDep,
    session: Annotated[str, Depends(_open_session)],
    last_event_id: Annotated[str | None, Header(max_length=20)] = None,
) -> EventSourceResponse:
    """Events ``state`` (id = the state's number, data = ``{seq, driver, state}``) and a
    last ``end`` (data = ``{reason}``: ended or expired). Each state is encoded once and
    the same bytes go to every subscriber."""
    messages = broker.subscribe(session, _last_seq(last_event_id))

    async def stream() -> AsyncIterator[bytes]:
        stop = asyncio.ensure_future(stopping().wait())
        following: asyncio.Future | None = None
        try:
            yield RETRY
            while True:
                following = asyncio.ensure_future(anext(messages))
                await asyncio.wait({following, stop}, return_when=asyncio.FIRST_COMPLETED)
                if not following.done():  # the worker stops: say so, so pages come back with it
                    yield SHUTDOWN.wire
                    return
                try:
                    message = following.result()
                except StopAsyncIteration:
                    return
                except BrokerDown:  # the store went away: the page reconnects and asks again
                    return
                except NoSession:  # it ended between the check and the first read
                    yield ENDED.wire
                    return
                yield KEEPALIVE_COMMENT if message is KEEPALIVE else message.wire
                if message.end:
                    return
        finally:
            stop.cancel()
            if following is not None and not following.done():
                following.cancel()  # (the generator is left before it is closed)
                await asyncio.wait({following})
            await messages.aclose()  # the subscriber leaves its channel now, not at GC

    return EventSourceResponse(
        stream(), headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no", **_worker(request)}
    )
