"""The pure parts of a follow session: join codes, secrets, the secret's hash check,
and the teacher's state as bounded JSON text."""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import secrets
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CODE_ALPHABET",
    "CODE_LENGTH",
    "Credentials",
    "StateError",
    "encode_state",
    "new_credentials",
    "normal_code",
    "secret_matches",
    "session_id_of",
]

# no 0/O, 1/I/L: a code read off a projector is typed without guessing
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
SESSION_ID_HEX = 32  # 128 bits of the secret's SHA-256


def session_id_of(secret: str) -> str:
    """The session id (the subscribers' channel) of a secret: its SHA-256, cut to 32 hex
    digits. Knowing the id does not give the secret."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()[:SESSION_ID_HEX]


def secret_matches(secret: str, session_id: str) -> bool:
    """Whether ``secret`` is the secret of ``session_id`` (constant-time compare)."""
    return hmac.compare_digest(session_id_of(secret), session_id)


def normal_code(code: str) -> str:
    """A join code as stored: upper case, spaces and dashes dropped ("ab3-k9q" -> "AB3K9Q")."""
    return "".join(code.split()).replace("-", "").upper()


@dataclass(frozen=True)
class Credentials:
    """What the teacher gets: ``secret`` (keep it), ``session`` (its hash) and ``code``."""

    secret: str
    session: str
    code: str


def new_credentials() -> Credentials:
    secret = secrets.token_urlsafe(32)
    code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
    return Credentials(secret=secret, session=session_id_of(secret), code=code)


class StateError(ValueError):
    """A state the server does not keep: ``too_large`` says whether it is a size refusal."""

    def __init__(self, msg: str, too_large: bool = False):
        super().__init__(msg)
        self.too_large = too_large


def _check_finite(value: Any) -> None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise StateError(f"the state holds the number {item}, which JSON cannot carry")
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def encode_state(state: dict[str, Any], max_bytes: int) -> str:
    """The teacher's state as compact JSON text of at most ``max_bytes`` bytes (UTF-8).

    Raises StateError for a state holding NaN or infinity, or over the size."""
    _check_finite(state)
    text = json.dumps(state, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    size = len(text.encode("utf-8"))
    if size > max_bytes:
        raise StateError(
            f"the state is {size} bytes of JSON; a follow state may hold at most {max_bytes} "
            "(CONVSCOPE_FOLLOW_MAX_STATE_BYTES): send the lesson's setup, view and step, not traces",
            too_large=True,
        )
    return text
