"""Course-ready: the learner's short one-language output, files as editors save them,
rlsys grade's documented flags, and each instructor kit run the way its platform runs it."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from pytest_rlsys.cli import ExitCode, main
from pytest_rlsys.grading.grader import Grader, prepare_battery
from pytest_rlsys.grading.scoring import CaseResult, ScoreReport
from pytest_rlsys.messages import CLAIMS_EN, claim_text, has_cjk
from pytest_rlsys.outputs import reports
from pytest_rlsys.resources import exercise_path, solution_path
from tests.conftest import REPO, load_report

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


def _case_count() -> int:
    from pytest_rlsys.grading.grader import prepare_battery, random_seed

    return len(prepare_battery(random_seed()).cases)


def _run(pytester: pytest.Pytester, source: str | bytes, *extra: str) -> pytest.RunResult:
    path = pytester.path / "mine.py"
    if isinstance(source, bytes):
        path.write_bytes(source)
    else:
        path.write_text(source, encoding="utf-8")
    return pytester.runpytest_subprocess(
        "--rlsys-submission", "mine.py", "--rlsys-seed", "1", *extra
    )


def _summary(result: pytest.RunResult) -> list[str]:
    """The lines from our summary's title to the Points line."""
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if "rlsys score" in line or "rlsys 得分" in line)
    end = next(i for i, line in enumerate(lines) if line.startswith("Points "))
    return lines[start : end + 1]


# -- learners: short output -----------------------------------------------------------------


def test_untouched_template_output_is_short(
    pytester: pytest.Pytester, template_source: str
) -> None:
    result = _run(pytester, template_source, "--rlsys-lang", "en")
    assert result.ret == 1
    out = result.outlines + result.errlines
    assert len(result.outlines) <= 80, len(result.outlines)
    assert max(len(line) for line in out) <= 100
    text = "\n".join(out)
    assert "PytestAssertRewriteWarning" not in text and "site-packages" not in text
    assert "FAILURES" not in text and "short test summary" not in text
    for todo in ("TODO 1", "TODO 2", "TODO 3"):
        result.stdout.fnmatch_lines([f"{todo}*0 / *not implemented yet"])
    # -v brings pytest's detail back: one line per case and each failure's text.
    verbose = _run(pytester, template_source, "--rlsys-lang", "en", "-v")
    assert len(verbose.outlines) > _case_count()
    assert "chapter check" in verbose.stdout.str()


