"""pytest entry point (``pytest11``): options, collection of the packaged battery, and the
hooks that report.  Inert unless ``--rlsys-submission`` or ``--rlsys-result`` is given.
The logic lives in pure modules: settings (the request), grading (running), outputs."""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_rlsys import settings
from pytest_rlsys.plugin.norewrite import stop_rewriting
from pytest_rlsys.settings import SettingError

if TYPE_CHECKING:
    from pytest_rlsys.plugin.run import GradingRun

ANCHOR_DIR = Path(__file__).resolve().parent / "anchor"
ANCHOR = ANCHOR_DIR / "battery.rlsys"
session_key: pytest.StashKey[GradingRun] = pytest.StashKey()


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    # First: the help texts below import the records that hold the defaults, and pytest
    # must not rewrite those (plugin/norewrite.py).
    stop_rewriting(pluginmanager)
    group = parser.getgroup("rlsys", "rlsys grading harness")
    for option in settings.for_pytest():  # the one table: pytest_rlsys/settings.py
        group.addoption(
            option.pytest_flag,
            dest=f"rlsys_{option.name}",
            metavar=option.metavar,
            default=None,
            help=option.help_text,
        )
        if option.ini_key:
            parser.addini(option.ini_key, option.help_text, type="string", default="")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, args: list[str], parser: pytest.Parser
) -> Generator[None]:
    # Outside pytest's capture wrapper, so it runs before capture starts.  A grading run
    # that collects only the battery prints nothing in this process (the submission's
    # output is caught by the grader), so pytest's capture around each of its items would
    # only cost time (benchmarks/bench_grading.py).  Runs that also collect tests named on
    # the command line keep pytest's capture.
    ns = early_config.known_args_namespace
    submission = getattr(ns, "rlsys_submission", None)
    if submission and not getattr(ns, "file_or_dir", None):
        ns.capture = "no"
    if not submission or getattr(ns, "help", False) or getattr(ns, "version", False):
        return (yield)  # pytest's --help and --version work past a broken conftest.py
    from pytest_rlsys import ctrl_c
    from pytest_rlsys.grading import collect_rarely, fence

    # Ctrl-C's rule for the run (pytest_rlsys/ctrl_c.py), held from here to the end of the
    # grading's set-up (pytest_configure): a press in that stretch (pytest's configuration,
    # the child's start, the imports) ended pytest with exit 1 and a traceback, exit -2
    # and no output, "plugin is not registered" or an INTERNALERROR.
    ctrl_c.install()
    ctrl_c.hold()
    # A run that stops before pytest_configure (a conftest.py that does not import, an
    # unknown option) gives Python's handler back, held presses and all: a host program
    # calling pytest.main() in its own process had its next Ctrl-C held, and ignored.
    early_config.add_cleanup(ctrl_c.uninstall)
    collect_rarely()
    fence.prepare()  # while pytest reads its configuration: the first child needs it
    # The project's settings can stop pytest before pytest_cmdline_main, where the clean
    # re-run would set them aside: a conftest.py that does not import, or addopts naming
    # an option no installed plugin has (pytest refuses it right after this hook).  pytest
    # fails as it would; one line more names the way out.
    try:
        outcome = yield
    except Exception as exc:
        where = getattr(exc, "path", None) or "a conftest.py"  # ConftestImportFailure's
        _say_way_out(early_config, submission, "no_import", where=str(where))
        raise
    typed = set(early_config.invocation_params.args)
    try:
        unknown = parser.parse_known_and_unknown_args(args)[1]
    except pytest.UsageError:  # pytest's own parse says what is wrong, and stops
        unknown = []
    if foreign := [a for a in unknown if a.startswith("-") and a not in typed]:
        _say_way_out(early_config, submission, "no_plugin", args=" ".join(foreign))
    return outcome


def _lang(config: pytest.Config) -> str:
    """The feedback language this run asks for: ``--rlsys-lang``, the ini key, the locale."""
    from pytest_rlsys.messages import default_lang

    option = settings.by_name("lang")
    chosen = getattr(config.option, f"rlsys_{option.name}", None)
    if not chosen and option.ini_key:
        with contextlib.suppress(ValueError, KeyError):
            chosen = config.getini(option.ini_key)
    return chosen if chosen in ("en", "zh") else default_lang()


