"""pytest entry point (``pytest11``): options, collection of the packaged battery, and the
hooks that report.  Inert unless ``--rlsys-submission`` or ``--rlsys-result`` is given.
The logic lives in pure modules: engine (running), reports (outputs), settings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_rlsys.plugin.norewrite import pytest_rlsys_stop_rewriting  # noqa: F401  (a hook)
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
        return super().repr_failure(excinfo)  # a harness bug: show it in full

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"rlsys {self.name}"
