"""The suite's slow-marker policy (tests/conftest.py): an unmarked test far over the limit
fails the run, whatever the load, and a marked one does not."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CONFTEST = Path(__file__).resolve().parent.parent / "conftest.py"


@pytest.mark.slow  # two pytest runs in subprocesses
@pytest.mark.parametrize(("marker", "code"), [("", 1), ("@pytest.mark.slow\n", 0)])
def test_an_unmarked_slow_test_fails_the_run(
    pytester: pytest.Pytester, marker: str, code: int
) -> None:
    # The limit scaled down to 0.01 s x the pace: a 2 s sleep is over it unless this
    # machine runs a hundred times slower than its CPU time, whatever else it runs.
    text = CONFTEST.read_text(encoding="utf-8")
    scaled, found = re.subn(r"(?m)^UNMARKED_SLOW_S = [0-9.]+$", "UNMARKED_SLOW_S = 0.01", text)
    assert found == 1
    pytester.makeconftest(scaled)
    pytester.makeini("[pytest]\nmarkers = slow: slow\ntestpaths = test_sleepy.py\n")
    pytester.makepyfile(
        test_sleepy=f"import time, pytest\n{marker}def test_sleepy():\n    time.sleep(2)\n"
    )
    result = pytester.runpytest_subprocess("--run-slow")  # the suite, as CI runs it
    assert result.ret == code, result.stdout.str()
    assert ("without @pytest.mark.slow" in result.stdout.str()) == (code == 1)
