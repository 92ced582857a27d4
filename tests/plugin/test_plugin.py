"""The plugin end to end, through pytester: options, collection, reports, usage errors."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import load_report

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


def _write(pytester: pytest.Pytester, name: str, text: str) -> Path:
    path = pytester.path / name
    path.write_text(text, encoding="utf-8")
    return path


def _grade(pytester: pytest.Pytester, source: str, *extra: str) -> pytest.RunResult:
    _write(pytester, "mine.py", source)
    return pytester.runpytest_subprocess(
        "--rlsys-submission", "mine.py", "--rlsys-seed", "1", "--rlsys-report", "score.json", *extra
    )


def _item_count(seed: int = 1) -> int:
    """pytest items of a grading run: one per visible case, one per TODO's hidden cases."""
    from pytest_rlsys.grading.battery import build_battery, load_reference

    cases = build_battery(seed, load_reference())
    hidden = {c.section for c in cases if c.visibility == "hidden"}
    return sum(c.visibility == "visible" for c in cases) + len(hidden)


def test_help_lists_the_option_group(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--help")
    result.stdout.fnmatch_lines(
        ["*rlsys grading harness*", "*--rlsys-submission=PATH*", "*rlsys_timeout*"]
    )


def test_reference_scores_100_and_report_validates(
    pytester: pytest.Pytester, reference_source: str
) -> None:
    result = _grade(pytester, reference_source, "--rlsys-lang", "en")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "*rlsys score*",
            "TODO 1*30 / 30*",
            "TODO 2*35 / 35*",
            "TODO 3*35 / 35*",
            "total*100 / 100*",
            "Points 100/100",
        ]
    )
    doc = load_report(pytester.path / "score.json")
    assert doc["score"] == doc["max_score"] == 100
    assert set(doc["sections"]) == {"todo1", "todo2", "todo3"}
    repro = doc["reproducibility"]
    assert repro["seed"] == 1 and len(repro["battery_sha256"]) == 64


@pytest.mark.parametrize(("lang", "words"), [("en", "not implemented yet"), ("zh", "尚未实现")])
def test_template_scores_zero_and_says_not_implemented(
    pytester: pytest.Pytester, template_source: str, lang: str, words: str
) -> None:
    result = _grade(pytester, template_source, "--rlsys-lang", lang)
    assert result.ret == 1
    for todo in ("TODO 1", "TODO 2", "TODO 3"):
        result.stdout.fnmatch_lines([f"{todo}*0 / *{words}*"])
    doc = load_report(pytester.path / "score.json")
    assert doc["score"] == 0 and doc["max_score"] == 100
    assert all(s["not_implemented"] for s in doc["sections"].values())


# One grading of a file with one visible mistake (TODO 1), every platform file asked for:
# the tests below only read what it printed and wrote (one run, not one per test).
PLATFORM_FILES = ("gs.json", "pl.json", "junit.xml")


