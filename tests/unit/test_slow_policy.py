"""The suite's slow-marker policy (tests/conftest.py): an unmarked slow test is named in
every run, fails only the whole suite (--run-slow) and only past a fixed line, and a
marked one is never named; no verdict depends on the machine's load."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CONFTEST = Path(__file__).resolve().parent.parent / "conftest.py"


def _policy(pytester: pytest.Pytester, marker: str) -> None:
    """This suite's conftest with both lines at 0.01 s, and one test that sleeps 0.5 s:
    over them however fast or loaded the machine is."""
    text = CONFTEST.read_text(encoding="utf-8")
    for name in ("UNMARKED_SLOW_S", "UNMARKED_FAIL_S"):
        text, found = re.subn(rf"(?m)^{name} = [0-9.]+$", f"{name} = 0.01", text)
        assert found == 1, name
    pytester.makeconftest(text)
    pytester.makeini("[pytest]\nmarkers = slow: slow\ntestpaths = test_sleepy.py\n")
    pytester.makepyfile(
        test_sleepy=f"import time, pytest\n{marker}def test_sleepy():\n    time.sleep(0.5)\n"
    )


@pytest.mark.slow  # pytest runs in subprocesses
@pytest.mark.parametrize(
    ("marker", "args", "code", "named"),
    [
        ("", ("--run-slow",), 1, True),  # the whole suite, as CI runs it: fails
        ("", (), 0, True),  # the developer's loop: named, not failed
        ("@pytest.mark.slow\n", ("--run-slow",), 0, False),
    ],
)
def test_an_unmarked_slow_test_is_named_and_fails_only_the_whole_suite(
    pytester: pytest.Pytester, marker: str, args: tuple[str, ...], code: int, named: bool
) -> None:
    _policy(pytester, marker)
    result = pytester.runpytest_subprocess(*args)
    out = result.stdout.str()
    assert result.ret == code, out
    assert ("without @pytest.mark.slow" in out) == named, out
    assert ("FAILED: over" in out) == (code == 1), out
