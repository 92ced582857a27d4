"""`rlsys closure` has its own argument parser: its usage errors and help go through the
terminal edge like every other line (docs/threat-model.md, "Output edges")."""

from __future__ import annotations

import contextlib
import io

import pytest
from rlsys_closure import cli as closure

from pytest_rlsys.escaping import is_clean

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\r\u202eevil\u3164"


@pytest.mark.parametrize(
    "argv",
    [
        [HOSTILE],  # an unknown command, quoted by the usage error
        ["summary", "--" + HOSTILE, "x.json"],  # an unknown option
        ["run", "--engine", HOSTILE],  # a value its type refused
        ["tiny-model", "out", "--layers", HOSTILE],
    ],
)
def test_a_usage_error_shows_what_was_typed_escaped(argv: list[str]) -> None:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = closure.main(argv)
    assert code == 2
    shown = out.getvalue() + err.getvalue()
    assert "usage:" in shown
    assert is_clean(shown), [c for c in shown if not is_clean(c)]
    assert "\\x1b" in shown
