"""What GitHub Classroom's console shows: readable runner names, a shared failure once."""

from __future__ import annotations

import json
import re

from pytest_rlsys.grading.scoring import CaseResult, RenderOptions, ScoreReport
from pytest_rlsys.outputs import scorejson
from pytest_rlsys.outputs.classroom import render, split_by_weight, weight_groups


def test_runner_names_say_the_todo_and_the_points_each() -> None:
    groups = weight_groups([("todo1", 167), ("todo1", 166), ("todo2", 52), ("todo1", 167)])
    assert [g[0] for g in groups] == ["todo1_worth_1_67", "todo1_worth_1_66", "todo2_worth_0_52"]
    # A step output and an environment variable name (the reporter reads NAME_RESULTS).
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", g[0]) for g in groups)
    assert weight_groups([("页\u202e", 200)])[0][0] == "section_worth_2"


def test_a_file_that_did_not_load_says_so_once_in_the_log() -> None:
    cases = [
        CaseResult(
            id=f"todo{1 + i % 3}.c{i}",
            section=f"todo{1 + i % 3}",
            visibility="hidden" if i % 2 else "visible",
            max_cents=52 if i % 2 else 167,
            status="error",
            kind="load_failed",
        )
        for i in range(167)
    ]
    error = "ModuleNotFoundError: No module named 'numpy'"
    report = ScoreReport(
        cases=cases,
        seed=1,
        submission="s.py",
        submission_sha256=None,
        battery_sha256=None,
        load_error=error,
        load_exc_type="ModuleNotFoundError",
    )
    runner = json.loads(render(report, RenderOptions()))
    assert runner["status"] == "error" and runner["max_score"] == report.max_score
    (test,) = runner["tests"]
    assert error in test["message"] and "standard library" in test["message"]
    assert "167" in test["name"]
    groups = weight_groups([(c.section, c.max_cents) for c in cases])
    parts = split_by_weight(runner, scorejson.document(report), groups)
    said = [t["message"] for doc in parts.values() for t in doc["tests"] if error in t["message"]]
    assert len(said) == 1
    assert sum(doc["max_score"] for doc in parts.values()) == report.max_score
