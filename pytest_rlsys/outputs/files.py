"""The file edge: every output file is written here, escaped, atomically, and never fails
on what the text contains."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from pytest_rlsys.escaping import clean_document

__all__ = ["write_atomic"]


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temp file in the same folder and a rename.

    The whole text passes ``clean_document`` (lines kept), whichever writer built it: a control,
    bidi or zero-width character or a lone surrogate that a writer let through is
    written as its visible escape.  Only the file system can make this fail (OSError)."""
    data = clean_document(text).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
