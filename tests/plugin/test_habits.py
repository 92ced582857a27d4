"""A learner's pytest habits around a grading (issue 42; issue 43's frictions): cache and
stepwise options in a folder with its own pytest settings, --collect-only, pytest-xdist's
-n, every line of the run in Chinese under rlsys_lang = "zh", lines that fit 80 columns."""

from __future__ import annotations

import importlib.util

import pytest

from pytest_rlsys.messages import has_cjk
from pytest_rlsys.outputs import terminal
from pytest_rlsys.resources import solution_path


def _run(pytester: pytest.Pytester, *extra: str) -> pytest.RunResult:
    (pytester.path / "mine.py").write_text(solution_path().read_text("utf-8"), "utf-8")
    return pytester.runpytest_subprocess(
        "--rlsys-submission", "mine.py", "--rlsys-seed", "1", "-p", "no:randomly", *extra
    )


@pytest.mark.slow  # gradings in subprocesses, each re-run clean
@pytest.mark.parametrize(
    "habit", [["--lf"], ["--ff", "--nf"], ["--sw"], ["--cache-clear"], ["--lfnf", "none"]]
)
def test_cache_habits_in_a_folder_with_its_own_settings_are_set_aside_with_a_note(
    pytester: pytest.Pytester, habit: list[str]
) -> None:
    (pytester.path / "pytest.ini").write_text("[pytest]\naddopts = -q\n", encoding="utf-8")
    result = _run(pytester, *habit)
    err = result.stderr.str()
    assert result.ret == pytest.ExitCode.OK, err
    assert "unrecognized arguments" not in err
    assert f"rlsys: {' '.join(h for h in habit if h.startswith('-'))} set aside" in err
    assert result.outlines[-2].startswith("Points 100/100") or any(
        line.startswith("Points 100/100") for line in result.outlines
    )


@pytest.mark.slow
def test_the_folder_s_chinese_setting_makes_every_line_chinese(pytester: pytest.Pytester) -> None:
    (pytester.path / "pytest.ini").write_text(
        "[pytest]\naddopts = -q\nrlsys_lang = zh\n", encoding="utf-8"
    )
    result = _run(pytester, "--lf", "-v")
    ours = [line for line in result.errlines + result.outlines if line.startswith("rlsys")]
    assert ours and all(line.startswith("rlsys：") for line in ours), ours
    assert all(has_cjk(line) for line in ours)


def test_collect_only_prints_no_score(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "--collect-only", "--rlsys-report", "score.json")
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.OK
    assert "rlsys score" not in out and "Points" not in out
    assert not (pytester.path / "score.json").exists()


def test_the_header_fits_eighty_columns_in_both_languages(pytester: pytest.Pytester) -> None:
    for lang in ("en", "zh"):
        result = _run(pytester, "--rlsys-lang", lang)
        header = [
            line for line in result.outlines if line.startswith(("rlsys", terminal.CONTINUED))
        ]
        assert any("fence" in line or "隔离" in line for line in header), header
        assert all(terminal.display_width(line) <= 80 for line in header), header


@pytest.mark.skipif(importlib.util.find_spec("xdist") is None, reason="needs pytest-xdist")
def test_xdist_workers_are_set_aside_before_any_starts(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "-n", "2")
    assert result.ret == pytest.ExitCode.OK, result.stderr.str()
    assert "-n set aside" in result.stderr.str()
    assert "crashed" not in result.stdout.str()
    assert any(line.startswith("Points 100/100") for line in result.outlines)


def test_the_points_not_graded_line_wraps_at_the_terminal_s_width() -> None:
    from pytest_rlsys.grading.scoring import CaseResult, ScoreReport

    cases = [
        CaseResult(f"todo1.hidden.c{i}", "todo1", "hidden", 100, "not_run", kind="not_run")
        for i in range(3)
    ]
    report = ScoreReport(cases, 1, None, None, None, ungraded_cents=300)
    wide = terminal.terminal_summary(report, "en", width=200)
    assert any("points not graded" in line and "count as 0" in line for line in wide)
    narrow = terminal.terminal_summary(report, "en", width=60)
    at = next(i for i, line in enumerate(narrow) if "points not graded" in line)
    assert narrow[at + 1].startswith(terminal.CONTINUED)