def _say(config: pytest.Config, key: str, **fields: str) -> None:
    """One of the plugin's own lines (``messages.PLUGIN_WORDS``), in the run's language."""
    from pytest_rlsys.escaping import say  # after the rewrite hook is stopped
    from pytest_rlsys.messages import PLUGIN_WORDS

    say(PLUGIN_WORDS[key].fill(_lang(config), fields), err=True)


def _say_way_out(config: pytest.Config, submission: str, cause: str, **fields: str) -> None:
    import shlex

    from pytest_rlsys.messages import PLUGIN_WORDS

    said = PLUGIN_WORDS[cause].fill(_lang(config), fields)
    _say(config, "way_out", cause=said, file=shlex.quote(submission))


def clean_args() -> list[str]:
    """The arguments that make a pytest run take nothing from any folder: the package's
    own ini file and rootdir, no conftest.py, no cache (``_regrade_clean`` runs with them)."""
    return [
        "-c",
        str(ANCHOR_DIR / "pytest.ini"),
        "--rootdir",
        str(ANCHOR_DIR),
        "-p",
        "no:cacheprovider",
        "--noconftest",
    ]


_RERUN = "RLSYS_CLEAN_RERUN"  # set in the clean re-run: never a second one (not a defence)


def _is_clean(config: pytest.Config) -> bool:
    """Whether this run took its configuration from the package alone (``clean_args``)."""
    return config.inipath == ANCHOR_DIR / "pytest.ini" and bool(config.getoption("noconftest"))


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    # A learner's own project often has a pytest table or a conftest.py.  pytest has
    # imported those by now, so they could take part in this run's grading: the grade
    # is made by a clean pytest of its own instead, so that the learner command works
    # where learners work with a score nothing in the folder can influence.  The same
    # holds for a result file graded alone.
    graded = config.getoption("rlsys_submission") or config.getoption("rlsys_result")
    if not graded or getattr(config.option, "help", False):
        return None
    if getattr(config.option, "version", False):
        return None
    if hasattr(config, "workerinput") or _is_clean(config) or os.environ.get(_RERUN):
        return None
    foreign = foreign_files(config, config.invocation_params.dir / graded)
    return _regrade_clean(config, foreign) if foreign else None


def _own_ini_values(config: pytest.Config) -> tuple[list[str], list[str]]:
    """Our ini keys the project's configuration sets: ``-o KEY=VALUE`` for those the
    clean re-run keeps, and the names of those it drops.  A course's seed, language,
    rubric or fence requirement is as much the learner's to choose as the command line
    they type, so it is kept (a typed option still wins, as in any run); the child's
    limits are not: a folder's file must not loosen the fence (docs/threat-model.md).
    Nor is a rubric file outside the graded file's folder: a root grader read any file it
    named (``/etc/shadow``, the course's seed), and its error quoted what it read."""
    kept: list[str] = []
    dropped: list[str] = []
    graded = config.getoption("rlsys_submission") or config.getoption("rlsys_result")
    folder = _resolved(config, graded).parent
    for option in settings.for_pytest():
        if option.ini_key and (value := config.getini(option.ini_key)):
            outside = option.name == "rubric" and folder not in _resolved(config, value).parents
            if outside or (option.record and option.record[0] == "limits"):
                dropped.append(option.ini_key)
            else:
                kept += ["-o", f"{option.ini_key}={value}"]
    return kept, dropped


def _resolved(config: pytest.Config, value: str) -> Path:
    """``value`` as a path from where pytest was started, links resolved."""
    return Path(os.path.realpath(config.invocation_params.dir / value))


