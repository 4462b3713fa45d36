"""One settings object for the service, read from CONVSCOPE_* environment variables.

pydantic validates the variables' text (types and bounds below); a bad one raises
``SettingsError`` naming the variable, its value and what is wrong, and
``convscope serve`` stops with that message before it binds. The limits are checked
before any computing and published by ``GET /api/health``. ``convscope serve`` options
set the same variables, so every uvicorn worker reads the same values.

``Settings(...)`` with keyword arguments reads no environment (tests and embedders
say what they want); ``Settings.from_env()`` reads ``os.environ`` or a given mapping.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

__all__ = ["ENV_PREFIX", "Settings", "SettingsError"]

ENV_PREFIX = "CONVSCOPE_"

# the variables from_env is reading, for an error to name the variable; None: arguments
_ENVIRON: ContextVar[Mapping[str, str] | None] = ContextVar("convscope_environ", default=None)


class SettingsError(ValueError):
    """An environment variable (or argument) that does not hold a valid setting."""


Names = tuple[str, ...]  # a variable holds them comma-separated


class Settings(BaseModel):
    """Limits and switches of one ConvScope service (each field is ``CONVSCOPE_<NAME>``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_tensor_elements: int = Field(4096, ge=1, description="elements allowed in any one tensor of a trace")
    max_events: int = Field(20000, ge=1, description="events allowed in one trace")
    max_trace_bytes: int = Field(
        16_000_000,
        ge=10_000,
        description="predicted bytes allowed for one trace document or stream "
        "(convcore.trace.cost: an upper bound, so every reply stays under it)",
    )
    max_work: int = Field(
        60_000,
        ge=1,
        description="predicted CPU allowed for one trace, in event-equivalents "
        "(events + cells written / 32; about 0.5 s on a 2-core laptop)",
    )
    max_body_bytes: int = Field(1_000_000, ge=1, description="bytes allowed in one request body")
    max_abs_value: float = Field(1e6, gt=0, description="largest magnitude allowed for an input number")
    cors_origins: Names = Field((), description="origins allowed to call the API from another site; empty = CORS off")
    allowed_hosts: Names = Field(
        (),
        description="Host names accepted besides 127.0.0.1, localhost and the bound address "
        "(comma-separated; '*' accepts any)",
    )
    bind_host: str = Field(
        "127.0.0.1",
        description="the address the server is bound to (set by convscope serve); "
        "with 0.0.0.0 or :: the machine's own names and addresses are accepted Hosts",
    )
    public_url: str = Field(
        "",
        max_length=200,
        pattern=r"^(https?://[^\s/]+/)?$",
        description="the address students open, "
        "e.g. http://192.168.1.20:8000/ (set by convscope serve --classroom); follow mode's join links use it",
    )
    debug: bool = Field(False, description="expose GET /api/debug/stats (stream counters; for tests)")
    stream_chunk_events: int = Field(256, ge=1, description="events pulled from the trace generator per thread hop")
    cache_entries: int = Field(64, ge=0, description="encoded trace documents kept in memory (0 = no cache)")
    max_builds: int = Field(
        2,
        ge=1,
        description="builds and streams running at once in one worker "
        "(builds are CPU-bound Python: one worker runs one at a time; more workers for more)",
    )
    queue_timeout: float = Field(5.0, gt=0, description="seconds a request waits for a build slot before a 503")
    buffer_bytes: int = Field(
        128_000_000,
        ge=10_000,
        description="bytes of built replies one worker holds for their readers at once "
        "(each build reserves its predicted size first; at least max_trace_bytes)",
    )
    min_send_rate: float = Field(
        32_768,
        gt=0,
        description="bytes per second a reader must take a reply at, "
        "after send_grace seconds; a slower reader is cut off",
    )
    send_grace: float = Field(10.0, gt=0, description="seconds a reply may take before min_send_rate applies")
    request_timeout: float = Field(15.0, gt=0, description="seconds a client has to send its request headers and body")
    idle_timeout: float = Field(20.0, gt=0, description="seconds a reply may wait for a client that does not read")
    shutdown_timeout: float = Field(5.0, gt=0, description="seconds a graceful shutdown waits for open replies")
    max_connections: int = Field(
        0,
        ge=0,
        description="open connections one worker accepts; past it a new "
        "connection gets a fast 503 (0: the descriptor limit less 64, said at start)",
    )
    client_max_connections: int = Field(
        64,
        ge=1,
        description="open connections one client address may have "
        "(the connection's own peer: behind a reverse proxy every student is "
        "the proxy, so raise it there)",
    )
    client_max_replies: int = Field(
        4,
        ge=1,
        description="traces, streams and lesson files one client address "
        "may have being built or read at once; past it a 429",
    )
    client_max_follows: int = Field(8, ge=1, description="class sessions one client address may follow at once")
    client_requests_per_second: float = Field(
        30.0,
        gt=0,
        description="API requests a second one client address may make, on average (the page's files are not counted)",
    )
    client_burst: int = Field(
        200,
        ge=1,
        description="API requests one client address may make at once before client_requests_per_second applies",
    )
    follow_opens_per_minute: int = Field(6, ge=1, description="class sessions one client address may open a minute")
    joins_per_minute: int = Field(60, ge=1, description="join codes one client address may look up a minute")
    teacher_token: str = Field(
        "",
        max_length=256,
        repr=False,
        description="the token that opens class sessions "
        "(Authorization: Bearer); convscope serve makes one and prints the teacher "
        "link; empty: no session can be opened",
    )
    follow_unpublished_seconds: float = Field(
        300.0, gt=0, description="seconds a follow session that no state was published to stays open"
    )
    follow_states_per_second: float = Field(
        20.0,
        gt=0,
        description="states a teacher may publish a second to one session, on average (bursts of twice that)",
    )
    follow_max_sessions: int = Field(50, ge=0, description="follow mode's open sessions (0 = follow mode off)")
    follow_idle_seconds: float = Field(3600.0, gt=0, description="idle seconds before a follow session ends")
    follow_max_state_bytes: int = Field(65536, ge=2, description="bytes of one teacher state in follow mode")
    follow_max_answers: int = Field(1000, ge=1, description="answers one class question takes (one per student page)")
    follow_redis_url: str = Field(
        "", description="Redis for follow sessions shared by workers and hosts ('' = in-process)"
    )

    @model_validator(mode="after")
    def _buffer_holds_a_trace(self) -> Settings:
        if self.buffer_bytes < self.max_trace_bytes:
            raise ValueError(
                f"{ENV_PREFIX}BUFFER_BYTES ({self.buffer_bytes}) must be at least "
                f"{ENV_PREFIX}MAX_TRACE_BYTES ({self.max_trace_bytes}): the largest allowed trace "
                "must fit in the reply buffer"
            )
        return self

    @field_validator("follow_redis_url", mode="before")
    @classmethod
    def _stripped(cls, value: Any) -> Any:
        return value.strip() if isinstance(value, str) else value

    @field_validator("cors_origins", "allowed_hosts", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise SettingsError(_explain(exc, _ENVIRON.get())) from None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``CONVSCOPE_<FIELD>`` variables (e.g. ``CONVSCOPE_MAX_EVENTS``);
        unset variables keep the defaults. Raises SettingsError naming the variable."""
        environ = os.environ if environ is None else environ
        given = {
            name: environ[variable] for name in cls.model_fields if (variable := ENV_PREFIX + name.upper()) in environ
        }
        token = _ENVIRON.set(environ)
        try:
            return cls(**given)  # each variable's text, validated as any value is
        finally:
            _ENVIRON.reset(token)

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes`` applied and validated (SettingsError names the field)."""
        return type(self)(**{**self.model_dump(), **changes})

    def to_env(self) -> dict[str, str]:
        """These settings as CONVSCOPE_* variables (what ``convscope serve`` exports)."""
        env: dict[str, str] = {}
        for name, value in self.model_dump().items():
            if isinstance(value, bool):
                text = "1" if value else "0"
            elif isinstance(value, tuple):
                text = ",".join(value)
            else:
                text = str(value)
            env[ENV_PREFIX + name.upper()] = text
        return env

    def limits(self) -> dict[str, float | int]:
        """The limits a client must respect, as published by /api/health."""
        names = (
            "max_tensor_elements",
            "max_events",
            "max_trace_bytes",
            "max_work",
            "max_body_bytes",
            "max_abs_value",
            "max_builds",
            "queue_timeout",
            "request_timeout",
            "idle_timeout",
            "min_send_rate",
            "send_grace",
        )
        return {name: getattr(self, name) for name in names}


def _explain(exc: ValidationError, environ: Mapping[str, str] | None) -> str:
    """The first problem, naming the variable and its text when it came from one."""
    problems = []
    for error in exc.errors():
        if not error.get("loc"):  # a rule between settings: its message names them
            problems.append(str(error["msg"]).removeprefix("Value error, "))
            continue
        field = str(error["loc"][0])
        variable = ENV_PREFIX + field.upper()
        if environ is not None and variable in environ:
            where = f"{variable}={environ[variable]!r}"
        else:
            where = f"{field}={error.get('input')!r}"
        problems.append(f"{where} is not valid: {error['msg']}")
    return "; ".join(problems)
