"""Every option of the pytest plugin and of the ``rlsys`` commands, declared once.

One :class:`Option` per line of :data:`OPTIONS` carries the name, metavar, parser, help,
whether pytest takes it (``--rlsys-NAME``) and reads it from the ini file (``rlsys_NAME``),
and which ``rlsys`` commands take it (``--NAME``).  The plugin's ``pytest_addoption``, each
command's argparse parser, the error messages and the README check are all derived from it
(pytest-timeout's one description per setting).  Adding an option is one entry here.

Values resolve from the command line, else the ini file, else the default; a bad value is
reported with the flag the user actually typed.  No pytest import here.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_rlsys.grading.outcomes import Limits

__all__ = [
    "LIMIT_SETTINGS",
    "OPTIONS",
    "Option",
    "SettingError",
    "add_arguments",
    "by_name",
    "for_command",
    "for_pytest",
    "limits_from",
    "resolve",
]


class SettingError(ValueError):
    """A bad option value; the message names the flag or ini key it came from."""


# -- parsers: raise ValueError with a message that reads after "--flag=VALUE: " -------------


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError("must be a number") from None


def _whole(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ValueError("must be a whole number") from None


def _positive_float(text: str) -> float:
    value = _number(text)
    if not math.isfinite(value) or value <= 0:
        raise ValueError("must be a positive number")
    return value


def _positive_int(text: str) -> int:
    try:
        value = _whole(text)
    except ValueError:
        raise ValueError("must be a positive whole number") from None
    if value <= 0:
        raise ValueError("must be a positive whole number")
    return value


def _seed(text: str) -> int:
    try:
        value = _whole(text)
    except ValueError:
        value = -1
    if not 0 <= value < 2**63:
        raise ValueError("must be a whole number between 0 and 2**63 - 1")
    return value


def _lang(text: str) -> str:
    if text not in ("zh", "en"):
        raise ValueError("must be 'zh' or 'en'")
    return text


def _group(text: str) -> str:
    if text not in ("release", "retain"):
        raise ValueError("must be 'release' or 'retain'")
    return text


def _child_user(text: str) -> str:
    # Imported here: the plugin imports this module in every pytest run, and isolation
    # needs POSIX-only modules that a plain test run must not depend on.
    from pytest_rlsys.grading.identity import child_identity

    child_identity(text)  # an unknown user is an error, never a silent fall back to root
    return text


def parse_junit_family(text: str) -> Any:
    # Imported here: the plugin imports this module in every pytest run, before pytest's
    # assertion rewriting of our packages is switched off (plugin/norewrite.py).
    from pytest_rlsys.outputs.registry import parse_junit_family as parse

    return parse(text)


def parse_hidden_visibility(text: str) -> Any:
    from pytest_rlsys.outputs.registry import parse_hidden_visibility as parse

    return parse(text)


# -- the table ---------------------------------------------------------------------------

GRADE, BATCH = ("grade",), ("batch",)
BOTH = ("grade", "batch")


@dataclass(frozen=True)
class Option:
    """One option.  ``metavar=None`` makes a switch (no value)."""

    name: str
    metavar: str | None
    help: str
    parse: Callable[[str], Any] | None = None  # None: the text as given (a path)
    pytest: bool = False  # pytest takes --rlsys-NAME
    ini: bool = False  # ... and reads ini key rlsys_NAME
    commands: tuple[str, ...] = ()  # rlsys commands that take --NAME
    output: bool = False  # a file the run writes (checked before any grading)
    short: str | None = None  # a one-letter alias for the commands
    default: Any = None  # commands only; pytest defaults live in the code that uses it

    @property
    def pytest_flag(self) -> str:
        return "--rlsys-" + self.name.replace("_", "-")

    @property
    def cli_flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def ini_key(self) -> str | None:
        return f"rlsys_{self.name}" if self.ini else None


_PLATFORM = "Also write {} to this path."

OPTIONS: tuple[Option, ...] = (
    # grading inputs
    Option(
        "submission",
        "PATH",
        "Grade this learner file (.py) with the packaged battery.",
        pytest=True,
    ),
    Option(
        "result",
        "PATH",
        "Grade this verl closure result file (pt-verl-closure JSON).",
        pytest=True,
        commands=GRADE,
    ),
    # outputs of one grading run
    Option(
        "report",
        "PATH",
        "Write the score report JSON (schema rlsys-score/1) to this path.",
        pytest=True,
        commands=GRADE,
        output=True,
    ),
    Option(
        "gradescope",
        "PATH",
        _PLATFORM.format("a Gradescope results.json"),
        pytest=True,
        commands=GRADE,
        output=True,
    ),
    Option(
        "prairielearn",
        "PATH",
        _PLATFORM.format("a PrairieLearn results.json"),
        pytest=True,
        commands=GRADE,
        output=True,
    ),
    Option(
        "junit",
        "PATH",
        _PLATFORM.format("JUnit XML with per-case points"),
        pytest=True,
        commands=GRADE,
        output=True,
    ),
    Option(
        "classroom",
        "PATH",
        _PLATFORM.format("a GitHub Classroom runner result JSON"),
        pytest=True,
        commands=GRADE,
        output=True,
    ),
    Option(
        "junit_family",
        "xunit2|xunit1",
        "Layout of the JUnit file: xunit2 (default; "
        "valid against pytest's JUnit schema, points as suite properties) or xunit1 "
        "(legacy: per-case properties), as pytest's junit_family.",
        parse_junit_family,
        pytest=True,
        ini=True,
        commands=GRADE,
    ),
    Option(
        "hidden_visibility",
        "VISIBILITY",
        "Gradescope visibility of the hidden cases: "
        "visible (default), after_due_date, after_published or hidden.",
        parse_hidden_visibility,
        pytest=True,
        ini=True,
        commands=GRADE,
    ),
    # settings of the grading run
    Option(
        "seed",
        "N",
        "Seed for the hidden cases (default: fixed by the battery version, "
        "so the same file always gets the same score; set one per assignment). Always "
        "recorded in the report.",
        _seed,
        pytest=True,
        ini=True,
        commands=BOTH,
    ),
    Option(
        "lang",
        "zh|en",
        "Language of learner feedback: zh or en (default: from the locale).",
        _lang,
        pytest=True,
        ini=True,
        commands=BOTH,
    ),
    Option(
        "rubric",
        "PATH",
        "Rubric file (TOML or JSON) overriding the points per section.",
        pytest=True,
        ini=True,
        commands=BOTH,
    ),
    Option(
        "timeout",
        "SECONDS",
        "Wall-clock seconds allowed for one call into the submission (default 5).",
        _positive_float,
        pytest=True,
        ini=True,
        commands=BOTH,
    ),
    Option(
        "budget",
        "SECONDS",
        "Wall-clock seconds for the whole submission; cases after it are not run (default 45).",
        _positive_float,
        pytest=True,
        ini=True,
        commands=BOTH,
    ),
    Option(
        "memory_mb",
        "MIB",
        "Address-space limit of the submission's process in MiB (default 1024).",
        _positive_int,
        pytest=True,
        ini=True,
        commands=BOTH,
    ),
    Option(
        "cpu_seconds",
        "SECONDS",
        "CPU-time limit of the submission's process in seconds (default 60).",
        _positive_int,
        pytest=True,
        ini=True,
        commands=BOTH,
    ),
    Option(
        "child_user",
        "USER",
        "When grading as root, run the submission as: auto "
        "(default: a fresh unused uid for each child), a user name, or none (keep root).",
        _child_user,
        pytest=True,
        ini=True,
        commands=BOTH,
    ),
    # rlsys batch only
    Option(
        "csv",
        "PATH",
        "Write one row per submission (CSV) to this path.",
        commands=BATCH,
        output=True,
    ),
    Option(
        "json",
        "PATH",
        "Write the rows plus each full report (JSON) to this path.",
        commands=BATCH,
        output=True,
    ),
    Option(
        "html",
        "PATH",
        "Write the class report: one self-contained HTML page (score "
        "histograms, hidden categories most often failed, submissions that did not load "
        "or timed out, the slowest).",
        commands=BATCH,
        output=True,
    ),
    Option(
        "jobs",
        "N",
        "Submissions graded at once (default: the CPU count).",
        _positive_int,
        commands=BATCH,
        short="-j",
    ),
    Option(
        "no_progress",
        None,
        "No progress bar (there is none unless stderr is a terminal).",
        commands=BATCH,
    ),
    # rlsys grade only
    Option("verbose", None, "Detail for every case, as pytest -v.", commands=GRADE, short="-v"),
    # the other commands (a name may recur when the commands differ)
    Option(
        "force",
        None,
        "Overwrite an existing file (template) or write into a folder that is not empty (kit).",
        commands=("template", "kit"),
    ),
    Option("json", None, "Print the report as JSON.", commands=("ledger",)),
    Option(
        "result",
        "FILE",
        "Take stage rates from a closure result file: stages named in "
        "the topology's 'stage_phases' get rate = 1 / measured phase duration.",
        commands=("ledger",),
    ),
    Option(
        "group",
        "release|retain",
        "Which group of the result file to read (default release).",
        _group,
        commands=("ledger",),
        default="release",
    ),
    Option(
        "wheel",
        "PATH",
        "Bundle this pytest-rlsys wheel instead of installing the pinned "
        "version from the package index.",
        commands=("kit",),
    ),
)

# The settings that shape the child's limits, in the order limits_from reads them.
LIMIT_SETTINGS = ("timeout", "budget", "memory_mb", "cpu_seconds", "child_user")


def by_name(name: str) -> Option:
    """The pytest option ``name`` (else the first command option of that name)."""
    for option in sorted(OPTIONS, key=lambda o: not o.pytest):
        if option.name == name:
            return option
    raise KeyError(name)


def for_pytest() -> Iterator[Option]:
    return (o for o in OPTIONS if o.pytest)


def for_command(command: str) -> Iterator[Option]:
    return (o for o in OPTIONS if command in o.commands)


def _argparse_type(option: Option) -> Callable[[str], Any]:
    parse = option.parse
    assert parse is not None

    def convert(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as exc:  # argparse adds "argument --flag: " in front
            raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None

    convert.__name__ = option.name  # argparse names the type in some messages
    return convert


def add_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    """Give ``parser`` every option the table lists for ``rlsys COMMAND``."""
    for option in for_command(command):
        flags = [option.cli_flag] + ([option.short] if option.short else [])
        if option.metavar is None:
            parser.add_argument(*flags, dest=option.name, action="store_true", help=option.help)
            continue
        kwargs: dict[str, Any] = {
            "dest": option.name,
            "metavar": option.metavar,
            "default": option.default,
            "help": option.help,
        }
        if option.parse is not None:
            kwargs["type"] = _argparse_type(option)
        parser.add_argument(*flags, **kwargs)


def resolve(name: str, cli_value: Any, ini_value: Any = None, flag: str | None = None) -> Any:
    """Parse one setting; None when neither source sets it.

    ``flag`` is how the user spelled the option (default: the pytest flag), so that an
    error names the flag of the command that was used.
    """
    option = by_name(name)
    parse = option.parse or str
    for value, where in (
        (cli_value, flag or option.pytest_flag),
        (ini_value, f"ini option {option.ini_key}"),
    ):
        if value is None or value == "":
            continue
        try:
            return parse(str(value))
        except ValueError as exc:
            raise SettingError(f"{where}={value!r}: {exc}") from None
    return None


def limits_from(values: dict[str, Any]) -> Limits:
    from pytest_rlsys.grading.outcomes import Limits

    base = Limits()
    user = values.get("child_user")
    return Limits(
        call_timeout_s=values.get("timeout") or base.call_timeout_s,
        budget_s=values.get("budget") or base.budget_s,
        address_space_mb=values.get("memory_mb") or base.address_space_mb,
        cpu_seconds=values.get("cpu_seconds") or base.cpu_seconds,
        child_user=base.child_user if user is None else (None if user == "none" else user),
    )
