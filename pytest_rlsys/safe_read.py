"""Reading a file that someone else controls: the one rule for submissions and result files.

The grader often runs as root, and whoever wrote the file may also control its folder and
its type.  So only a regular file is read: a symbolic link is never followed, a FIFO or
device is refused before a read can block (it is opened non-blocking, in case one was
swapped in), and at most ``max_bytes`` + 1 bytes are read whatever the file claims.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from typing import Literal

__all__ = [
    "UnsafeFile",
    "UnsafeKind",
    "missing_inputs",
    "read_regular_file",
    "read_text",
    "shorten",
]

UnsafeKind = Literal["missing", "directory", "link", "special", "too_big", "unreadable", "bad_name"]
_OPEN_FLAGS = (
    os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
)


class UnsafeFile(Exception):
    """Why the file was not read; ``kind`` lets each caller word it for its users."""

    def __init__(self, kind: UnsafeKind, detail: str = "") -> None:
        super().__init__(detail or kind)
        self.kind: UnsafeKind = kind
        self.detail = detail


def read_regular_file(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    """The bytes of the regular file at ``path`` (its last component not a link), read
    once; raises UnsafeFile for anything else."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise UnsafeFile("missing") from None
    except ValueError:  # a NUL in the name
        raise UnsafeFile("bad_name") from None
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket, or a FIFO with no writer opened for writing
            raise UnsafeFile("special") from None
        if exc.errno in (errno.ELOOP, getattr(errno, "EMLINK", None)) and os.path.islink(path):
            raise UnsafeFile("link") from None
        if exc.errno == errno.EISDIR:
            raise UnsafeFile("directory") from None
        raise UnsafeFile("unreadable", exc.strerror or str(exc)) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise UnsafeFile("directory")
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFile("special")
        if info.st_size > max_bytes:
            raise UnsafeFile("too_big")
        chunks: list[bytes] = []
        total = 0
        while total <= max_bytes:  # one byte past the cap: the file may have grown
            chunk = os.read(fd, max(info.st_size + 1 - total, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:
            raise UnsafeFile("too_big")
        return b"".join(chunks)
    except OSError as exc:
        raise UnsafeFile("unreadable", exc.strerror or str(exc)) from None
    finally:
        os.close(fd)


# What each refusal means to whoever named the file, and what to do (``read_text``).
_REASONS: dict[UnsafeKind, str] = {
    "missing": "no such file",
    "directory": "is a folder; give the file itself",
    "link": "is a symbolic link; give the file it points to",
    "special": "is not a regular file (a FIFO, a device or a socket); give a regular file",
    "too_big": "is over {cap}; give a smaller file",
    "unreadable": "cannot be read ({detail})",
    "bad_name": "is not a usable file name",
}


def read_text(path: str | os.PathLike[str], max_bytes: int) -> str:
    """The UTF-8 text (a BOM dropped) of the regular file at ``path``, read by the rule
    above; ValueError with one short line naming the file and the problem otherwise."""
    try:
        data = read_regular_file(path, max_bytes)
    except UnsafeFile as exc:
        cap = f"{max_bytes // 1024} KiB" if max_bytes >= 1024 else f"{max_bytes} bytes"
        reason = _REASONS[exc.kind].format(cap=cap, detail=exc.detail)
        raise ValueError(f"{shorten(os.fspath(path), 200)}: {reason}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{shorten(os.fspath(path), 200)}: not UTF-8 text (byte {exc.start})"
        ) from None


def shorten(text: str, limit: int = 300) -> str:
    """At most about ``limit`` characters of ``text``: its start and its end, the middle
    elided and counted (an error that quotes a value must stay one readable line)."""
    if len(text) <= limit:
        return text
    head, tail = limit * 2 // 3, limit // 3
    return f"{text[:head]} …({len(text) - head - tail} characters)… {text[-tail:]}"


def missing_inputs(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """The usage error's words for each of ``paths`` that is not there (a link is there,
    even a dangling one: the safe-read rule then says what it is).

    The one rule for an input file named on the command line that is not there, in every
    command (grade, batch, validate, result, ledger, closure summary and plot, and every
    option naming an input): a usage error, exit USAGE, saying "PATH: no such file", before
    anything is read or graded.  (A file that is there but is no valid input keeps its
    command's own code: validate 1, result 3, closure 1.)"""
    return [f"{path}: no such file" for path in paths if not os.path.lexists(path)]