@pytest.fixture(scope="module")
def buggy_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    from pytest_rlsys.resources import solution_path

    folder = tmp_path_factory.mktemp("buggy")
    source = solution_path().read_text(encoding="utf-8")
    buggy = source.replace("bottlenecks = sorted(\n", "bottlenecks = list(\n")
    assert buggy != source
    (folder / "mine.py").write_text(buggy, encoding="utf-8")
    outputs = zip(("gradescope", "prairielearn", "junit"), PLATFORM_FILES, strict=True)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rlsys-submission"]
        + ["mine.py", "--rlsys-seed", "1", "--rlsys-report", "score.json", "--rlsys-lang", "en"]
        + [arg for kind, name in outputs for arg in (f"--rlsys-{kind}", name)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    return folder, done.stdout


def test_failed_visible_case_shows_input_expected_and_got(buggy_run: tuple[Path, str]) -> None:
    folder, stdout = buggy_run
    pytest.LineMatcher(stdout.splitlines()).fnmatch_lines(
        [
            "*TODO 1] lists every tied bottleneck*",
            # The whole input, pretty-printed when it does not fit the terminal's width.
            "*input:*",
            "*pipeline_capacity(*",
            "*{'rollout': 240, 'reward': 160, 'learner': 80},*",
            "*expected: ?'learner', 'reward', 'rollout']",
            "*got: ?'rollout', 'reward', 'learner']",
        ]
    )
    doc = load_report(folder / "score.json")
    assert doc["sections"]["todo1"]["score"] < 30
    assert doc["sections"]["todo2"]["score"] == 35 and doc["sections"]["todo3"]["score"] == 35


def test_user_tests_and_config_do_not_interfere(
    pytester: pytest.Pytester, reference_source: str
) -> None:
    # The instructor's own config (given with -c, outside the submission's folder tree)
    # and the learner's test files next to the submission take no part.
    config = pytester.path / "course"
    config.mkdir()
    (config / "pytest.ini").write_text(
        "[pytest]\npython_files = check_*.py\naddopts = --strict-markers\n", encoding="utf-8"
    )
    _write(pytester, "test_user.py", "def test_user():\n    assert False\n")
    _write(pytester, "check_user.py", "def test_other():\n    assert False\n")
    (pytester.path / "upload").mkdir()
    _write(pytester, "upload/mine.py", reference_source)
    result = pytester.runpytest_subprocess(
        "--rlsys-submission", "upload/mine.py", "--rlsys-seed", "1", "-c", "course/pytest.ini"
    )
    assert result.ret == 0
    result.assert_outcomes(passed=_item_count())


# A learner's own project: its pytest table sets limits that would fail every case, and
# its conftest.py drops every item, skips what is left and forges the score file.  pytest
# imports both before the plugin can act, so the grade is made by a clean pytest.
LEARNER_PYPROJECT = """\
[tool.pytest.ini_options]
addopts = "-p no:randomly"
rlsys_timeout = "0.0001"
rlsys_memory_mb = "1"
"""
LEARNER_CONFTEST = """\
import json, pathlib, pytest
pathlib.Path(__file__).with_name("conftest-ran").write_text("yes")

def pytest_collection_modifyitems(items):
    del items[1:]

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    pytest.skip("conftest")

def pytest_unconfigure(config):
    pathlib.Path("score.json").write_text(json.dumps({"score": 1}))
"""


@pytest.mark.parametrize("layout", ["pyproject", "conftest"])
def test_learner_command_grades_cleanly_in_the_learners_project(
    pytester: pytest.Pytester, reference_source: str, layout: str
) -> None:
    # Each is found on its own; the conftest.py layout has a pyproject too, without a
    # pytest table (which configures nothing and is no reason for a re-run).
    if layout == "pyproject":
        _write(pytester, "pyproject.toml", LEARNER_PYPROJECT)
    else:
        _write(pytester, "pyproject.toml", "[project]\nname = 'course'\n")
        _write(pytester, "conftest.py", LEARNER_CONFTEST)
    result = _grade(pytester, reference_source)
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.OK, output
    assert "Traceback" not in output and "Points 100/100" in output
    result.assert_outcomes(passed=_item_count())
    doc = load_report(pytester.path / "score.json")
    assert doc["score"] == doc["max_score"] == 100
    # The folder's files were read by the pytest the learner started (so a refusal would
    # protect nothing); none of them took part in the grade.
    assert (pytester.path / "conftest-ran").exists() == (layout == "conftest")


def test_a_result_file_in_a_configured_project_is_graded_cleanly(
    pytester: pytest.Pytester,
) -> None:
    _write(pytester, "pyproject.toml", LEARNER_PYPROJECT)
    _write(pytester, "conftest.py", LEARNER_CONFTEST)
    (pytester.path / "run.json").write_text(json.dumps(_example()), encoding="utf-8")
    result = pytester.runpytest_subprocess(
        "--rlsys-result", "run.json", "--rlsys-report", "score.json"
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(["GPU result*40 / 40*"])
    assert load_report(pytester.path / "score.json")["score"] == 40


def test_learner_project_with_tests_named_beside_the_battery_is_a_usage_error(
    pytester: pytest.Pytester, reference_source: str
) -> None:
    _write(pytester, "pyproject.toml", LEARNER_PYPROJECT)
    _write(pytester, "test_mine.py", "def test_ok():\n    pass\n")
    result = _grade(pytester, reference_source, "test_mine.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "test_mine.py" in result.stderr.str() and "clean pytest" in result.stderr.str()


def test_plugin_is_inert_without_its_options(pytester: pytest.Pytester) -> None:
    _write(pytester, "test_plain.py", "def test_ok():\n    assert True\n")
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1)
    assert "rlsys score" not in result.stdout.str()


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--rlsys-submission", "missing.py"], "missing.py: no such file"),
        (["--rlsys-submission", "."], "is a directory"),
        (["--rlsys-submission", "mine.py", "--rlsys-seed", "abc"], "--rlsys-seed='abc'"),
        (["--rlsys-submission", "mine.py", "--rlsys-timeout", "-1"], "--rlsys-timeout='-1'"),
        (["--rlsys-submission", "mine.py", "--rlsys-lang", "fr"], "must be 'zh' or 'en'"),
        (["--rlsys-submission", "mine.py", "--rlsys-report", "."], "is a directory"),
        (["--rlsys-submission", "mine.py", "--rlsys-rubric", "nope.toml"], "cannot read rubric"),
        (["--rlsys-result", "nothere.json"], "nothere.json: no such file"),
    ],
)
def test_usage_errors_name_the_flag_without_traceback(
    pytester: pytest.Pytester, reference_source: str, args: list[str], fragment: str
) -> None:
    _write(pytester, "mine.py", reference_source)
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert fragment in result.stderr.str()
    flag = next(a for a in args[::-1] if a.startswith("--rlsys-"))
    assert flag in result.stderr.str()
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


