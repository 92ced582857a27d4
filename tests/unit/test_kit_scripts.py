"""The kits' shell scripts (pytest_rlsys/outputs/kits/scripts/), checked as files: lint
(shellcheck, as CI runs it), the file-picking rule the README states, and the install
script's clean-up.  The kits built and run as each platform runs them:
tests/plugin/test_kits.py."""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from pytest_rlsys.outputs.kits import SCRIPTS, script
from tests.conftest import REPO

# Files only: an installed package may hold a __pycache__ beside the scripts.
SHELL_SCRIPTS = sorted(
    p for p in SCRIPTS.iterdir() if p.is_file() and p.suffix not in (".py", ".yml", ".pyc")
)


def test_every_kit_script_passes_shellcheck() -> None:
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (apt-get install shellcheck)")
    assert {p.name for p in SHELL_SCRIPTS} >= {"install.sh", "run.sh", "gradescope-setup.sh"}
    for path in SHELL_SCRIPTS:
        # install.sh is POSIX sh (python:*-slim images have dash); the rest are bash.
        shell = "sh" if path.read_text(encoding="utf-8").startswith("#!/bin/sh") else "bash"
        done = subprocess.run(
            [shellcheck, "-s", shell, str(path)], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stdout


def test_shellcheck_sees_a_planted_fault(tmp_path: Path) -> None:
    """The control: the check above would fail on the faults it is there for."""
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (apt-get install shellcheck)")
    bad = tmp_path / "bad.sh"
    bad.write_text(script("run.sh").replace('grade "$SUBMISSION"', "grade $SUBMISSION"), "utf-8")
    done = subprocess.run([shellcheck, "-s", "bash", str(bad)], capture_output=True, text=True)
    assert done.returncode != 0 and "SC2086" in done.stdout


def test_gradescope_and_prairielearn_share_one_run_script() -> None:
    """Each platform's own script sets its paths and runs run.sh; no other script grades."""
    for name in ("gradescope-run_autograder", "prairielearn-run.sh", "actions-grade.sh"):
        text = script(name)
        assert "pytest_rlsys grade" not in text and "run.sh" in text, name
    assert script("run.sh").count("-m pytest_rlsys grade") == 1
    assert "run.sh" in script("classroom50-autograder.py")


@pytest.mark.parametrize(
    ("files", "graded", "problem"),
    [
        (["rlsys_ledger.py", "helper.py"], "rlsys_ledger.py", ""),
        (["my_ledger.py"], "my_ledger.py", ""),
        (
            ["a.py", "b.py"],
            "rlsys_ledger.py",
            "submit one file named rlsys_ledger.py (found: a.py, b.py)",
        ),
        ([], "rlsys_ledger.py", "submit one file named rlsys_ledger.py (found no .py file)"),
        (  # a renamed file is named, so the learner sees what went wrong
            ["rlsys_ledger.txt", "README.md"],
            "rlsys_ledger.py",
            "submit one file named rlsys_ledger.py (found no .py file; other files: "
            "rlsys_ledger.txt)",
        ),
    ],
)
def test_the_kits_pick_the_file_the_readme_says(
    tmp_path: Path, files: list[str], graded: str, problem: str
) -> None:
    # Every kit picks the file with run.sh's one function; the README says what it does.
    for name in files:
        (tmp_path / name).write_text("x = 1\n", encoding="utf-8")
    run = SCRIPTS / "run.sh"
    pick = f"eval \"$(sed -n '/^pick_submission() {{/,/^}}/p' '{run}')\""
    code = pick + '\npick_submission "$1"\nprintf "%s\\n%s" "$SUBMISSION" "$PROBLEM"'
    done = subprocess.run(
        ["bash", "-c", code, "pick", str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert done.stdout.split("\n") == [str(tmp_path / graded), problem]
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert "the only `.py` file submitted is graded whatever its name" in readme
    assert (
        'no `.py` file or several get "submit one file named rlsys_ledger.py (found: ...)"'
        in readme
    )


def test_the_install_script_removes_only_what_it_made(tmp_path: Path) -> None:
    # The kits' install.sh once ended with `rm -rf /tmp/pip-*`: run by root on a shared
    # machine ("try it elsewhere"), it deleted other users' pip folders.  pip now unpacks
    # into a private folder of the script's own, removed at the end.
    installer = tmp_path / "install.sh"
    installer.write_text(script("install.sh"), encoding="utf-8")
    seen = tmp_path / "tmpdir-seen"
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    python = tmp_path / "python"  # a stand-in: pip unpacks into TMPDIR, -c names the package
    python.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = -m ]; then echo "$TMPDIR" > {seen}; mkdir -p "$TMPDIR/pip-unpack";'
        f" else echo {pkg}; fi\n",
        encoding="utf-8",
    )
    python.chmod(0o755)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "pytest_rlsys-0.1.0-py3-none-any.whl").write_bytes(b"")
    others = Path(tempfile.mkdtemp(prefix="pip-", dir="/tmp"))  # another user's pip folder
    try:
        subprocess.run(["sh", str(installer), str(python), str(wheels)], check=True, timeout=60)
        used = Path(seen.read_text(encoding="utf-8").strip())
        assert others.is_dir(), "install.sh removed a pip folder it did not make"
        assert used != Path("/tmp") and not used.exists(), used  # its own, and removed
        assert stat.S_IMODE(pkg.stat().st_mode) & 0o077 == 0
        # The wheels are read, never changed: a Classroom 50 bundle or a dry run on the
        # pushed folder stays whole (Gradescope's setup.sh deletes its own copy).
        assert [p.name for p in wheels.iterdir()] == ["pytest_rlsys-0.1.0-py3-none-any.whl"]
    finally:
        shutil.rmtree(others, ignore_errors=True)


