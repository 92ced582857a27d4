"""Ctrl-C's one rule (pytest_rlsys/ctrl_c.py), each press sent to this process as a
terminal's Ctrl-C would send it: held in set-up, raised once, ignored while the run ends."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_rlsys import ctrl_c


def _press() -> None:
    os.kill(os.getpid(), signal.SIGINT)  # Python runs the handler before the next line


def _pressing_at_the_first(
    write: Callable[[Path, str], None], written: list[str]
) -> Callable[[Path, str], None]:
    """``write``, with a press as the first file is written; each file's name to ``written``."""

    def pressed_while_writing(path: Path, text: str) -> None:
        if not written:
            _press()
        write(path, text)
        written.append(path.name)

    return pressed_while_writing


@pytest.fixture
def installed() -> Iterator[None]:
    # Python's own handler first, as a terminal's job has it (a suite started in the
    # background inherits SIGINT ignored, and install() then leaves it so).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        assert ctrl_c.install()
        yield
    finally:
        ctrl_c.uninstall()
        signal.signal(signal.SIGINT, previous)


def test_one_press_in_set_up_is_raised_once_the_set_up_is_whole(installed: None) -> None:
    steps: list[str] = []
    with pytest.raises(KeyboardInterrupt), ctrl_c.held():
        _press()
        steps.append("after the press")
    assert steps == ["after the press"]


def test_a_second_press_in_set_up_is_raised_at_once(installed: None) -> None:
    steps: list[str] = []
    with pytest.raises(KeyboardInterrupt), ctrl_c.held():
        _press()
        steps.append("after the first")
        _press()
        steps.append("after the second")
    assert steps == ["after the first"]


def test_presses_after_the_first_are_ignored_while_the_run_ends(installed: None) -> None:
    with pytest.raises(KeyboardInterrupt):
        _press()
    ctrl_c.ending()
    _press()  # no KeyboardInterrupt: the ending goes on
    _press()


def test_a_press_python_lost_is_raised_again_by_a_later_one(
    installed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Raised inside a finalizer, a KeyboardInterrupt is printed and dropped: nothing took
    # it, so a later press (past LOST_AFTER_S) is raised again.
    with pytest.raises(KeyboardInterrupt):
        _press()
    _press()  # within LOST_AFTER_S: still the first one's ending
    monkeypatch.setattr(ctrl_c, "LOST_AFTER_S", 0.0)
    with pytest.raises(KeyboardInterrupt):
        _press()


def test_a_press_inside_a_class_creation_is_known_as_one(installed: None) -> None:
    class Presses:
        def __set_name__(self, owner: type, name: str) -> None:
            raise KeyboardInterrupt

    try:
        type("Made", (), {"field": Presses()})
    except BaseException as exc:  # RuntimeError on Python 3.11, KeyboardInterrupt after
        assert ctrl_c.is_interrupt(exc)
    assert not ctrl_c.is_interrupt(RuntimeError("plain"))
    with pytest.raises(KeyboardInterrupt), ctrl_c.held():
        type("Made", (), {"field": Presses()})


def test_a_host_program_keeps_its_own_handler() -> None:
    def own(number: int, frame: object) -> None:
        return None

    previous = signal.signal(signal.SIGINT, own)
    try:
        assert not ctrl_c.install()
        assert signal.getsignal(signal.SIGINT) is own
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_batch_interrupted_while_writing_writes_every_file(
    installed: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The CSV was this run's and the JSON and page an earlier run's after a press among
    # the writes: now they are written together, then the press ends the run.
    from pytest_rlsys.cli import batch, main
    from pytest_rlsys.cli.base import ExitCode
    from pytest_rlsys.resources import solution_path

    subs = tmp_path / "subs"
    subs.mkdir(mode=0o700)
    (subs / "ann.py").write_text(solution_path().read_text(encoding="utf-8"))
    written: list[str] = []
    monkeypatch.setattr(batch, "write_atomic", _pressing_at_the_first(batch.write_atomic, written))
    outputs = {name: tmp_path / f"grades.{name}" for name in ("csv", "json", "html")}
    args = [a for name, path in outputs.items() for a in (f"--{name}", str(path))]
    code = main(["batch", str(subs), "--jobs", "1", "--no-progress", "--no-behaviour", *args])
    assert code == ExitCode.INTERRUPTED
    assert sorted(written) == ["grades.csv", "grades.html", "grades.json"]


def test_a_press_once_graded_lets_every_file_be_written(
    installed: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Graded, the run writes its files and its summary: a press among the writes once
    # left one file this run's and the next an earlier run's (or none).
    from pytest_rlsys.cli import main
    from pytest_rlsys.cli.base import ExitCode
    from pytest_rlsys.outputs import files
    from pytest_rlsys.resources import solution_path

    written: list[str] = []
    monkeypatch.setattr(files, "write_atomic", _pressing_at_the_first(files.write_atomic, written))
    report, gradescope = tmp_path / "score.json", tmp_path / "results.json"
    args = ["--report", str(report), "--gradescope", str(gradescope)]
    assert main(["grade", str(solution_path()), *args]) == ExitCode.OK
    assert sorted(written) == ["results.json", "score.json"]


def test_a_press_inside_an_import_is_raised_once_the_import_is_over(
    installed: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Raised inside the import system (importlib's module-lock callback), a press was
    # dropped with the import lock held: the grader then ran to a normal end or hung.
    import sys
    import time

    (tmp_path / "pressed_while_importing.py").write_text(
        "import os, signal\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "after_the_press = sum(range(100_000))\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(KeyboardInterrupt):
        import pressed_while_importing  # noqa: F401

        time.sleep(5)  # the press is sent again as soon as the import is over
    assert sys.modules["pressed_while_importing"].after_the_press == 4999950000
    del sys.modules["pressed_while_importing"]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("conftest.py", "import rlsys_no_such_module\n"),
        ("pytest.ini", "[pytest]\naddopts = --rlsys-no-such-option\n"),
    ],
)
def test_a_run_stopped_before_its_set_up_gives_the_handler_back(
    pytester: pytest.Pytester, name: str, text: str
) -> None:
    # pytest.main() in a host program's own process: a run that stops before
    # pytest_configure leaves Python's handler in place, so the next press acts.
    (pytester.path / name).write_text(text, encoding="utf-8")
    (pytester.path / "mine.py").write_text("x = 1\n", encoding="utf-8")
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        stopped = pytester.runpytest_inprocess("--rlsys-submission", "mine.py")
        assert stopped.ret == pytest.ExitCode.USAGE_ERROR
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        with pytest.raises(KeyboardInterrupt):
            _press()
    finally:
        signal.signal(signal.SIGINT, previous)
