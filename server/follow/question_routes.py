"""A class question in a follow session (predict, then reveal, with a class):

    POST /api/follow/sessions/{session}/questions                   ask: {secret, driver,
         config, step, index} -> {question, asked}: the teacher's page asks the class
         question ``index`` of step ``step`` (POST /api/questions's list, built here)
    POST /api/follow/sessions/{session}/questions/{n}/answers       a student's page:
         {voter, given} -> {received}; one answer per page (voter) and question
    POST /api/follow/sessions/{session}/questions/{n}/tally         {secret} -> how many
         answered (the answers themselves only once the question is closed)
    POST /api/follow/sessions/{session}/questions/{n}/close         {secret, driver}: no
         more answers; the answers, each judged as the page judges it

The question, with its answer, stays on the server: a student's page asks its own
``/api/questions`` for the prompt and sends what it gives; nothing names a student (a
voter is a random token of one page). Answers are bounded in size (a number, a yes or
no, a shape, at most ``MAX_CLICK_CELLS`` cells) and in count (``follow_max_answers``
a question), and refused once the teacher closes the question or asks another.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Path, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from convcore.mistakes import lab_mistakes
from convcore.mistakes.cell_values import OUTPUT_TENSORS, mistaken_cell_values
from convcore.mistakes.lab_config import LOOP_WORK
from convcore.spec import MAX_INDEX
from convcore.trace.config import TraceConfigError
from convcore.trace.questions import MAX_CLICK_CELLS, accepted, judge

from ..api.questions import config_document, questions_at
from ..api.schemas import Question, TraceConfig
from ..http.errors import ApiError
from .broker import Answered, NoSession, QuestionClosed, StaleDriver, Tally, TooManyAnswers
from .routes import BrokerDep, Secret, SessionId, _check_secret, _no_session, _refusals

__all__ = ["router"]

router = APIRouter(prefix="/api/follow", tags=["follow"])

ASKED_KINDS = (
    "value",
    "reads",
    "shape",
    "changes",
)  # what a class is asked (a page picks cells, types, says yes or no)
QuestionNumber = Annotated[int, Path(ge=1, le=2**31, description="the question's number in its session")]
Driver = Annotated[int, Field(ge=1, le=2**31, description="the driver number the page got")]


class AskBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    secret: Secret
    driver: Driver
    config: TraceConfig = Field(description="the trace config on the teacher's screen")
    step: int = Field(ge=0, le=MAX_INDEX, description="the step asked about (from 0)")
    index: int = Field(0, ge=0, le=64, description="which of the step's questions (POST /api/questions's order)")


class Asked(BaseModel):
    question: int = Field(description="its number in the session: the answers' path names it")
    asked: Question = Field(description="the question, with its answer (for the teacher's page)")


Cell = Annotated[list[Annotated[int, Field(ge=0, le=MAX_INDEX)]], Field(min_length=1, max_length=8)]


class AnswerBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    voter: str = Field(
        pattern=r"^[A-Za-z0-9_-]{16,64}$", description="a random token of the student's page (one answer per page)"
    )
    given: bool | float | list[Cell] | Cell = Field(
        description="a number (value), true or false (changes), the sizes (shape) or the cells' indices (reads)"
    )


class Received(BaseModel):
    received: bool = True


class Authority(BaseModel):
    model_config = ConfigDict(extra="forbid")

    secret: Secret


class Closing(Authority):
    driver: Driver


class Given(BaseModel):
    given: Any = Field(description="an answer, as pages sent it")
    count: int = Field(description="the pages that gave it")
    right: bool = Field(description="whether it is right, judged as the page judges it")
    mistake: str | None = Field(
        None, description="a wrong number that a catalogued mistake's code leaves there: the mistake's title"
    )


class ClassTally(BaseModel):
    question: int
    open: bool = Field(description="whether it still takes answers")
    answered: int = Field(description="the pages that answered")
    distribution: list[Given] | None = Field(
        None, description="each answer given and how many pages gave it, most first (once closed)"
    )
    right: int | None = Field(None, description="the pages whose answer is right (once closed)")


def _question_gone(exc: QuestionClosed) -> ApiError:
    if exc.current == exc.question and not exc.open_now:
        said = f"the teacher has closed question {exc.question}: it takes no more answers"
    elif exc.current:
        said = f"question {exc.question} is not this session's question now (question {exc.current} is)"
    else:
        said = f"this session has no question {exc.question}"
    return ApiError(409, ["path", "question"], said, "conflict")


def _stale(exc: StaleDriver, driver: int) -> ApiError:
    return ApiError(
        409,
        ["body", "driver"],
        f"another page took over this session (driver {exc.current}, this page is {driver}); take over again to drive",
        "conflict",
    )


@contextmanager
def _refused(session: str, driver: int = 0) -> Iterator[None]:
    """The broker's refusals as the API's: no such session, a page taken over from, a
    question that is not open."""
    try:
        yield
    except NoSession:
        raise _no_session(session) from None
    except StaleDriver as exc:
        raise _stale(exc, driver) from None
    except QuestionClosed as exc:
        raise _question_gone(exc) from None


def _no_answer(wanted: str, given: Any) -> ApiError:
    return ApiError(422, ["body", "given"], f"this question asks for {wanted}; got {json.dumps(given)}", "value_error")


def _key(question: dict[str, Any], given: Any) -> str:
    """The answer's key (its JSON, cells in order), or ApiError when it is no answer to
    ``question``, naming what was sent and what was wanted."""
    kind = question["kind"]
    if kind == "value":
        if isinstance(given, bool) or not isinstance(given, (int, float)) or not math.isfinite(given):
            raise _no_answer("a number", given)
        return json.dumps(float(given))
    if kind == "changes":
        if not isinstance(given, bool):
            raise _no_answer("true or false", given)
        return json.dumps(given)
    if kind == "shape":
        if not isinstance(given, list) or not all(isinstance(v, int) for v in given):
            raise _no_answer("the sizes", given)
        return json.dumps(given)
    rank = len(question["answer"]["cells"][0]) if question["answer"]["cells"] else 0
    cells = given if isinstance(given, list) and all(isinstance(c, list) for c in given) else None
    if cells is None or any(len(c) != rank for c in cells):
        raise _no_answer(f"cells of {question['answer']['tensor']}, {rank} indices each", given)
    if len(cells) > MAX_CLICK_CELLS:
        raise ApiError(
            422, ["body", "given"], f"{len(cells)} cells given; an answer has at most {MAX_CLICK_CELLS}", "value_error"
        )
    return json.dumps(sorted(set(map(tuple, cells))))


def _mistake_of(question: dict[str, Any], given: Any) -> str | None:
    """The title of the first catalogued mistake whose number ``given`` is (to the trace's
    precision), when it is not the answer."""
    if question["kind"] != "value" or judge(question, given):
        return None
    for m in question.get("mistakes", ()):
        low, high = accepted(m["value"])
        if low <= given <= high:
            return m["title"]
    return None


def _tally(tally: Tally) -> ClassTally:
    if tally.open:
        return ClassTally(question=tally.question, open=True, answered=tally.answered)
    question = orjson.loads(tally.text)
    given = [(json.loads(key), count) for key, count in tally.counts.items()]
    rows = [
        Given(given=g, count=n, right=judge(question, g), mistake=_mistake_of(question, g))
        for g, n in sorted(given, key=lambda item: (-item[1], json.dumps(item[0])))
    ]
    return ClassTally(
        question=tally.question,
        open=False,
        answered=tally.answered,
        distribution=rows,
        right=sum(r.count for r in rows if r.right),
    )


def _last_write(events: list[dict[str, Any]], step: int, cell: dict[str, Any]) -> bool:
    """Whether no event after ``step`` writes ``cell`` ({tensor, index}): its value after
    the step is the one the layer leaves there."""
    index = cell["index"]
    for event in events[step + 1 :]:
        for w in event["writes"]:
            if w["tensor"] == cell["tensor"] and all(
                a <= i < b and (i - a) % s == 0 for i, a, b, s in zip(index, w["start"], w["stop"], w["step"])
            ):
                return False
    return True


def _class_question(document: bytes, body: AskBody, max_work: int) -> dict[str, Any]:
    """Question ``body.index`` of step ``body.step`` of the trace ``document``; a value
    question of the last write of a cell of out, dx, dw or db also names the catalogued
    mistakes that leave another number there (``mistakes``: their code run on the setup,
    while that work is within ``max_work``), so that the reveal can name a class's wrong
    answer. ApiError for a step or an index the trace lacks."""
    doc = orjson.loads(document)
    asked = questions_at(doc, body.step)
    if body.index >= len(asked) or asked[body.index]["kind"] not in ASKED_KINDS:
        kinds = ", ".join(f"{i}: {q['kind']}" for i, q in enumerate(asked))
        raise ApiError(
            422,
            ["body", "index"],
            f"step {body.step} has {len(asked)} questions ({kinds}); a class is asked one of kind "
            f"{', '.join(ASKED_KINDS)}, not index {body.index}",
            "value_error",
        )
    question = asked[body.index]
    cell = question.get("cell")
    work = doc["total_events"] * LOOP_WORK * len(lab_mistakes())  # (each mistake's code runs the layer's loops once)
    if cell and cell["tensor"] in OUTPUT_TENSORS and work <= max_work and _last_write(doc["events"], body.step, cell):
        try:
            question["mistakes"] = mistaken_cell_values(body.config.config(), cell["tensor"], cell["index"])
        except TraceConfigError:
            pass  # (a setup the catalogue's code cannot take: no mistake named)
    return question


@router.post(
    "/sessions/{session}/questions",
    status_code=201,
    response_model=Asked,
    summary="Ask the class a question about a step (needs the secret)",
    responses=_refusals(403, 404, 409, 413, 422, 429, 503),
)
async def ask(session: SessionId, body: AskBody, request: Request, broker: BrokerDep) -> Asked:
    _check_secret(body.secret, session)
    if not await broker.exists(session):
        raise _no_session(session)
    async with config_document(body.config, request) as document:
        question = await run_in_threadpool(_class_question, document, body, request.app.state.settings.max_work)
    with _refused(session, body.driver):
        number = await broker.ask(session, body.driver, orjson.dumps(question).decode())
    return Asked(question=number, asked=question)


@router.post(
    "/sessions/{session}/questions/{question}/answers",
    status_code=201,
    response_model=Received,
    summary="A student's page answers the class question (once)",
    responses=_refusals(404, 409, 413, 422, 429, 503),
)
async def answer(session: SessionId, question: QuestionNumber, body: AnswerBody, request: Request, broker: BrokerDep):
    try:
        with _refused(session):
            tally = await broker.tally(session, question)
            if not tally.open:
                raise QuestionClosed(question, question, False)
            key = _key(orjson.loads(tally.text), body.given)
            await broker.answer(session, question, body.voter, key, request.app.state.settings.follow_max_answers)
    except Answered:
        raise ApiError(
            409, ["body", "voter"], f"this page has answered question {question} already", "conflict"
        ) from None
    except TooManyAnswers as exc:
        raise ApiError(
            429,
            ["path", "question"],
            f"question {question} has {exc.limit} answers, as many as this server takes for one question "
            "(CONVSCOPE_FOLLOW_MAX_ANSWERS)",
            "too_many_requests",
        ) from None
    return Received()


@router.post(
    "/sessions/{session}/questions/{question}/tally",
    response_model=ClassTally,
    summary="How many answered; the answers once closed (needs the secret)",
    responses=_refusals(403, 404, 409, 503),
)
async def tally(session: SessionId, question: QuestionNumber, body: Authority, broker: BrokerDep) -> ClassTally:
    _check_secret(body.secret, session)
    with _refused(session):
        return _tally(await broker.tally(session, question))


@router.post(
    "/sessions/{session}/questions/{question}/close",
    response_model=ClassTally,
    summary="Close the question: no more answers; the answers (needs the secret)",
    responses=_refusals(403, 404, 409, 503),
)
async def close(session: SessionId, question: QuestionNumber, body: Closing, broker: BrokerDep) -> ClassTally:
    _check_secret(body.secret, session)
    with _refused(session, body.driver):
        return _tally(await broker.close_question(session, body.driver, question))
