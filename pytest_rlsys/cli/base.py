"""What every ``rlsys`` command shares: the exit codes, the two errors a command raises
instead of printing, and the argparse subclass that turns a bad argument into the first."""

from __future__ import annotations

import argparse
from enum import IntEnum
from typing import NoReturn

__all__ = ["CommandError", "ExitCode", "Parser", "UsageError", "exit_codes_help"]


class ExitCode(IntEnum):
    """``rlsys`` exit codes (listed in every command's ``--help``)."""

    OK = 0  # the job completed (for grade/batch: whatever the scores)
    FAILED = 1  # validate/result: a file is invalid or not gradable
    USAGE = 2  # bad arguments or options; nothing was graded
    ERROR = 3  # could not finish: an output folder is missing, a write failed, ...
    INTERRUPTED = 130  # Ctrl-C


_MEANING = {
    ExitCode.OK: "completed",
    ExitCode.FAILED: "a file is invalid or not gradable (validate, result)",
    ExitCode.USAGE: "usage error",
    ExitCode.ERROR: "could not finish (an output could not be written, ...)",
    ExitCode.INTERRUPTED: "interrupted",
}


def exit_codes_help(*codes: ExitCode) -> str:
    shown = codes or tuple(ExitCode)
    return "exit codes: " + "; ".join(f"{int(c)} {_MEANING[c]}" for c in shown)


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
    """argparse whose errors go through the one usage-error path (no SystemExit)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message, self.prog)