def test_bad_ini_value_names_the_ini_key(pytester: pytest.Pytester, reference_source: str) -> None:
    (pytester.path / "course").mkdir()
    (pytester.path / "upload").mkdir()
    _write(pytester, "course/pytest.ini", "[pytest]\nrlsys_budget = soon\n")
    _write(pytester, "upload/mine.py", reference_source)
    result = pytester.runpytest_subprocess(
        "--rlsys-submission", "upload/mine.py", "-c", "course/pytest.ini"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "ini option rlsys_budget='soon'" in result.stderr.str()


def test_rubric_file_overrides_points(pytester: pytest.Pytester, reference_source: str) -> None:
    _write(
        pytester,
        "rubric.toml",
        '[todo1]\nvisible = 5\nhidden = 5\n[weights]\n"todo2.hidden.rows" = 3\n',
    )
    _grade(pytester, reference_source, "--rlsys-rubric", "rubric.toml")
    doc = load_report(pytester.path / "score.json")
    assert doc["sections"]["todo1"]["max_score"] == 10
    assert doc["max_score"] == 80
    rows = next(t for t in doc["tests"] if t["id"] == "todo2.hidden.rows")
    differential = next(t for t in doc["tests"] if t["id"] == "todo2.hidden.differential_0")
    # Each case's points are whole cents (largest remainder), so 3 x one case is within 3 cents.
    assert rows["max_score"] == pytest.approx(3 * differential["max_score"], abs=0.035)
    # The report names the rubric it was graded by (a learner's run may take it from the
    # learner's own folder): the file's sha256; null for the package's default.
    text = (pytester.path / "rubric.toml").read_bytes()
    assert doc["reproducibility"]["rubric_sha256"] == hashlib.sha256(text).hexdigest()
    _grade(pytester, reference_source)
    assert load_report(pytester.path / "score.json")["reproducibility"]["rubric_sha256"] is None


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[todo9]\nvisible = 1\n", "unknown section [todo9]"),
        ("[todo1]\nvisible = -3\n", "[todo1] visible must be a number from 0 to 1,000,000"),
        ("[todo1]\nshown = 3\n", "unknown key 'shown'"),
        ('[weights]\n"todo1.hidden.nope" = 1\n', "unknown cases: todo1.hidden.nope; the case ids"),
        ("this is = = not toml", "is not valid toml"),
    ],
)
def test_bad_rubric_is_a_usage_error_naming_file_and_key(
    pytester: pytest.Pytester, reference_source: str, text: str, fragment: str
) -> None:
    _write(pytester, "rubric.toml", text)
    _write(pytester, "mine.py", reference_source)
    result = pytester.runpytest_subprocess(
        "--rlsys-submission", "mine.py", "--rlsys-rubric", "rubric.toml"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert fragment in result.stderr.str() and "rubric.toml" in result.stderr.str()


@pytest.mark.slow  # two full grading runs in subprocesses
def test_same_seed_gives_the_same_report(pytester: pytest.Pytester, reference_source: str) -> None:
    buggy = reference_source.replace("if margin < 0)", "if margin <= 0)")
    _grade(pytester, buggy)
    first = load_report(pytester.path / "score.json")
    _grade(pytester, buggy)
    second = load_report(pytester.path / "score.json")
    for doc in (first, second):
        doc.pop("elapsed_s")
        for test in doc["tests"]:
            test.pop("seconds", None)
    assert first == second


def test_platform_outputs_from_one_run(buggy_run: tuple[Path, str]) -> None:
    folder, stdout = buggy_run
    score = load_report(folder / "score.json")["score"]
    assert score < 100
    gradescope = json.loads((folder / "gs.json").read_text(encoding="utf-8"))
    assert gradescope["score"] == score
    assert sum(t["max_score"] for t in gradescope["tests"]) == pytest.approx(100)
    prairie = json.loads((folder / "pl.json").read_text(encoding="utf-8"))
    assert prairie["score"] == pytest.approx(score / 100) and prairie["gradable"] is True
    junit = ET.parse(folder / "junit.xml").getroot()
    points = [
        float(p.get("value", "0/0").split("/")[0])
        for p in junit.iter("property")
        if p.get("name", "").startswith("points:")
    ]
    assert sum(points) == pytest.approx(score)
    pytest.LineMatcher(stdout.splitlines()).fnmatch_lines([f"Points {score:g}/100"])


def test_syntax_error_gets_zero_line_number_and_a_report(pytester: pytest.Pytester) -> None:
    result = _grade(pytester, "def pipeline_capacity(:\n    pass\n", "--rlsys-lang", "en")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*SyntaxError: invalid syntax*", "*line 1*"])
    doc = load_report(pytester.path / "score.json")
    assert doc["score"] == 0
    assert "Traceback" not in result.stdout.str()


def test_missing_function_costs_only_its_todo(
    pytester: pytest.Pytester, reference_source: str
) -> None:
    partial = reference_source.replace("def evaluate_topology(", "def evaluate_topology_v2(")
    _grade(pytester, partial, "--rlsys-lang", "en")
    doc = load_report(pytester.path / "score.json")
    assert doc["sections"]["todo1"]["score"] == 30 and doc["sections"]["todo2"]["score"] == 35
    assert doc["sections"]["todo3"]["score"] == 0
    assert any("no function evaluate_topology()" in t["message"] for t in doc["tests"])


def test_deselected_cases_count_as_ungraded(
    pytester: pytest.Pytester, reference_source: str
) -> None:
    result = _grade(pytester, reference_source, "-k", "visible", "--rlsys-lang", "en")
    result.stdout.fnmatch_lines(["*points not graded*did not run*"])
    doc = load_report(pytester.path / "score.json")
    assert doc["max_score"] == 100 and doc["score"] == 34
    assert doc["ungraded_points"] == 66


def _example() -> dict[str, object]:
    from pytest_rlsys.resources import schema_dir

    path = schema_dir() / "examples" / "pt-verl-closure.example.json"
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_result_file_graded_with_the_submission(
    pytester: pytest.Pytester, reference_source: str
) -> None:
    (pytester.path / "run.json").write_text(json.dumps(_example()), encoding="utf-8")
    result = _grade(pytester, reference_source, "--rlsys-result", "run.json")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["GPU result*40 / 40*", "total*140 / 140*"])
    doc = load_report(pytester.path / "score.json")
    assert doc["sections"]["gpu_result"] == {
        "score": 40,
        "max_score": 40,
        "cases_passed": 8,
        "cases": 8,
        "not_implemented": False,
    }
    assert doc["gpu_result"]["gradable"] is True
    assert len(doc["reproducibility"]["result_sha256"]) == 64