def _regrade_clean(config: pytest.Config, foreign: list[str]) -> int:
    """Run the same command again in a fresh interpreter with ``clean_args`` (they come
    last, so they win over the same options typed earlier) and return its exit code;
    its output is the run's output.  ``-P``: the current folder is not on the path."""
    import contextlib  # only for this re-run
    import signal
    import subprocess
    import sys

    from pytest_rlsys.messages import PLUGIN_WORDS

    lang = _lang(config)
    named = [a for a in config.getoption("file_or_dir") or [] if a]
    if named:
        raise pytest.UsageError(
            PLUGIN_WORDS["named_tests"].fill(
                lang, {"files": ", ".join(foreign), "named": ", ".join(named)}
            )
        )
    # What the learner typed (less the options of the plugins the clean run blocks: a
    # learner's --lf or --sw habit), then the files to grade (they may have come from the
    # folder's addopts, which the clean run does not read), the project's values of our
    # own ini keys, and the clean arguments, which win over the same options typed earlier.
    args, dropped_args = _without_blocked_options(
        config, [str(a) for a in config.invocation_params.args]
    )
    for name in ("submission", "result"):
        if value := config.getoption(f"rlsys_{name}"):
            args += [settings.by_name(name).pytest_flag, str(config.invocation_params.dir / value)]
    kept, dropped = _own_ini_values(config)
    # The rootdir is only where node paths are shown from: the folder the learner is in,
    # so the progress line reads "battery.rlsys", not a path into site-packages.
    here = ["--rootdir", str(config.invocation_params.dir)]
    command = [sys.executable, "-P", "-m", "pytest", *args, *kept, *clean_args(), *here]
    env = {**os.environ, _RERUN: "1"}
    from pytest_rlsys.escaping import say  # after the rewrite hook is stopped

    keys = ", ".join(k.partition("=")[0] for k in kept[1::2])  # a seed's value is private
    say(
        PLUGIN_WORDS["set_aside"].fill(lang, {"files": ", ".join(foreign)})
        + (PLUGIN_WORDS["kept"].fill(lang, {"keys": keys}) if kept else "")
        + (PLUGIN_WORDS["not_kept"].fill(lang, {"keys": ", ".join(dropped)}) if dropped else ""),
        err=True,
    )
    if dropped_args:
        _say(config, "cache_set_aside", args=" ".join(dropped_args))
    # A Ctrl-C reaches both runs (one process group, the terminal's foreground one, so the
    # inner run can still read the terminal, e.g. --pdb); this one then waits for the
    # inner run to end its own way (its children killed, its scratch folder removed)
    # instead of killing it, as subprocess.run did 0.25 s later.  The first press is
    # passed on at once (it may have been sent to this process alone, and the inner run
    # takes one press however many reach it: pytest_rlsys/ctrl_c.py); later ones wait.
    from pytest_rlsys import ctrl_c

    ctrl_c.install()
    try:
        ctrl_c.release()  # the hold from pytest_load_initial_conftests: no set-up here
    except KeyboardInterrupt:
        ctrl_c.uninstall()
        return pytest.ExitCode.INTERRUPTED
    inner = subprocess.Popen(command, cwd=config.invocation_params.dir, env=env)
    interrupted = False
    try:
        while True:
            try:
                code = inner.wait()
                break
            except KeyboardInterrupt:
                ctrl_c.ending()
                if not interrupted:
                    with contextlib.suppress(ProcessLookupError):
                        inner.send_signal(signal.SIGINT)
                interrupted = True
    finally:
        ctrl_c.uninstall()
    if interrupted:
        return pytest.ExitCode.INTERRUPTED
    return code if code >= 0 else 128 - code  # killed by a signal: as a shell reports it


# The plugins ``clean_args`` blocks (``-p no:cacheprovider`` blocks stepwise with it).
BLOCKED_PLUGINS = ("cacheprovider", "stepwise")


class _OptionRecorder:
    """A stand-in for pytest's parser that records the options a plugin adds: which
    option strings it knows, and whether each takes a value."""

    def __init__(self) -> None:
        self.takes_value: dict[str, bool] = {}

    def getgroup(self, *args: Any, **kwargs: Any) -> _OptionRecorder:
        return self

    def addoption(self, *names: str, **attrs: Any) -> None:
        store = attrs.get("action", "store") in ("store", "append")
        for name in names:
            self.takes_value[name] = store and attrs.get("nargs") not in ("?", 0)

    _addoption = addoption

    def addini(self, *args: Any, **kwargs: Any) -> None:
        return None


def _without_blocked_options(config: pytest.Config, args: list[str]) -> tuple[list[str], list[str]]:
    """``args`` less the options of the plugins the clean re-run blocks (asked of those
    plugins themselves), and the options dropped: the clean pytest would refuse them as
    "unrecognized arguments"."""
    recorder = _OptionRecorder()
    for name in BLOCKED_PLUGINS:
        plugin = config.pluginmanager.get_plugin(name)
        add = getattr(plugin, "pytest_addoption", None)
        with contextlib.suppress(Exception):  # a plugin's own hook: never our failure
            if add is not None:
                add(recorder)
    kept: list[str] = []
    dropped: list[str] = []
    skip_next = False
    for arg in args:
        if skip_next:
            skip_next = False
            continue
        option = arg.partition("=")[0]
        if option in recorder.takes_value:
            dropped.append(option)
            skip_next = recorder.takes_value[option] and "=" not in arg
            continue
        kept.append(arg)
    return kept, list(dict.fromkeys(dropped))


