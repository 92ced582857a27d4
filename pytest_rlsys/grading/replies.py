"""The child's replies read as typed facts: a frame decoded into exact JSON types, the
load and call answers checked field by field, and how the child's process ended.  Nothing
here trusts the child: every field is taken only with the type it must have."""

from __future__ import annotations

import json
import signal
from typing import Any

from pytest_rlsys.escaping import clean_line
from pytest_rlsys.grading import fence
from pytest_rlsys.grading.comparison import NONPLAIN_MARK
from pytest_rlsys.grading.outcomes import CallOutcome, Limits, SubmissionLoad
from pytest_rlsys.messages import SAID_WORDS, Said, said

EXIT_CHANNEL_LOST = 87  # child.py exits with this when its reply fd was closed or replaced


class ProtocolError(Exception):
    pass


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        keys = [key for key, _ in pairs]
        twice = next(key for index, key in enumerate(keys) if key in keys[:index])
        raise ProtocolError(f"duplicate key {twice!r} in a reply")
    if NONPLAIN_MARK in out:
        # A type name, shown in visible messages: a bounded string, whatever was sent
        # (a forged list here once made a score file of 830 MB).
        value = out[NONPLAIN_MARK]
        out[NONPLAIN_MARK] = clean_line(value, 200) if type(value) is str else "object"
    return out


def decode_frame(body: bytes) -> Any:
    """Decode a reply into exact JSON types; duplicate keys are a protocol error."""
    try:
        return json.loads(body.decode("utf-8"), object_pairs_hook=_reject_duplicates)
    except RecursionError:  # a forged frame nested deeper than the parent's stack allows
        raise ProtocolError("reply nested too deeply") from None


def describe_exit(returncode: int | None) -> Said:
    """How the child's process ended, as a fact (``messages.SAID_WORDS`` words it)."""
    if returncode is None:
        return said("stopped_answering")
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        hint = name if name in SAID_WORDS and name.startswith("SIG") else "signal"
        return said("died", signal=name, hint=said(hint))
    if returncode == fence.EXIT_FENCE_FAILED:
        return said("fence_failed")
    if returncode == EXIT_CHANNEL_LOST:
        return said("channel_lost", code=returncode)
    return said("exited", code=returncode)


# Why ``compile`` raised something else than SyntaxError, by the exception's class.
_UNCOMPILABLE = {
    "RecursionError": "too_complex",
    "MemoryError": "too_complex",
    "OverflowError": "too_complex",
    "ValueError": "nul_bytes",
}


def parse_load(reply: Any) -> SubmissionLoad:
    if type(reply) is not dict or type(reply.get("ok")) is not bool:
        raise ProtocolError("load reply is not an object with 'ok'")
    if reply["ok"]:
        funcs = reply.get("functions")
        if type(funcs) is not dict:
            raise ProtocolError("load reply lacks 'functions'")
        return SubmissionLoad(True, functions={str(k): v is True for k, v in funcs.items()})
    error: dict[str, Any] = reply["error"] if type(reply.get("error")) is dict else {}
    line = reply.get("line") if type(reply.get("line")) is int else None
    text: str = reply["text"] if type(reply.get("text")) is str else ""
    exc_type = clean_line(_text(error.get("type"), "Error"), 200)
    account = said("load_raised", exc=exc_type, message=clean_line(_text(error.get("message"), "")))
    if reply.get("stage") == "compile":  # Python's compiler gave up on the file
        account = said(_UNCOMPILABLE.get(exc_type, "compile_failed"), exc=exc_type)
    elif reply.get("stage") == "syntax" and line is not None and text.strip():
        # str(SyntaxError) already names the line; add the offending source text.
        account = Said(
            "load_raised_at",
            (*account.values, ("line", str(line)), ("text", clean_line(text.strip(), 200))),
        )
    return SubmissionLoad(
        False,
        stage=clean_line(str(reply.get("stage", "import")), 20),
        said=account,
        line=line,
        exc_type=exc_type,
    )


def parse_call(reply: dict[str, Any], seconds: float) -> CallOutcome:
    args_after = reply.get("args_after")
    if reply.get("ok") is True and "value" in reply:
        return CallOutcome("returned", value=reply["value"], args_after=args_after, seconds=seconds)
    error = reply.get("error")
    if type(error) is not dict:
        return CallOutcome("protocol", said=said("empty_reply"), seconds=seconds)
    kind = clean_line(_text(error.get("type"), "?"), 200)
    text = clean_line(_text(error.get("message"), ""))
    # The child's own account of an answer it could not send (child._reply), by its class.
    told = {"ReplyTooLarge": "reply_too_large", "ReplyNotSent": "reply_not_sent"}.get(kind)
    return CallOutcome(
        "raised",
        said=said(told, exc=text) if told else None,
        args_after=args_after,
        seconds=seconds,
        exc_type=kind,
        value_error=error.get("value_error") is True,
        not_implemented=error.get("not_implemented") is True,
        is_exception=error.get("exception") is not False,
        message=text,
        line=_line_number(error.get("line")),
    )


def _text(value: Any, default: str) -> str:
    """A string the child sent, or ``default`` when it sent anything else (``str`` of a
    forged 16 MiB list would be a 16 MiB message)."""
    return value if type(value) is str else default


def _line_number(value: Any) -> int | None:
    """A line number from the child, trusted only as a plain int in a sane range."""
    return value if type(value) is int and 0 < value <= 10_000_000 else None


def unsendable(load: SubmissionLoad, func: str, limits: Limits) -> CallOutcome | None:
    """The outcome of a call that needs no child (the file did not load, or lacks
    ``func``), else None."""
    if not load.ok and load.stage == "limits":
        limit = limits.address_space_mb
        return CallOutcome("grader_error", said=said("memory_too_low", limit=limit))
    if not load.ok:
        return CallOutcome("load_failed", message=load.message, said=load.said)
    if not load.functions.get(func, False):
        return CallOutcome("missing", said=said("missing_function", func=func))
    return None