def test_tampered_result_file_loses_points(pytester: pytest.Pytester) -> None:
    doc = _example()
    groups = doc["groups"]
    assert isinstance(groups, dict)
    groups["retain"]["initial_lora_sha256"] = "0" * 64
    (pytester.path / "run.json").write_text(json.dumps(doc), encoding="utf-8")
    result = pytester.runpytest_subprocess(
        "--rlsys-result", "run.json", "--rlsys-report", "score.json"
    )
    assert result.ret == 1
    report = load_report(pytester.path / "score.json")
    assert report["sections"]["gpu_result"]["score"] < 40
    failed = [t for t in report["tests"] if t["status"] != "passed"]
    assert any("initial_lora_match" in t["id"] and "false claim" in t["message"] for t in failed)


def test_invalid_result_file_is_not_gradable_but_reported(pytester: pytest.Pytester) -> None:
    (pytester.path / "run.json").write_text(
        '{"schema_version": "pt-verl-closure/1", "run', encoding="utf-8"
    )
    result = pytester.runpytest_subprocess(
        "--rlsys-result", "run.json", "--rlsys-report", "score.json"
    )
    assert result.ret == 1
    report = load_report(pytester.path / "score.json")
    assert report["score"] == 0 and report["max_score"] == 40
    assert report["gpu_result"]["gradable"] is False and report["gpu_result"]["errors"]
    assert "Traceback" not in result.stdout.str()


