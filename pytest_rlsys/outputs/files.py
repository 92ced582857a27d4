"""The file edge: every output file is written here, escaped, atomically, and never fails
on what the text contains."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_rlsys.escaping import clean_document

if TYPE_CHECKING:
    from pytest_rlsys.grading.scoring import RenderOptions, ScoreReport

__all__ = ["write_atomic", "write_outputs"]


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


def write_outputs(
    outputs: Mapping[str, Path], report: ScoreReport, options: RenderOptions
) -> list[str]:
    """Write every requested output (name -> path); the problems, one line each (never
    raises: a file that cannot be written or rendered must not cost the others)."""
    from pytest_rlsys.outputs import registry

    errors: list[str] = []
    for name, path in outputs.items():
        try:
            write_atomic(path, registry.render(name, report, options))
        except OSError as exc:
            errors.append(f"could not write --rlsys-{name} {path}: {exc.strerror or exc}")
        except Exception as exc:  # a renderer fault must not cost the other outputs
            errors.append(f"could not render --rlsys-{name}: {type(exc).__name__}: {exc}")
    return errors
