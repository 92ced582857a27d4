"""One declaration per option: pytest's flags, every rlsys command's flags and the README's
option table all come from (and must match) pytest_rlsys.settings.OPTIONS."""

from __future__ import annotations

import argparse
import io
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_rlsys import plugin, settings
from pytest_rlsys.cli import ExitCode, build_parser, main
from pytest_rlsys.cli.batch import _Progress
from tests.conftest import REPO

ROW = re.compile(r"`(-[-\w]+)(?: ([^`]+))?`")


def _cells(line: str) -> list[str]:
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]


def readme_table() -> list[list[set[tuple[str, str | None]] | set[str]]]:
    """Each row of the README's option table as (pytest, ini, grade, batch) flag sets."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    start = lines.index("| pytest option | ini key | `rlsys grade` | `rlsys batch` | meaning |")
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        pytest_cell, ini_cell, grade_cell, batch_cell, _ = _cells(line)
        rows.append(
            [
                {(m[0], m[1] or None) for m in ROW.findall(pytest_cell)},
                set(re.findall(r"`(rlsys_\w+)`", ini_cell)),
                {(m[0], m[1] or None) for m in ROW.findall(grade_cell)},
                {(m[0], m[1] or None) for m in ROW.findall(batch_cell)},
            ]
        )
    return rows


def pytest_flags() -> tuple[set[tuple[str, str | None]], set[str]]:
    """What the plugin really registers with pytest: flags with metavars, and ini keys."""
    parser = pytest.Parser(_ispytest=True)
    plugin.pytest_addoption(parser, pytest.PytestPluginManager())
    group = parser.getgroup("rlsys")
    flags = {
        (name, option.attrs().get("metavar")) for option in group.options for name in option.names()
    }
    return flags, set(parser._inidict)


def command_flags(command: str) -> set[tuple[str, str | None]]:
    """What `rlsys COMMAND` really accepts (options only, without -h)."""
    root = build_parser()
    sub = next(a for a in root._actions if isinstance(a, argparse._SubParsersAction))
    parser = sub.choices[command]
    out = set()
    for action in parser._actions:
        if not action.option_strings or isinstance(action, argparse._HelpAction):
            continue
        metavar = action.metavar if isinstance(action.metavar, str) else None
        out |= {
            (flag, metavar if flag.startswith("--") else None) for flag in action.option_strings
        }
    return out


def test_readme_table_matches_pytest_and_every_command() -> None:
    rows = readme_table()
    assert rows, "README has no option table"
    union = [set().union(*(row[i] for row in rows)) for i in range(4)]
    flags, ini = pytest_flags()
    assert union[0] == flags
    assert union[1] == ini
    assert union[2] == command_flags("grade")
    assert union[3] == command_flags("batch")
    # ... and each row is one option of the table, in every column where it exists.
    shown = [o for o in settings.OPTIONS if o.pytest or {"grade", "batch"} & set(o.commands)]
    assert len(rows) == len(shown)
    for row, option in zip(rows, shown, strict=True):
        assert row[0] == ({(option.pytest_flag, option.metavar)} if option.pytest else set())
        assert row[1] == ({option.ini_key} if option.ini_key else set())


def test_other_commands_match_the_readme() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    start = text.index("| command | option | meaning |")
    documented: dict[str, set[tuple[str, str | None]]] = {}
    for line in text[start + 2 :]:
        if not line.startswith("|"):
            break
        command_cell, option_cell, _ = _cells(line)
        command = command_cell.strip("`").split()[1]
        documented.setdefault(command, set()).update(
            (m[0], m[1] or None) for m in ROW.findall(option_cell)
        )
    assert set(documented) == {"template", "ledger", "kit", "validate", "result", "similarity"}
    for command, flags in documented.items():
        assert flags == command_flags(command), command
        declared = {(o.cli_flag, o.metavar) for o in settings.for_command(command)}
        assert declared == flags


def test_every_option_is_declared_once() -> None:
    pytest_options = [o.pytest_flag for o in settings.OPTIONS if o.pytest]
    assert len(pytest_options) == len(set(pytest_options))
    for command in ("grade", "batch", "template", "ledger", "kit", "validate", "result"):
        flags = [o.cli_flag for o in settings.for_command(command)]
        assert len(flags) == len(set(flags)), command
    for option in settings.OPTIONS:
        assert option.pytest or option.commands, option.name
        assert option.ini_key is None or option.pytest  # an ini key is read by the plugin
        assert option.help.strip()


def test_help_texts_take_their_defaults_from_the_records() -> None:
    from pytest_rlsys.grading.outcomes import Limits
    from pytest_rlsys.grading.rubric import Rubric
    from pytest_rlsys.grading.scoring import RenderOptions
    from pytest_rlsys.resultfile.loading import DEFAULT_MAX_BYTES

    records = {"limits": Limits(), "render": RenderOptions(), "rubric": Rubric()}
    for option in settings.OPTIONS:
        # A default written as a literal would drift from the one the grader uses.
        assert not re.search(r"default:? \d", option.help), option.name
        if option.record is not None:
            part, field = option.record
            if part == "result_file":
                value: object = DEFAULT_MAX_BYTES // 2**20
            else:
                value = getattr(records[part], field)
            shown = f"{value:g}" if isinstance(value, float) else str(value)
            assert f"default {shown}" in option.help_text, option.name
    limits = settings.limits_from({"timeout": 2.5, "child_user": "none"})
    assert (limits.call_timeout_s, limits.child_user) == (2.5, None)
    assert settings.limits_from({}) == Limits()


@pytest.mark.parametrize(
    ("argv", "flag", "other"),
    [
        (["batch", "{tmp}", "--seed", "abc"], "--seed", "--rlsys-seed"),
        (["batch", "{tmp}", "--memory-mb", "0"], "--memory-mb", "--rlsys-memory-mb"),
        (["batch", "{tmp}", "--jobs", "0"], "--jobs", "--rlsys-jobs"),
        (["grade", "x.py", "--timeout", "-1"], "--timeout", "--rlsys-timeout"),
        (["grade", "x.py", "--cpu-seconds", "true"], "--cpu-seconds", "--rlsys-cpu-seconds"),
        (["grade", "x.py", "--lang", "fr"], "--lang", "--rlsys-lang"),
        (["grade", "x.py", "--budget", "nan"], "--budget", "--rlsys-budget"),
    ],
)
def test_errors_name_the_flag_of_the_command_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], flag: str, other: str
) -> None:
    assert main([a.format(tmp=tmp_path) for a in argv]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert f"rlsys {argv[0]}: error: argument {flag}" in err
    assert other not in err and "Traceback" not in err


def test_resolve_names_the_pytest_flag_or_the_ini_key() -> None:
    with pytest.raises(settings.SettingError, match=r"^--rlsys-seed='abc': must be"):
        settings.resolve("seed", "abc", None)
    with pytest.raises(settings.SettingError, match=r"^ini option rlsys_memory_mb='x'"):
        settings.resolve("memory_mb", None, "x")
    with pytest.raises(settings.SettingError, match=r"^--seed='-1'"):
        settings.resolve("seed", "-1", None, flag="--seed")
    assert settings.resolve("timeout", None, "2.5") == 2.5
    assert settings.resolve("lang", None, "") is None


def test_help_documents_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == ExitCode.OK
    top = capsys.readouterr().out
    for code in ExitCode:
        assert f"{int(code)} " in top.split("exit codes:")[1]
    for command in ("grade", "batch", "template", "ledger", "kit"):
        assert main([command, "--help"]) == ExitCode.OK
        text = capsys.readouterr().out
        assert (
            "exit codes:\n  0  completed\n  2  usage error (a bad option, a named input file "
            in text
        )
        assert "\n  3  could not finish" in text
    assert main([]) == ExitCode.USAGE
    assert main(["frobnicate"]) == ExitCode.USAGE
    assert "unknown command 'frobnicate'" in capsys.readouterr().err


def test_grade_exit_code_for_a_missing_output_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no" / "such" / "score.json"
    assert main(["grade", "x.py", "--report", str(missing)]) == ExitCode.ERROR
    assert "--report" in capsys.readouterr().err
    assert not missing.parent.exists()


def test_batch_checks_output_paths_before_grading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    subs = tmp_path / "subs"
    subs.mkdir(mode=0o700)
    (subs / "slow.py").write_text("import time\ntime.sleep(30)\n")
    began = time.monotonic()
    assert main(["batch", str(subs), "--json", str(tmp_path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "argument --json" in err and "is a directory" in err
    missing = tmp_path / "nowhere" / "grades.csv"
    assert main(["batch", str(subs), "--csv", str(missing), "--no-progress"]) == 3
    err = capsys.readouterr().err
    assert "--csv" in err and "does not exist" in err
    assert not missing.parent.exists()  # never created silently
    assert "submissions:" not in err  # nothing was graded
    assert time.monotonic() - began < 25


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_on_a_terminal_and_names_the_slowest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert _Progress(3, True).bar is None  # a log file gets no bar
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert _Progress(3, False).bar is None  # --no-progress
    progress = _Progress(3, True)
    assert progress.bar is not None
    progress.started("alice.py")
    time.sleep(0.01)
    progress.started("bob.py")
    assert progress.slowest().startswith("slowest: alice.py")
    progress.finished("alice.py")
    assert progress.slowest().startswith("slowest: bob.py")
    progress.refresh()
    progress.close()
    assert "slowest: bob.py" in terminal.getvalue()


def test_a_closed_pipe_and_ctrl_c_end_quietly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{REPO / 'gpu'}"}
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before rlsys writes a byte
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest_rlsys", "template"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            check=False,
        )
    finally:
        os.close(write_end)
    assert done.returncode == ExitCode.OK and done.stderr == ""
    from pytest_rlsys.cli import commands

    def interrupted(args: object) -> ExitCode:
        raise KeyboardInterrupt

    monkeypatch.setattr(commands, "template", interrupted)
    assert main(["template"]) == ExitCode.INTERRUPTED
    assert capsys.readouterr().err == "rlsys: interrupted\n"


def test_pytest_and_the_commands_build_the_same_request(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One request from either driver: same paths, seed, rubric, limits, outputs and
    render options for the same settings."""
    monkeypatch.chdir(pytester.path)
    (pytester.path / "mine.py").write_text("", encoding="utf-8")
    (pytester.path / "rubric.toml").write_text("[todo1]\nvisible = 4\n", encoding="utf-8")
    values = {
        "seed": "7",
        "lang": "zh",
        "rubric": "rubric.toml",
        "timeout": "2.5",
        "budget": "30",
        "memory_mb": "512",
        "cpu_seconds": "9",
        "child_user": "none",
        "report": "score.json",
        "junit": "junit.xml",
        "hidden_visibility": "after_due_date",
    }
    pytest_args = ["--rlsys-submission", "mine.py"]
    cli_args = ["grade", "mine.py"]
    for name, value in values.items():
        pytest_args += [settings.by_name(name).pytest_flag, value]
        cli_args += [settings.by_name(name).cli_flag, value]
    config = pytester.parseconfig(*pytest_args)
    from_pytest = settings.request_from_pytest(config)
    from_cli = settings.request_from_args(build_parser().parse_args(cli_args), "grade")
    assert from_pytest == from_cli
    assert from_cli.rubric.points["todo1"]["visible"] == 4
    assert from_cli.limits.child_user is None and from_cli.render.lang == "zh"
    assert set(from_cli.outputs) == {"report", "junit"}


def test_a_command_imports_only_its_own_modules() -> None:
    # The parser names each command's function; its module loads when that command runs:
    # `rlsys grade` and `rlsys template` never load the batch's similarity report.
    code = (
        "import sys; from pytest_rlsys.cli import main; main(['template']); "
        "print(sorted(m for m in sys.modules if m.startswith(('pytest_rlsys.cli.batch', "
        "'pytest_rlsys.similarity'))), file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stderr.strip() == "[]"