def _without_xdist(config: pytest.Config) -> None:
    """pytest-xdist's ``-n``/``--dist``/``--tx`` set aside, before its own
    ``pytest_configure`` (trylast) starts any worker: one grading is one process and its
    child, and a worker cannot grade (it would crash, and the score read 0)."""
    dist = getattr(config.option, "dist", "no")
    if dist == "no" and not getattr(config.option, "tx", None):
        return
    config.option.dist = "no"
    config.option.tx = []
    config.option.numprocesses = None
    typed = [a for a in config.invocation_params.args if a.startswith(("-n", "--dist", "--tx"))]
    _say(config, "xdist_set_aside", args=" ".join(typed) or "-n")


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("rlsys_submission") and not config.getoption("rlsys_result"):
        return
    # Ctrl-C's rule for the run (pytest_rlsys/ctrl_c.py): one press ends it; a press
    # during the set-up below is raised once the set-up is whole (one that landed in an
    # import, the child's start or the registration ended pytest with exit -2, "plugin is
    # not registered" or an INTERNALERROR, and once left the child's scratch folder).
    from pytest_rlsys import ctrl_c  # after the rewrite hook is stopped

    ctrl_c.install()
    try:
        with ctrl_c.held():
            _configure(config)
    except BaseException:
        ctrl_c.uninstall()  # no run to end: pytest's own handling
        raise


def _configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        raise pytest.UsageError("rlsys grading does not run under xdist workers; drop -n")
    _without_xdist(config)
    try:
        request = settings.request_from_pytest(config)
    except SettingError as exc:
        raise pytest.UsageError(str(exc)) from None
    standby = None
    if request.submission is not None and not config.option.collectonly:
        # The submission's interpreter starts first, so that its start-up overlaps the
        # import of the grading modules and the battery (it runs nothing of the
        # submission's until the grader has protected its private files and loads it).
        from pytest_rlsys.grading.isolation import ChildProcess
        from pytest_rlsys.resources import FUNCTIONS

        standby = ChildProcess.on_standby(list(FUNCTIONS), request.limits)
    try:  # from here on, however this ends (a Ctrl-C among the imports too), no standby is left
        from pytest_rlsys.grading.grader import SubmissionPathError
        from pytest_rlsys.plugin.run import GradingRun

        grading = GradingRun.open(request, standby)
    except BaseException as exc:
        if standby is not None:
            standby.close()  # no grader took it (closing twice is harmless)
        from pytest_rlsys.grading.grader import SubmissionPathError

        if isinstance(exc, SubmissionPathError):  # nothing to grade: its files are written
            raise pytest.UsageError(
                f"{settings.by_name('submission').pytest_flag}: {exc}"
            ) from None
        if isinstance(exc, ValueError):  # bad paths and rubric files: a usage error
            raise pytest.UsageError(str(exc)) from None
        raise
    config.stash[session_key] = grading
    if config.args_source is not pytest.Config.ArgsSource.ARGS:
        config.args[:] = []
    config.args.append(str(ANCHOR_DIR))
    config.pluginmanager.register(grading, "rlsys-grading")
    # Everything made so far (pytest, the grading modules, the battery) lives until the
    # process ends: the cyclic collector need not walk it again, neither in the full
    # collections pytest runs at the end nor at interpreter exit (measured: about 30 ms
    # of a 0.45 s grading run, benchmarks/bench_grading.py).
    gc.freeze()


def _related(folder: Path, other: Path) -> bool:
    """Whether ``other`` is ``folder``, inside it, or one of the folders above it (both
    absolute; compared as text: ``Path.parents`` cost 1 ms a plugin, 30 plugins a run)."""
    a, b = str(folder), str(other)
    return a == b or b.startswith(a.rstrip("/") + "/") or a.startswith(b.rstrip("/") + "/")