def test_node_ids_never_show_where_the_package_is_installed(
    pytester: pytest.Pytester, reference_source: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A .venv inside the project: the installed package lies under the rootdir, and node
    # ids would read .venv/.../site-packages/pytest_rlsys/plugin/anchor/battery.rlsys::...
    site = pytester.path / ".venv" / "lib" / "site-packages"
    shutil.copytree(
        REPO / "pytest_rlsys", site / "pytest_rlsys", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in ("exercises", "solutions", "schemas"):
        shutil.copytree(REPO / name, site / "pytest_rlsys" / "_bundled" / name)
    monkeypatch.setenv("PYTHONPATH", str(site))
    pytester.makeini("[pytest]\n")
    result = _run(pytester, reference_source, "-rA", "-k", "effective_rates")
    result.stdout.fnmatch_lines(["PASSED battery.rlsys::todo1.visible.effective_rates"])
    assert "site-packages" not in result.stdout.str()
    assert "_bundled" not in result.stdout.str()


def test_a_load_error_is_said_once(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "def pipeline_capacity(:\n    pass\n", "--rlsys-lang", "en")
    text = result.stdout.str()
    assert text.count("SyntaxError") == 1, text
    assert len(result.outlines) <= 40
    result.stdout.fnmatch_lines(
        [
            f"*{_case_count()} cases (TODO 1, TODO 2, TODO 3) failed the same way:",
            "*could not be loaded: SyntaxError*",
        ]
    )


def test_each_failure_once_and_hidden_by_category(
    pytester: pytest.Pytester, reference_source: str
) -> None:
    buggy = reference_source.replace("bottlenecks = sorted(\n", "bottlenecks = list(\n")
    result = _run(pytester, buggy, "--rlsys-lang", "en")
    summary = _summary(result)
    text = "\n".join(result.outlines)
    assert text.count("[TODO 1] lists every tied bottleneck") == 1
    hidden = [line for line in summary if line.startswith("  - TODO 1:")]
    assert hidden and len(hidden) == len(set(hidden))  # one line per kind, with a count
    assert all(len(line) <= 100 for line in result.outlines)


# -- learners: one language ------------------------------------------------------------------


def test_english_output_has_no_chinese(pytester: pytest.Pytester) -> None:
    example = (REPO / "examples" / "learner_example.py").read_text(encoding="utf-8")
    result = _run(pytester, example, "--rlsys-lang", "en")
    summary = _summary(result)
    assert any("[TODO 2]" in line for line in summary)
    assert not [line for line in summary if has_cjk(line)]


def test_chinese_output_has_no_english_wrong_value(pytester: pytest.Pytester) -> None:
    example = (REPO / "examples" / "learner_example.py").read_text(encoding="utf-8")
    result = _run(pytester, example, "--rlsys-lang", "zh")
    text = "\n".join(_summary(result))
    assert "值错误" in text and "wrong value" not in text
    assert "未通过的隐藏用例" in text


def test_every_visible_claim_has_an_english_text() -> None:
    claims = [c.claim for c in prepare_battery(1).cases if c.visibility == "visible"]
    assert claims
    untranslated = [c for c in claims if has_cjk(claim_text(c, "en"))]
    assert untranslated == [], f"add these to messages.CLAIMS_EN: {untranslated}"
    used = {zh for zh in CLAIMS_EN if any(zh in c for c in claims)}
    assert used == set(CLAIMS_EN)  # no stale entries


def test_table_aligns_by_display_width() -> None:
    cases = [
        CaseResult(
            id=f"{s}.visible.x", section=s, visibility="visible", max_cents=1000, status="passed"
        )
        for s in ("todo1", "gpu_result")
    ]
    report = ScoreReport(
        cases=cases, seed=1, submission=None, submission_sha256=None, battery_sha256=None
    )
    for lang in ("zh", "en"):
        lines = reports.table_lines(report, lang)
        # the score column ends at the same display column on every row
        ends = {
            reports.display_width(line.split(" / ")[0]) + len(line.split(" / ")[1].split()[0])
            for line in lines[1:]
        }
        assert len(ends) == 1, lines
        header, *_ = lines
        assert reports.display_width(header) == reports.display_width(lines[1].rstrip()), lines


def test_clip_and_wrap_keep_to_the_width() -> None:
    line = "输入: " + "阶段" * 80
    assert reports.display_width(reports.clip(line)) <= reports.WIDTH
    assert reports.clip("short") == "short"
    wrapped = reports.wrap("word " * 60 + "阶段" * 70, "  ")
    assert all(reports.display_width(w) <= reports.WIDTH and w.startswith("  ") for w in wrapped)
    assert "".join(w.strip() for w in wrapped).replace(" ", "") == ("word" * 60 + "阶段" * 70)


# -- learners: files as editors save them -------------------------------------------------


@pytest.mark.parametrize(
    "transform",
    [
        pytest.param(lambda b: b"\xef\xbb\xbf" + b, id="utf8-bom"),
        pytest.param(lambda b: b.replace(b"\n", b"\r\n"), id="crlf"),
        pytest.param(lambda b: b"\xef\xbb\xbf" + b.replace(b"\n", b"\r\n"), id="bom+crlf"),
        pytest.param(lambda b: b.replace(b"\n", b"\r"), id="old-mac-cr"),
    ],
)
def test_editor_encodings_are_accepted(transform: object) -> None:
    data = transform(solution_path().read_bytes())  # type: ignore[operator]
    grader = Grader(Path("mine.py"), data, 1)
    grader.run_all()
    report = grader.report()
    assert report.score == report.max_score == 100


# -- instructors: rlsys grade takes every documented option ---------------------------------


def test_grade_accepts_every_option_the_readme_lists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.py").write_text(solution_path().read_text(encoding="utf-8"))
    (tmp_path / "rubric.toml").write_text("[todo1]\nvisible = 10\nhidden = 20\n")
    outs = {
        name: tmp_path / f"{name}.out"
        for name in ("report", "gradescope", "prairielearn", "junit", "classroom")
    }
    argv = [
        "grade",
        "mine.py",
        "--seed",
        "2",
        "--lang",
        "en",
        "--rubric",
        "rubric.toml",
        "--timeout",
        "4",
        "--budget",
        "40",
        "--memory-mb",
        "2048",
        "--cpu-seconds",
        "50",
        "--child-user",
        "none",
    ]
    for name, path in outs.items():
        argv += [f"--{name}", str(path)]
    assert main(argv) == ExitCode.OK
    doc = load_report(outs["report"])
    assert doc["score"] == 100 and doc["reproducibility"]["seed"] == 2
    assert all(path.stat().st_size > 0 for path in outs.values())


def test_the_package_is_marked_not_to_be_rewritten() -> None:
    # rlsys grade imports pytest_rlsys before pytest.main; without the marker pytest warns
    # "Module already imported so cannot be rewritten" when rlsys is installed as a wheel.
    from _pytest.assertion.rewrite import AssertionRewriter

    import pytest_rlsys

    assert AssertionRewriter.is_rewrite_disabled(pytest_rlsys.__doc__ or "")


# -- instructors: kits, each run the way its platform runs it -------------------------------


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "gpu"), env.get("PYTHONPATH", "")])
    env["RLSYS_PYTHON"] = sys.executable
    env.update(extra)
    return env


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_gradescope_kit_grades_like_gradescope(tmp_path: Path) -> None:
    assert main(["kit", "gradescope", str(tmp_path / "kit")]) == ExitCode.OK
    with zipfile.ZipFile(tmp_path / "kit" / "autograder.zip") as zf:
        assert sorted(zf.namelist()) == ["README.md", "run_autograder", "setup.sh"]
        root = tmp_path / "autograder"  # Gradescope unzips into /autograder/source
        zf.extractall(root / "source")
        mode = zf.getinfo("run_autograder").external_attr >> 16
    assert mode & 0o111, "run_autograder must be executable in the zip"
    setup = (root / "source" / "setup.sh").read_text(encoding="utf-8")
    assert "'pytest-rlsys==0.1.0'" in setup  # the pinned version of this package
    subprocess.run(["bash", "-n", str(root / "source" / "setup.sh")], check=True)
    (root / "submission").mkdir()
    (root / "submission" / "rlsys_ledger.py").write_text(
        solution_path().read_text(encoding="utf-8")
    )
    env = _env(RLSYS_AUTOGRADER_ROOT=str(root))
    subprocess.run(
        ["bash", str(root / "source" / "run_autograder")],
        env=env,
        check=True,
        capture_output=True,
        cwd=root,
    )
    results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    assert results["score"] == 100 and len(results["tests"]) > 100
    # A submission that is not there still gets results: score 0 and the reason.
    (root / "submission" / "rlsys_ledger.py").unlink()
    subprocess.run(
        ["bash", str(root / "source" / "run_autograder")], env=env, capture_output=True, cwd=root
    )
    results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    assert results["score"] == 0 and results["output"]