def test_result_file_lines_are_wrapped_never_cut(pytester: pytest.Pytester) -> None:
    """The error line may be the only one naming what is wrong: wrapped, never cut (trial
    5, O2); a check's long account is shortened at a problem's end, saying how many more."""
    import shutil

    from pytest_rlsys.resultfile.grade import grade_result_file

    (pytester.path / "broken.json").write_text("{bad", encoding="utf-8")
    faulty = Path(__file__).parents[1] / "corpora" / "result_corpus" / "faulty"
    shutil.copy(faulty / "gpu_samples_in_gib.json", pytester.path / "gib.json")
    assert len(grade_result_file(faulty / "gpu_samples_in_gib.json").cases[7].message) > 1200
    for name, whole in (
        (
            "broken.json",
            "result file: $: invalid JSON at line 1, column 2: Expecting property "
            "name enclosed in double quotes",
        ),
        (
            "gib.json",
            "result file note: release: the whole-run sampled peak (10086 MiB) is in "
            "initial_sync, not in the update (6392 MiB); read the update phase's own peak for "
            "the update's occupancy",
        ),
    ):
        out = pytester.runpytest_subprocess("--rlsys-result", name).stdout.lines
        summary = out[next(i for i, line in enumerate(out) if "rlsys score" in line) :]
        assert all(len(line) <= 80 and "…" not in line for line in summary), summary
        joined = " ".join(line.replace("  ↳ ", "", 1).strip() for line in summary)
        assert whole in joined
    assert "more (rlsys result FILE lists all)" in joined


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="the child runs as another user only when grading as root",
)
def test_a_report_path_taken_during_the_run_is_an_error(
    pytester: pytest.Pytester, reference_source: str
) -> None:
    import shutil
    import tempfile

    # A folder the child may write to, on purpose (pytest's own temp root is private):
    # the grader must not report success when it could not record the grade.
    shared = Path(tempfile.mkdtemp(prefix="rlsys-squat-"))
    try:
        shared.chmod(0o777)
        target = shared / "score.json"
        squatter = f"import os\ntry:\n    os.mkdir({str(target)!r})\nexcept OSError:\n    pass\n"
        _write(pytester, "mine.py", reference_source + "\n" + squatter)
        result = pytester.runpytest_subprocess(
            "--rlsys-submission", "mine.py", "--rlsys-report", str(target)
        )
        from pytest_rlsys.grading import fence as fence_mod

        if fence_mod.landlock_abi() or (os.geteuid() == 0 and fence_mod.bwrap_fence()):
            # Behind Landlock or bubblewrap the child writes only in its scratch folder.
            assert target.is_file() and result.ret == pytest.ExitCode.OK
            return
        assert target.is_dir()  # the squat really happened
        assert result.ret == pytest.ExitCode.INTERNAL_ERROR
        result.stdout.fnmatch_lines(["*could not write --rlsys-report*"])
        assert "Traceback" not in result.stdout.str()
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def test_plain_pytest_runs_never_import_the_grading_modules() -> None:
    import subprocess
    import sys

    code = (
        "import sys, pytest_rlsys.plugin\n"
        "heavy = [m for m in ('pytest_rlsys.grading.grader', "
        "'pytest_rlsys.grading.isolation', 'pytest_rlsys.grading.battery', "
        "'pytest_rlsys.plugin.run', 'jsonschema') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_tests_named_beside_the_battery_keep_pytest_capture(
    pytester: pytest.Pytester, reference_source: str
) -> None:
    # A battery-only run turns pytest's capture off (nothing in this process prints per
    # case); tests the user names on the command line still get it.
    _write(
        pytester, "test_user.py", "def test_loud():\n    print('LOUD-' + 'OUTPUT')\n    assert 0\n"
    )
    result = _grade(pytester, reference_source, "test_user.py", "-rN", "--tb=short")
    out = result.stdout.str()
    assert "Captured stdout call" in out
    before_capture_section = out.split("Captured stdout call", 1)[0]
    assert "LOUD-OUTPUT" not in before_capture_section
    assert "LOUD-OUTPUT" in out
    result.assert_outcomes(passed=_item_count(), failed=1)


