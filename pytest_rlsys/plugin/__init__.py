"""pytest entry point (``pytest11``): options, collection of the packaged battery, and the
hooks that report.  Inert unless ``--rlsys-submission`` or ``--rlsys-result`` is given.
The logic lives in pure modules: engine (running), reports (outputs), settings."""

from __future__ import annotations

import contextlib
import os
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_rlsys.settings import HELP, SettingError, limits_from, resolve

if TYPE_CHECKING:
    from pytest_rlsys.plugin.run import GradingSession

ANCHOR_DIR = Path(__file__).resolve().parent / "anchor"
ANCHOR = ANCHOR_DIR / "battery.rlsys"
session_key: pytest.StashKey[GradingSession] = pytest.StashKey()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rlsys", "rlsys grading harness")
    for name in ("submission", "result", "report", "gradescope", "prairielearn", "junit",
                 "classroom"):
        group.addoption(f"--rlsys-{name}", dest=f"rlsys_{name}", metavar="PATH", default=None,
                        help=HELP[name])
    for name, metavar in (("seed", "N"), ("lang", "zh|en"), ("rubric", "PATH"),
                          ("timeout", "SECONDS"), ("budget", "SECONDS"), ("memory_mb", "MIB"),
                          ("cpu_seconds", "SECONDS"), ("child_user", "USER")):
        group.addoption(f"--rlsys-{name.replace('_', '-')}", dest=f"rlsys_{name}",
                        metavar=metavar, default=None, help=HELP[name])
        parser.addini(f"rlsys_{name}", HELP[name], type="string", default="")


def pytest_configure(config: pytest.Config) -> None:
    submission = config.getoption("rlsys_submission")
    result = config.getoption("rlsys_result")
    if not submission and not result:
        return
    if hasattr(config, "workerinput"):
        raise pytest.UsageError("rlsys grading does not run under xdist workers; drop -n")
    if submission:
        foreign = foreign_files(config, config.invocation_params.dir / submission)
        if foreign:
            raise pytest.UsageError(
                f"--rlsys-submission: pytest read {foreign[0]} from the submission's folder "
                "or a folder above it, so the learner could have written it (config, "
                "conftest.py or a module on the path); nothing there may take part in "
                "grading. Grade with `rlsys grade FILE`, which ignores every folder's pytest "
                "configuration, or keep the submission outside the folder tree of any "
                "pytest configuration.")
    from pytest_rlsys.plugin.run import GradingSession  # kept out of plain pytest runs

    values: dict[str, Any] = {}
    try:
        for name in ("seed", "lang", "timeout", "budget", "memory_mb", "cpu_seconds",
                     "child_user"):
            values[name] = resolve(name, config.getoption(f"rlsys_{name}"),
                                   config.getini(f"rlsys_{name}"))
    except SettingError as exc:
        raise pytest.UsageError(str(exc)) from None
    rubric = config.getoption("rlsys_rubric") or config.getini("rlsys_rubric") or None
    base = config.invocation_params.dir
    outputs = {name: base / value for name in ("report", "gradescope", "prairielearn",
                                               "junit", "classroom")
               if (value := config.getoption(f"rlsys_{name}"))}
    try:
        grading = GradingSession.create(
            submission=base / submission if submission else None,
            result=base / result if result else None,
            rubric=base / rubric if rubric else None,
            seed=values["seed"], lang=values["lang"], limits=limits_from(values),
            outputs=outputs,
        )
    except ValueError as exc:  # bad paths and rubric files: a usage error, no traceback
        raise pytest.UsageError(str(exc)) from None
    config.stash[session_key] = grading
    if config.args_source is not pytest.Config.ArgsSource.ARGS:
        config.args[:] = []
    config.args.append(str(ANCHOR_DIR))
    config.pluginmanager.register(grading, "rlsys-grading")


def _related(folder: Path, other: Path) -> bool:
    """Whether ``other`` is ``folder``, inside it, or one of the folders above it."""
    return other == folder or folder in other.parents or other in folder.parents


def _configures_pytest(inipath: Path) -> bool:
    """A pyproject.toml without a pytest table only marks the rootdir; anything else
    pytest took as its config file is config."""
    if inipath.name != "pyproject.toml":
        return True
    try:
        with inipath.open("rb") as fh:
            tool = tomllib.load(fh).get("tool", {})
    except (OSError, ValueError):
        return True
    return isinstance(tool, dict) and "pytest" in tool


def foreign_files(config: pytest.Config, submission: Path) -> list[str]:
    """Files pytest took part of its setup from (ini file, conftest modules, plugins
    imported from files, ``pythonpath`` entries) that lie in the submission's folder, below
    it or above it: a learner who controls that folder controls them."""
    folder = Path(os.path.abspath(submission)).parent
    candidates: list[Path] = []
    if config.inipath is not None and _configures_pytest(config.inipath):
        candidates.append(config.inipath)
    for plugin in config.pluginmanager.get_plugins():
        file = getattr(plugin, "__file__", None)
        if isinstance(file, str):
            candidates.append(Path(file))
    with contextlib.suppress(ValueError, KeyError):
        candidates += [Path(p) / "_" for p in config.getini("pythonpath")]
    found = []
    for candidate in candidates:
        where = Path(os.path.abspath(candidate)).parent
        if _related(folder, where) and "site-packages" not in where.parts:
            found.append(str(candidate))
    return found


def pytest_unconfigure(config: pytest.Config) -> None:
    grading = config.stash.get(session_key, None)
    if grading is not None:
        grading.close()
        config.pluginmanager.unregister(grading)
        del config.stash[session_key]


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path == ANCHOR and session_key in parent.config.stash:
        return BatteryFile.from_parent(parent, path=file_path)
    return None


class CaseFailed(Exception):
    """Raised by a case item that did not pass; carries the learner-facing text."""


class BatteryFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        grading = self.config.stash[session_key]
        # pytest-timeout as a backstop against a harness hang; the per-call limits that
        # grade a submission are enforced by the engine, far below this.
        backstop = (pytest.mark.timeout(grading.backstop_seconds(), method="thread")
                    if self.config.pluginmanager.hasplugin("timeout") else None)
        for case_id, max_points in grading.case_points():
            item = CaseItem.from_parent(self, name=case_id)
            item.user_properties.append(("rlsys_max_points", max_points))
            if backstop is not None:
                item.add_marker(backstop)
            yield item


class CaseItem(pytest.Item):
    def runtest(self) -> None:
        text = self.config.stash[session_key].run(self.name)
        if text is not None:
            raise CaseFailed(text)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> Any:
        if isinstance(excinfo.value, CaseFailed):
            return str(excinfo.value)
        grading = self.config.stash.get(session_key, None)
        if grading is None or grading.is_hidden(self.name):
            # A harness fault on a hidden case: its traceback (and, with -l, its locals)
            # would show the hidden inputs, so only the exception's type is shown.
            return (f"internal grader error ({type(excinfo.value).__name__}) on a hidden "
                    "case; it scores 0")
        return super().repr_failure(excinfo)  # a harness bug: show it in full

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"rlsys {self.name}"
