"""A function that keeps state between calls is named (issue 42): a failed case that
passes alone in a fresh child says so; a plain bug says nothing of the kind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_rlsys.grading.grader import grade_file
from pytest_rlsys.outputs.terminal import terminal_summary
from pytest_rlsys.resources import solution_path

REFERENCE = solution_path().read_text(encoding="utf-8")
STATEFUL = """

_SEEN = []
_real = pipeline_capacity


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    result = _real(stage_rates, arrival_rate, items_per_work_unit)
    _SEEN.append(1)
    if len(_SEEN) > 40:  # right at first, wrong once it has run a while
        result["capacity"] = result["capacity"] + 1
    return result
"""


def _grade(tmp_path: Path, source: str) -> tuple[list[str], list[str]]:
    path = tmp_path / "rlsys_ledger.py"
    path.write_text(source, encoding="utf-8")
    report = grade_file(path, seed=1)
    assert report.score < 100
    return terminal_summary(report, "en", width=400), terminal_summary(report, "zh", width=400)


def test_a_function_that_keeps_state_is_named(tmp_path: Path) -> None:
    en, zh = _grade(tmp_path, REFERENCE + STATEFUL)
    assert any("pipeline_capacity() seems to keep state between calls" in line for line in en)
    assert any("pipeline_capacity() 似乎在调用之间保留了状态" in line for line in zh)


def test_a_plain_bug_is_not_called_state(tmp_path: Path) -> None:
    en, _ = _grade(
        tmp_path, REFERENCE.replace('"capacity": capacity,', '"capacity": capacity + 1,')
    )
    assert not any("keep state" in line for line in en)


def test_the_reruns_share_one_fresh_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A plain bug fails every rerun: they run in turn in one fresh child, not one child
    # (an interpreter's start) each; a stateful function is still named from there.
    from pytest_rlsys.grading import alone

    made: list[object] = []

    class Counted(alone.ChildProcess):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            made.append(self)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(alone, "ChildProcess", Counted)
    en, _ = _grade(
        tmp_path, REFERENCE.replace('"capacity": capacity,', '"capacity": capacity + 1,')
    )
    assert not any("keep state" in line for line in en)
    assert len(made) == 1
    en, _ = _grade(tmp_path, REFERENCE + STATEFUL)
    assert any("pipeline_capacity() seems to keep state between calls" in line for line in en)
    assert len(made) == 2