def _rendered(markdown: str) -> str:
    """``markdown`` as GitHub renders it (CommonMark with GFM's tables and strikethrough),
    the HTML's text: what a reader sees."""
    mdit = pytest.importorskip("markdown_it")
    return mdit.MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(markdown)


def test_a_reason_is_inert_in_the_job_summary_and_the_release_body() -> None:
    """reports._md: a learner's file name in a reason shows as written, never as markup,
    and with no backslash where Markdown needs none (course trial r5 L-e)."""
    import html
    import re

    from pytest_rlsys.outputs.kits.reports import Outcome, actions_summary

    why = (
        "submit one file (found: it's_<img src=x>.py, [a](http://x), *b*, ~~c~~, `d`, _e_, "
        "rlsys_ledger.py, a\\b, #1 {x} +y -z! \x1b[31m)"
    )
    text = actions_summary(Outcome(None, problem=why))
    line = next(x for x in text.splitlines() if "score is 0" in x)
    assert "<img" not in line and "&lt;img src=x&gt;" in line and "it's" in line
    assert "\\[a\\](http://x)" in line and "\\*b\\*" in line
    # Names and punctuation as written: a backslash only before what could be markup.
    assert "rlsys_ledger.py, a\\\\b, #1 {x} +y -z!" in line, line
    assert "\x1b" not in text and "Points 0/100" in text
    # As rendered: one bold line with no element of the learner's inside it, reading
    # exactly as the reason was written, no escape left visible.
    (inner,) = re.findall(r"<p><strong>(No file was.*?)</strong></p>", _rendered(text))
    assert "<" not in inner, inner
    assert html.unescape(inner).endswith(why.replace("\x1b", " ")), inner


def _report(load_error: str | None = None) -> dict[str, object]:
    return {
        "score": 0,
        "max_score": 100,
        "load_error": load_error,
        "fence": {"level": "seccomp", "mechanisms": ["x"]},
        "sections": {
            "todo1": {"score": 0, "max_score": 30},
            "todo2": {"score": 0, "max_score": 35},
            "todo3": {"score": 0, "max_score": 35},
        },
    }


C50_ENV = {
    "CLASSROOM": "c",
    "ASSIGNMENT": "a",
    "SUBMISSION_TAG": "submit/x",
    "COMMIT_URL": "u",
    "RELEASE_URL": "r",
}


