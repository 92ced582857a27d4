"""The submission's file, read as the grader (often root) reads it: without trusting the
folder it lies in (``read_submission``), or refused with the reason (``SubmissionPathError``)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pytest_rlsys.messages import Said, said
from pytest_rlsys.safe_read import UnsafeFile, read_regular_file

__all__ = ["MAX_SUBMISSION_BYTES", "SubmissionPathError", "read_submission"]

MAX_SUBMISSION_BYTES = 2 * 1024 * 1024


class SubmissionPathError(ValueError):
    """The submission cannot be graded from this path.

    ``usage`` is True when there is nothing to grade at all (no such path, a directory):
    a usage error of whoever typed the path.  Otherwise the file was refused (a symbolic
    link, a FIFO or device, too big, unreadable): that is graded as 0 with the reason,
    ``said`` (its English is the exception's text)."""

    def __init__(self, reason: Said, usage: bool = False) -> None:
        super().__init__(reason.text("en"))
        self.said = reason
        self.usage = usage


def _linked_folder(path: Path) -> str | None:
    """The first folder on ``path`` (as given) that is a symbolic link, if any."""
    current = Path()
    for part in path.parts[:-1]:
        current = current / part
        if str(current) == current.anchor:
            continue
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return str(current)
        except OSError:
            return None
    return None


def read_submission(path: Path) -> bytes:
    """Read a submission as the grader (often root) without trusting its folder: only a
    regular file, reached through no symbolic link (neither the file nor a folder on its
    path), never blocking, at most ``MAX_SUBMISSION_BYTES`` (``safe_read``)."""
    linked = _linked_folder(path)
    if linked is not None:
        raise SubmissionPathError(said("linked_folder", path=str(path), folder=linked))
    try:
        return read_regular_file(path, MAX_SUBMISSION_BYTES)
    except UnsafeFile as exc:
        mib = MAX_SUBMISSION_BYTES // 1024 // 1024
        reason = said(f"file_{exc.kind}", path=str(path), mib=mib, detail=exc.detail)
        usage = exc.kind in ("missing", "directory", "bad_name")
        raise SubmissionPathError(reason, usage=usage) from None