def _configures_pytest(inipath: Path) -> bool:
    """Whether the file pytest took as its config sets anything: a pyproject.toml without
    a pytest table only marks the rootdir, and an empty ``[pytest]`` section sets nothing."""
    import configparser  # only when a config file is in play
    import tomllib

    try:
        if inipath.suffix == ".toml":
            with inipath.open("rb") as fh:
                tool = tomllib.load(fh).get("tool", {})
            table = tool.get("pytest", {}) if isinstance(tool, dict) else {}
            return bool(table)
        parser = configparser.ConfigParser(interpolation=None)
        parser.read(inipath, encoding="utf-8")
        return any(parser.has_section(s) and parser.items(s) for s in ("pytest", "tool:pytest"))
    except (OSError, ValueError, configparser.Error):
        return True


def foreign_files(config: pytest.Config, graded: Path) -> list[str]:
    """Files pytest took part of its setup from (ini file, conftest modules, plugins
    imported from files, ``pythonpath`` entries) that lie in the graded file's folder,
    below it or above it: whoever controls that folder controls them."""
    folder = Path(os.path.abspath(graded)).parent
    candidates: list[tuple[Path, str]] = []  # (a file in the folder that counts, its kind)
    if config.inipath is not None and _configures_pytest(config.inipath):
        candidates.append((config.inipath, ""))
    for plugin in config.pluginmanager.get_plugins():
        file = getattr(plugin, "__file__", None)
        if isinstance(file, str):
            candidates.append((Path(file), ""))
    with contextlib.suppress(ValueError, KeyError):
        candidates += [(Path(p) / "_", "pythonpath ") for p in config.getini("pythonpath")]
    found = []
    for candidate, kind in candidates:
        where = Path(os.path.abspath(candidate)).parent
        if _related(folder, where) and "site-packages" not in where.parts:
            named = where if kind else Path(os.path.abspath(candidate))
            shown = os.path.relpath(named, config.invocation_params.dir)  # short when below
            found.append(kind + (str(named) if shown.startswith("..") else shown))
    return list(dict.fromkeys(found))


def pytest_unconfigure(config: pytest.Config) -> None:
    grading = config.stash.get(session_key, None)
    if grading is not None:
        grading.close()
        config.pluginmanager.unregister(grading)
        del config.stash[session_key]
        from pytest_rlsys import ctrl_c

        ctrl_c.uninstall()


@pytest.hookimpl(tryfirst=True)
def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    # A run that collects the battery alone: of the folders on the way to the anchor
    # (site-packages among them), pytest would look at every file and ask each plugin
    # about it; what is not on that way is passed over (about 10 ms of a grading run).
    if session_key not in config.stash or config.args != [str(ANCHOR_DIR)]:
        return None
    path, anchor = str(collection_path) + os.sep, str(ANCHOR_DIR) + os.sep
    return None if path.startswith(anchor) or anchor.startswith(path) else True


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path == ANCHOR and session_key in parent.config.stash:
        from pytest_rlsys.plugin.run import BATTERY_NODEID

        # A fixed node id: the anchor's path (often inside a .venv under the rootdir) would
        # put site-packages into every node id the learner sees.
        return BatteryFile.from_parent(parent, path=file_path, nodeid=BATTERY_NODEID)
    return None


class CaseFailed(Exception):
    """Raised by a case item that did not pass; carries the learner-facing text."""


class BatteryFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        grading = self.config.stash[session_key]
        # No per-item pytest-timeout marker: the grader enforces every limit.
        for name, case_ids, max_points in grading.items():
            item = CaseItem.from_parent(self, name=name)
            item.case_ids = case_ids
            item.user_properties.append(("rlsys_max_points", max_points))
            yield item


class CaseItem(pytest.Item):
    """One visible case, one check of a result file, or a TODO's hidden cases."""

    case_ids: tuple[str, ...] = ()

    def runtest(self) -> None:
        text = self.config.stash[session_key].run(self.case_ids)
        if text is not None:
            raise CaseFailed(text)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, CaseFailed):
            return str(excinfo.value)
        grading = self.config.stash.get(session_key, None)
        if grading is None or grading.is_hidden(self.case_ids):
            # A harness fault on a hidden case: its traceback (and, with -l, its locals)
            # would show the hidden inputs, so only the exception's type is shown.
            return (
                f"internal grader error ({type(excinfo.value).__name__}) on a hidden "
                "case; it scores 0"
            )
        return super().repr_failure(excinfo)  # a harness bug: show it in full

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"rlsys {self.name}"