def test_a_todos_hidden_cases_are_one_item_that_names_only_categories(
    pytester: pytest.Pytester, reference_source: str
) -> None:
    buggy = reference_source.replace("if margin < 0)", "if margin <= 0)")
    result = _grade(pytester, buggy, "-v")
    out = result.stdout.str()
    for section in ("todo1", "todo2", "todo3"):
        assert f"battery.rlsys::{section}.hidden " in out
    assert "battery.rlsys::todo1.hidden." not in out  # no item per hidden case
    result.stdout.fnmatch_lines(
        [
            "*battery.rlsys::todo1.hidden FAILED*",
            "* of * hidden cases failed",
            "[[]TODO 1[]] *: wrong value at $.unstable_stages*",
            "*(hidden case: only its category is shown)",
        ]
    )
    # Graded case by case all the same: every hidden case has its line in the score file.
    doc = load_report(pytester.path / "score.json")
    assert sum(t["visibility"] == "hidden" for t in doc["tests"]) > 100
    result.assert_outcomes(passed=_item_count() - 1, failed=1)


# Every call fails with the arguments of the call before it (the submission kept them):
# a visible case that runs right after a hidden one in the same child would show that
# hidden input.  It also prints at import.
REMEMBERS = """
import json
print("IMPORT-MARKER printed at import")
_previous = ["none"]


def _remember(*args, **kwargs):
    said = _previous[0]
    _previous[0] = json.dumps([list(args), kwargs], sort_keys=True)[:150]
    raise RuntimeError("previous call: " + said)


evaluate_topology = pipeline_capacity = transfer_ledger = _remember
"""
REORDER = """
def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: ({order}, item.name))
"""


@pytest.mark.parametrize(
    "order",
    [
        pytest.param("not item.name.endswith('.hidden')", id="hidden_first"),
        pytest.param("hash(item.name) % 3", id="shuffled", marks=pytest.mark.slow),
    ],
)
def test_order_of_the_items_never_lets_a_hidden_input_reach_a_visible_case(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, order: str
) -> None:
    # A reordering plugin (as pytest-randomly or -p random-order is), from a folder of
    # its own: hidden items run before visible ones.
    from pytest_rlsys.grading.grader import prepare_battery

    plugins = pytester.path / "plugins"
    plugins.mkdir()
    (plugins / "reorder_items.py").write_text(REORDER.format(order=order), encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(plugins))
    monkeypatch.setenv("PYTHONHASHSEED", "3")
    (pytester.path / "upload").mkdir()
    _write(pytester, "upload/mine.py", REMEMBERS)
    result = pytester.runpytest_subprocess(
        "-p", "reorder_items", "-v", "--rlsys-submission", "upload/mine.py",
        "--rlsys-seed", "1", "--rlsys-report", "score.json",
    )  # fmt: skip
    names = [line.split("::")[1].split()[0] for line in result.outlines if "::" in line]
    first_visible = next(i for i, name in enumerate(names) if not name.endswith(".hidden"))
    assert any(name.endswith(".hidden") for name in names[:first_visible]), names
    cases = prepare_battery(1).cases
    seen: dict[str, set[str]] = {"hidden": set(), "visible": set()}  # as remembered
    for case in cases:
        for call in case.calls:
            text = json.dumps([list(call.args), dict(call.kwargs)], sort_keys=True)[:150]
            seen[case.visibility].add(text)
    hidden_only = seen["hidden"] - seen["visible"]
    doc = load_report(pytester.path / "score.json")
    shown = [" ".join(map(str, c.values())) for c in doc["tests"] if c["visibility"] == "visible"]
    assert "previous call: " in "".join(shown)  # the messages are shown
    assert not [text for text in hidden_only if any(text in s for s in shown)]
    assert "IMPORT-MARKER printed at import" in result.stdout.str()