def test_gradescope_kit_can_bundle_a_wheel(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = tmp_path / "pytest_rlsys-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"PK")
    assert main(["kit", "gradescope", str(tmp_path / "kit"), "--wheel", str(wheel)]) == 0
    with zipfile.ZipFile(tmp_path / "kit" / "autograder.zip") as zf:
        assert wheel.name in zf.namelist()
        assert f'"$HERE/{wheel.name}"' in zf.read("setup.sh").decode()
    bad = tmp_path / "pytest_rlsys-9.9.9-py3-none-any.whl"
    bad.write_bytes(b"PK")
    assert main(["kit", "gradescope", str(tmp_path / "k2"), "--wheel", str(bad)]) == 3
    assert "0.1.0" in capsys.readouterr().err
    assert main(["kit", "gradescope", str(tmp_path / "kit")]) == 2  # not empty: no --force


def test_prairielearn_kit_grades_like_the_external_grader(tmp_path: Path) -> None:
    kit = tmp_path / "question"
    assert main(["kit", "prairielearn", str(kit)]) == ExitCode.OK
    info = json.loads((kit / "info.json").read_text(encoding="utf-8"))
    assert info["gradingMethod"] == "External"
    assert info["externalGradingOptions"]["entrypoint"] == "/grade/tests/run.sh"
    assert 'file-name="rlsys_ledger.py"' in (kit / "question.html").read_text(encoding="utf-8")
    assert (kit / "rlsys_ledger.py").read_text(encoding="utf-8") == exercise_path().read_text(
        encoding="utf-8"
    )
    assert "pytest-rlsys==0.1.0" in (kit / "docker" / "Dockerfile").read_text(encoding="utf-8")
    grade = tmp_path / "grade"  # PrairieLearn mounts tests/ and the student's files here
    (grade / "tests").mkdir(parents=True)
    (grade / "student").mkdir()
    (grade / "tests" / "run.sh").write_bytes((kit / "tests" / "run.sh").read_bytes())
    (grade / "student" / "rlsys_ledger.py").write_text(solution_path().read_text(encoding="utf-8"))
    env = _env(RLSYS_GRADE_ROOT=str(grade))
    subprocess.run(
        ["bash", str(grade / "tests" / "run.sh")], env=env, check=True, capture_output=True
    )
    results = json.loads((grade / "results" / "results.json").read_text(encoding="utf-8"))
    assert results["gradable"] is True and results["score"] == 1.0


def test_classroom_kit_grades_like_the_workflow(tmp_path: Path) -> None:
    yaml = pytest.importorskip("yaml")
    repo = tmp_path / "repo"
    assert main(["kit", "classroom", str(repo)]) == ExitCode.OK
    workflow = yaml.safe_load((repo / ".github" / "workflows" / "classroom.yml").read_text())
    steps = workflow["jobs"]["run-autograding-tests"]["steps"]
    install = next(s for s in steps if s.get("name") == "Install the grader")
    assert "pytest-rlsys==0.1.0" in install["run"]
    grading = next(s for s in steps if s.get("id") == "rlsys")
    reporter = next(s for s in steps if "autograding-grading-reporter" in s.get("uses", ""))
    assert reporter["with"]["runners"] == "rlsys"
    assert "steps.rlsys.outputs.result" in reporter["env"]["RLSYS_RESULTS"]
    # The learner's push: the finished exercise replaces the starter file.
    (repo / "rlsys_ledger.py").write_text(solution_path().read_text(encoding="utf-8"))
    output = tmp_path / "github_output"
    env = _env(GITHUB_OUTPUT=str(output), RUNNER_TEMP=str(tmp_path))
    subprocess.run(
        ["bash", "-c", grading["run"]], cwd=repo, env=env, check=True, capture_output=True
    )
    # What the reporter does: decode the runner's result and sum the points.
    line = next(x for x in output.read_text().splitlines() if x.startswith("result="))
    result = json.loads(base64.b64decode(line.removeprefix("result=")))
    points = sum(test["score"] for test in result["tests"])
    # (the per-test scores are floats: their sum is 100 up to rounding)
    assert (points, result["max_score"]) == (pytest.approx(100), 100)
    json.loads((repo / ".github" / "classroom" / "autograding.json").read_text())


# -- systems engineers: the ledger ----------------------------------------------------------


def _topology(**change: object) -> dict[str, object]:
    topo = json.loads((REPO / "examples" / "topology.json").read_text(encoding="utf-8"))
    topo.update(change)
    return topo


@pytest.mark.parametrize(
    ("topo", "suffix", "fragment"),
    [
        (_topology(arrival_rate=True), ".json", "arrival_rate must be a finite number, not True"),
        (
            _topology(stage_rates={"rollout": True, "reward": 160, "learner": 80}),
            ".json",
            "stage_rates.rollout must be a finite number",
        ),
        (_topology(memory_limits={"A": 40, "B": 24, "Z": 1}), ".json", "['Z']"),
        (_topology(recovery_ok="false"), ".json", "recovery_ok must be true or false"),
        (_topology(edges=[{"source": "rollout"}]), ".json", "edge 1 lacks"),
        (_topology(placement={"rollout": "A", "reward": "A"}), ".json", "edge 2: endpoint"),
        (_topology(), ".txt", "give a .json, .toml, .yaml or .yml topology file"),
    ],
)
def test_ledger_refuses_what_a_person_would_get_wrong(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    topo: dict[str, object],
    suffix: str,
    fragment: str,
) -> None:
    path = tmp_path / f"topo{suffix}"
    path.write_text(json.dumps(topo), encoding="utf-8")
    assert main(["ledger", str(path)]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err


def test_ledger_reads_json_with_a_bom(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "topo.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(_topology()).encode())
    assert main(["ledger", str(path), "--json"]) == ExitCode.OK
    assert json.loads(capsys.readouterr().out)["admission"]["decision"] == "tune"
