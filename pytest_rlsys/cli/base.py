"""What every ``rlsys`` command shares: the exit codes, the two errors a command raises
instead of printing, and the argparse subclass that turns a bad argument into the first."""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Mapping
from enum import IntEnum
from typing import Any, NoReturn

__all__ = ["CommandError", "ExitCode", "Parser", "UsageError", "exit_codes_help"]


class ExitCode(IntEnum):
    """``rlsys`` exit codes (listed in every command's ``--help``).  A number may carry a
    second name where one command gives it its own meaning (``rlsys result``'s codes are
    documented and pinned: 1 contradicted, 3 not gradable, 4 an honest failed run, 5 unverified)."""

    OK = 0  # the job completed (for grade/batch: whatever the scores)
    FAILED = 1  # validate: a file is invalid
    CONTRADICTED = 1  # result: the evidence contradicts a claimed check
    USAGE = 2  # bad arguments or options, a named input file missing; nothing was graded
    ERROR = 3  # could not finish: an output folder is missing, a write failed, ...
    NOT_GRADABLE = 3  # result: the file cannot be graded at all
    HONEST_FAILURE = 4  # result: every claim matches the evidence, some checks fail
    UNVERIFIED = 5  # result: nothing contradicted, but an artefact a claim needs is missing
    INTERRUPTED = 130  # Ctrl-C


MEANINGS: dict[ExitCode, str] = {
    ExitCode.OK: "completed",
    ExitCode.FAILED: "a file is invalid (validate) or a claim is contradicted (result)",
    ExitCode.USAGE: "usage error (a bad option, a named input file that is not there)",
    ExitCode.ERROR: "could not finish (an output could not be written, ...)",
    ExitCode.HONEST_FAILURE: "result: an honest record of a failed run",
    ExitCode.UNVERIFIED: "result: a claim could not be checked (an artefact is missing)",
    ExitCode.INTERRUPTED: "interrupted",
}


def exit_codes_help(*codes: ExitCode, meanings: Mapping[ExitCode, str] | None = None) -> str:
    """The exit codes (all by default), one per line with its meaning (``meanings``: a
    command's own, else the shared ones), wrapped for an 80-column terminal."""
    shown = codes or tuple(ExitCode)
    said = {**MEANINGS, **(meanings or {})}
    lines = ["exit codes:"]
    for code in shown:
        lines += textwrap.wrap(
            said[code], 76, initial_indent=f"  {int(code)}  ", subsequent_indent=" " * 5
        )
    return "\n".join(lines)


class _EpilogAsWritten(argparse.HelpFormatter):
    def add_text(self, text: str | None) -> None:
        # argparse wraps every text; the exit-code list is already laid out.
        if text and text.startswith("exit codes:"):
            self._add_item(lambda t: t + "\n", [text])
        else:
            super().add_text(text)


class UsageError(Exception):
    """Bad arguments: reported as ``PROG: error: MESSAGE``, exit USAGE."""

    def __init__(self, message: str, prog: str = "rlsys") -> None:
        super().__init__(message)
        self.prog = prog


class CommandError(Exception):
    """The command could not finish: ``PROG: MESSAGE``, exit ERROR (or ``code``)."""

    def __init__(self, message: str, prog: str = "rlsys", code: ExitCode = ExitCode.ERROR) -> None:
        super().__init__(message)
        self.prog = prog
        self.code = code


class Parser(argparse.ArgumentParser):
    """argparse whose errors go through the one usage-error path (no SystemExit).  The
    epilog (the exit codes) keeps its lines; descriptions are wrapped as usual."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _EpilogAsWritten)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(message, self.prog)
