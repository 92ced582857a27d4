"""A Ctrl-C while `rlsys` is still loading its own modules ends it quietly (exit 130), as
a Ctrl-C during a command does: no traceback from our code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.plugin.test_leftovers import ctrl_c_as_in_a_terminal

ROOT = Path(__file__).parents[2]

# Runs the `rlsys` program as its console script does, and sends itself SIGINT at the
# moment the named module is imported (what a Ctrl-C then would do).
_START = r"""
import builtins, os, signal, sys
sys.argv = ["rlsys", "grade", "--help"]
_import = builtins.__import__
def _hooked(name, *args, **kwargs):
    if name == sys.argv_target:
        os.kill(os.getpid(), signal.SIGINT)
    return _import(name, *args, **kwargs)
sys.argv_target = TARGET
builtins.__import__ = _hooked
from pytest_rlsys.cli import main
sys.exit(main())
"""


@pytest.mark.parametrize("during", ["pytest_rlsys.cli.base", "pytest_rlsys.escaping"])
def test_ctrl_c_during_the_cli_s_imports_prints_no_traceback(during: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _START.replace("TARGET", repr(during))],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
        # Ctrl-C's default action, as a terminal's job has it: a suite run in the
        # background inherits SIGINT ignored, and the press was then never seen (exit 0).
        preexec_fn=ctrl_c_as_in_a_terminal,
    )
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr
    assert "KeyboardInterrupt" not in done.stderr


def test_a_host_program_that_imports_the_cli_keeps_its_own_ctrl_c() -> None:
    import signal

    import pytest_rlsys.cli

    assert signal.getsignal(signal.SIGINT) is not pytest_rlsys.cli._interrupted_while_starting
