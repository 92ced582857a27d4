"""The option values' parsers: each takes the text as typed and returns the value, or
raises ValueError with a message that reads after "--flag=VALUE: " (``settings.resolve``
adds the flag, ``argparse_type`` makes one an argparse type for the ``rlsys`` commands)."""

from __future__ import annotations

import argparse
import math
import os
import stat
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def _int_or_none(text: str) -> int | None:
    try:
        return int(text.strip())
    except ValueError:
        return None


def positive_number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError("must be a number") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError("must be a positive number")
    return value


def positive_whole(text: str) -> int:
    value = _int_or_none(text)
    if value is None or value <= 0:
        raise ValueError("must be a positive whole number")
    return value


def count(text: str) -> int:
    value = _int_or_none(text)
    if value is None or value < 0:
        raise ValueError("must be a whole number, 0 or more")
    return value


def seed(text: str) -> int:
    if text.startswith("@"):
        # @FILE: the seed kept in a root-only file (the kits' per-assignment secret), so it
        # is never on a command line, which every uid can read in /proc/<pid>/cmdline.
        try:
            # Non-blocking: a FIFO is refused by its type, not waited on.
            fd = os.open(text[1:], os.O_RDONLY | os.O_NONBLOCK)
            try:
                _check_seed_file(text[1:], os.fstat(fd))
                text = os.read(fd, 64).decode("ascii").strip()
            finally:
                os.close(fd)
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not a number"
            raise ValueError(f"cannot read the seed file ({reason})") from None
    value = _int_or_none(text)
    if value is None or not 0 <= value < 2**63:
        raise ValueError("must be a whole number between 0 and 2**63 - 1")
    return value


def _check_seed_file(path: str, info: os.stat_result) -> None:
    """A seed file is a secret: a regular file of the grader's own user that nobody else
    can read or write (docs/threat-model.md, "The fence, per mode")."""
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(
            f"cannot read the seed file {path}: it is not a regular file; put the seed in one"
        )
    if info.st_uid != os.geteuid():
        raise ValueError(
            f"the seed file {path} is owned by uid {info.st_uid}, not by the grader's user "
            f"(uid {os.geteuid()}); run `chown {os.geteuid()} {path}`"
        )
    if info.st_mode & 0o077:
        raise ValueError(
            f"the seed file {path} can be read or written by other users (mode "
            f"{stat.filemode(info.st_mode)}); run `chmod 600 {path}`"
        )


def require_fence(text: str) -> str:
    # Imported here: POSIX-only, and only when the option is given.
    from pytest_rlsys.grading import fence

    if text not in fence.LEVELS:
        raise ValueError(f"must be one of {', '.join(fence.LEVELS)}")
    fence.require(text, fence.machine_fence())
    return text


def either(a: str, b: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in (a, b):
            raise ValueError(f"must be {a!r} or {b!r}")
        return text

    return parse


def child_user(text: str) -> str:
    # Imported here: the plugin imports this module in every pytest run, and isolation
    # needs POSIX-only modules that a plain test run must not depend on.
    from pytest_rlsys.grading.identity import child_identity

    child_identity(text)  # an unknown user is an error, never a silent fall back to root
    return text


def hidden_visibility(text: str) -> str:
    from pytest_rlsys.grading.scoring import PLATFORM_VISIBILITIES

    if text not in PLATFORM_VISIBILITIES:
        raise ValueError(f"must be one of {', '.join(PLATFORM_VISIBILITIES)}")
    return text


def argparse_type(parse: Callable[[str], T], name: str) -> Callable[[str], T]:
    """``parse`` as an argparse type: its ValueError reads after "argument --flag: 'VALUE': ".
    Every parser of every ``rlsys`` command (``closure`` too) is made with this."""

    def convert(text: str) -> T:
        try:
            return parse(text)
        except ValueError as exc:  # argparse adds "argument --flag: " in front
            raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None

    convert.__name__ = name  # argparse names the type in some messages
    return convert


positive_float = argparse_type(positive_number, "positive number")
positive_int = argparse_type(positive_whole, "positive whole number")