def test_a_file_that_did_not_load_says_why_where_the_learner_looks() -> None:
    """A score report whose file did not load: the reason in the Actions summary, in
    every result.json row (valid against classroom50/result/v1) and in release-body.md."""
    import html
    import re

    import jsonschema

    from pytest_rlsys.outputs.kits.reports import (
        Outcome,
        actions_summary,
        classroom50_result,
        release_body,
    )

    outcome = Outcome(_report("SyntaxError: invalid syntax (x.py, line 1)"))
    summary = actions_summary(outcome)
    assert "The file did not load, so every case scores 0: SyntaxError" in summary
    result = classroom50_result(outcome, C50_ENV)
    schema = json.loads((REPO / "tests/data/classroom50-result-v1.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(result)
    assert all("SyntaxError" in t["message"] for t in result["tests"])
    assert "The file did not load" in release_body(outcome, result)
    # The Release as GitHub renders it: the reason as the grader said it, no escape shown.
    said = "SyntaxError: invalid syntax (rlsys_ledger.py, line 1) — line 1 reads: def f(x_:"
    body = _rendered(release_body(Outcome(_report(said)), result))
    assert said in html.unescape(re.sub(r"<[^>]+>", "", body)) and "\\" not in body, body
    # A file that loaded and scored 0 carries no such line.
    loaded = Outcome(_report())
    assert "did not load" not in actions_summary(loaded)
    assert all("message" not in t for t in classroom50_result(loaded, C50_ENV)["tests"])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_actions_log_says_what_the_score_file_says(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    lang: str,
) -> None:
    """A file scored 0 because it did not load (an empty one): the log says its points
    and why, as the score file and the summary do, never "not graded" (course trial r5
    M2); under zh in Chinese beside the notice's machine-read "Points 0/100"."""
    from pytest_rlsys.outputs.kits import reports

    empty = {"en": "the file is empty", "zh": "文件是空的"}[lang]
    score = tmp_path / "score.json"
    score.write_text(json.dumps({**_report(empty), "reproducibility": {"lang": lang}}))
    announce = tmp_path / "announce"
    monkeypatch.setenv("RLSYS_ANNOUNCE", str(announce))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    monkeypatch.delenv("RLSYS_ARTIFACT", raising=False)
    assert reports.main(["actions", str(score)]) == 1
    log = capsys.readouterr().out
    head = {"en": "rlsys score: Points 0/100", "zh": "rlsys 得分：0/100"}[lang]
    assert log.startswith(f"  {head}{'；' if lang == 'zh' else '; '}") and empty in log, log
    assert "not graded" not in log.lower() and "未评分" not in log
    assert announce.read_text("utf-8").splitlines()[-1] == "::notice title=rlsys::Points 0/100"
    summary = (tmp_path / "summary.md").read_text("utf-8")
    assert reports.Outcome(json.loads(score.read_text())).reason() in summary


def test_a_todo_left_as_the_template_has_it_says_so_where_the_learner_looks() -> None:
    """The template (or one TODO of it) scores 0 on that TODO: each page says it is not
    implemented yet, as Gradescope and PrairieLearn do, not only "FAIL 0/30"."""
    import jsonschema

    from pytest_rlsys.outputs.kits.reports import (
        Outcome,
        actions_summary,
        classroom50_result,
        release_body,
    )

    doc = _report()
    doc["sections"]["todo2"]["not_implemented"] = True  # type: ignore[index]
    for lang, words in (("en", "TODO 2: not implemented yet"), ("zh", "TODO 2：尚未实现")):
        doc["reproducibility"] = {"lang": lang}
        outcome = Outcome(doc)
        assert words in actions_summary(outcome)
        result = classroom50_result(outcome, C50_ENV)
        schema = json.loads((REPO / "tests/data/classroom50-result-v1.schema.json").read_text())
        jsonschema.Draft202012Validator(schema).validate(result)
        assert [t.get("message") for t in result["tests"]] == [None, words, None]
        assert words in release_body(outcome, result)
    # Done but wrong: no such line.
    assert "not implemented" not in actions_summary(Outcome(_report()))


def test_no_seed_is_an_infrastructure_error_on_github_s_runners(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No score report and no learner's problem: not a score.  Actions: the summary says
    so, an ::error:: and no Points line, exit 1; Classroom 50: exit 1, no result.json."""
    from pytest_rlsys.outputs.kits import reports

    monkeypatch.chdir(tmp_path)
    summary, announce = tmp_path / "summary.md", tmp_path / "announce"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("RLSYS_ANNOUNCE", str(announce))
    monkeypatch.setenv("RLSYS_ARTIFACT", str(tmp_path / "score.json"))
    why = "the course has not set the RLSYS_SEED secret (50% done)"
    assert reports.main(["actions", str(tmp_path / "none"), "--error", why]) == 1
    text = summary.read_text("utf-8")
    assert "infrastructure error" in text and "not a score" in text and "Points" not in text
    (line,) = announce.read_text("utf-8").splitlines()
    assert line.startswith("::error title=rlsys::") and "50%25 done" in line
    artifact = json.loads((tmp_path / "score.json").read_text("utf-8"))
    assert "score" not in artifact and "RLSYS_SEED" in artifact["infrastructure_error"]
    for name, value in C50_ENV.items():
        monkeypatch.setenv(name, value)
    assert reports.main(["classroom50", str(tmp_path / "none"), "--error", why]) == 1
    assert not (tmp_path / "result.json").exists()


def test_the_score_line_a_person_reads_is_in_the_report_s_language() -> None:
    """Under zh the summary and the Release say the points in Chinese; the notice keeps the
    machine-read "Points X/Y"."""
    from pytest_rlsys.outputs.kits.reports import (
        Outcome,
        actions_summary,
        classroom50_result,
        points_line,
        release_body,
    )

    doc = {**_report(), "reproducibility": {"lang": "zh"}}
    outcome = Outcome(doc)
    assert "rlsys 得分：0/100" in actions_summary(outcome)
    assert "Points" not in actions_summary(outcome)
    body = release_body(outcome, classroom50_result(outcome, C50_ENV))
    assert "rlsys 得分：0/100" in body and "| 测试 | 结果 | 得分 |" in body and "未通过" in body
    assert points_line(outcome) == "Points 0/100"
    assert "rlsys score: Points 0/100" in actions_summary(Outcome(_report()))


def test_the_page_the_kit_readmes_point_to_exists_and_its_dry_run_sets_what_the_runner_sets() -> (
    None
):
    import re

    from pytest_rlsys.outputs.kits import DOCS
    from pytest_rlsys.outputs.kits.reports import C50_REQUIRED

    page = REPO / re.search(r"docs/\S+\.md", DOCS).group(0)  # type: ignore[union-attr]
    text = page.read_text(encoding="utf-8")
    recipe = text[text.index("**Classroom 50**") :]
    recipe = recipe[recipe.index("```sh") : recipe.index("```", recipe.index("```sh") + 5)]
    assert all(f"{name}=" in recipe for name in C50_REQUIRED), recipe
