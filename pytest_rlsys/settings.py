"""Every option of the pytest plugin and of the ``rlsys`` commands, declared once.

One :class:`Option` per line of :data:`OPTIONS` carries the name, metavar, parser, help,
whether pytest takes it (``--rlsys-NAME``) and reads it from the ini file (``rlsys_NAME``),
and which ``rlsys`` commands take it (``--NAME``).  The plugin's ``pytest_addoption``, each
command's argparse parser, the error messages and the README check are all derived from it
(pytest-timeout's one description per setting).  Adding an option is one entry here.

Values resolve from the command line, else the ini file, else the default; a bad value is
reported with the flag the user actually typed.  The two drivers turn their values into one
:class:`~pytest_rlsys.grading.request.GradingRequest` here, each with one function
(``request_from_pytest``, ``request_from_args``) around the same core, so that paths,
rubric files and output folders are checked once, the same way.  Defaults are never
written here: unset values stay None and the records (``Limits``, ``RenderOptions``, the
battery's seed) supply them.  No pytest import here.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pytest_rlsys import option_values as parsers

if TYPE_CHECKING:
    import pytest

    from pytest_rlsys.grading.outcomes import Limits
    from pytest_rlsys.grading.request import GradingRequest

__all__ = [
    "OPTIONS",
    "Option",
    "OutputPathError",
    "SettingError",
    "add_arguments",
    "by_name",
    "check_outputs",
    "for_command",
    "for_pytest",
    "limits_from",
    "request_from_args",
    "request_from_pytest",
    "resolve",
]


class SettingError(ValueError):
    """A bad option value; the message names the flag or ini key it came from."""


class OutputPathError(SettingError):
    """An output path that cannot be written: a folder (a usage error) or a file whose
    folder does not exist (``missing_folder``: never created, a typo must not scatter
    grades into new folders)."""

    def __init__(self, message: str, missing_folder: bool) -> None:
        super().__init__(message)
        self.missing_folder = missing_folder


# -- the table ---------------------------------------------------------------------------

# The records whose fields options set (``Option.record``); each supplies its defaults.
RecordPart = Literal["limits", "render", "rubric", "result_file"]

GRADE, BATCH = ("grade",), ("batch",)
BOTH = ("grade", "batch")
LIMITED = (*BOTH, "similarity")  # the child's limits: rlsys similarity probes behind them


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
    # Commands only, for options outside grading; a grading setting's default is its
    # record's (Limits, RenderOptions), which an unset (None) value leaves in place.
    default: Any = None
    # The record field this option sets, as (part, field): part "limits" (Limits),
    # "render" (RenderOptions), "rubric" (Rubric) or "result_file" (the result-file
    # reader's size limit, in MiB).  Its default is that field's.
    record: tuple[RecordPart, str] | None = None

    @property
    def default_text(self) -> str:
        """The default, as the help shows it: the record's own where there is one."""
        value = self.default if self.record is None else _record_default(*self.record)
        return f"{value:g}" if isinstance(value, float) else str(value)

    @property
    def help_text(self) -> str:
        """The help, its ``{default}`` filled in from the record or ``default``."""
        return self.help.format(default=self.default_text) if "{" in self.help else self.help

    @property
    def pytest_flag(self) -> str:
        return "--rlsys-" + self.name.replace("_", "-")

    @property
    def cli_flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def ini_key(self) -> str | None:
        return f"rlsys_{self.name}" if self.ini else None


def _record_default(part: RecordPart, name: str) -> Any:
    # Imported here, each only when its part is asked for: the records are plain data,
    # but the plugin reads this table in every pytest run, graded or not.
    record: Any
    if part == "limits":
        from pytest_rlsys.grading.outcomes import Limits

        record = Limits()
    elif part == "render":
        from pytest_rlsys.grading.scoring import RenderOptions

        record = RenderOptions()
    elif part == "rubric":
        from pytest_rlsys.grading.rubric import Rubric

        record = Rubric()
    else:
        from pytest_rlsys.resultfile.loading import DEFAULT_MAX_BYTES

        return DEFAULT_MAX_BYTES // (1024 * 1024)  # result_file: max_mib
    return getattr(record, name)


_PLATFORM = "Also write {} to this path."


def _run_output(name: str, help: str) -> Option:
    """An output of one grading run (pytest and ``rlsys grade``)."""
    return Option(name, "PATH", help, pytest=True, commands=GRADE, output=True)


def _setting(
    name: str,
    metavar: str,
    help: str,
    parse: Callable[[str], Any] | None,
    commands: tuple[str, ...],
    record: tuple[RecordPart, str] | None = None,
) -> Option:
    """A setting of the grading run: ``--rlsys-NAME``, ini key ``rlsys_NAME``, ``--NAME``."""
    return Option(name, metavar, help, parse, True, True, commands, record=record)


def _batch_output(name: str, help: str) -> Option:
    return Option(name, "PATH", help, commands=BATCH, output=True)


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
    _run_output("report", "Write the score report JSON (schema rlsys-score/1) to this path."),
    _run_output("gradescope", _PLATFORM.format("a Gradescope results.json")),
    _run_output("prairielearn", _PLATFORM.format("a PrairieLearn results.json")),
    _run_output("junit", _PLATFORM.format("JUnit XML with per-case points")),
    _setting(
        "hidden_visibility",
        "VISIBILITY",
        "Gradescope visibility of the hidden cases: visible, after_due_date, "
        "after_published or hidden (default {default}; rlsys kit gradescope: what its "
        "run_autograder grades with).",
        parsers.hidden_visibility,
        ("grade", "kit"),
        ("render", "hidden_visibility"),
    ),
    # settings of the grading run
    _setting(
        "seed",
        "N",
        "Seed for the hidden cases (default: fixed by the battery version, "
        "so the same file always gets the same score; set one per assignment). @FILE reads "
        "it from a file (keep that file root-only; a command line is readable by every "
        "user). Always recorded in the report.",
        parsers.seed,
        BOTH,
    ),
    _setting(
        "require_fence",
        "LEVEL",
        "Refuse to grade behind a weaker fence than LEVEL: none, seccomp, landlock or "
        "bubblewrap (`rlsys fence` prints what this machine gives; the kits require "
        "seccomp).",
        parsers.require_fence,
        BOTH,
    ),
    _setting(
        "lang",
        "zh|en",
        "Language of learner feedback: zh or en (default: from the locale).",
        parsers.either("zh", "en"),
        (*BOTH, "template"),  # template: its prose in one language (default both)
    ),
    _setting(
        "rubric",
        "PATH",
        "Rubric file (TOML or JSON) overriding the points per section.",
        None,
        BOTH,
    ),
    _setting(
        "timeout",
        "SECONDS",
        "Wall-clock seconds allowed for one call into the submission (default {default}).",
        parsers.positive_number,
        LIMITED,
        ("limits", "call_timeout_s"),
    ),
    _setting(
        "budget",
        "SECONDS",
        "Wall-clock seconds for the whole submission; cases after it are not run "
        "(default {default}).",
        parsers.positive_number,
        BOTH,
        ("limits", "budget_s"),
    ),
    _setting(
        "memory_mb",
        "MIB",
        "Address-space limit of the submission's process in MiB (default {default}).",
        parsers.positive_whole,
        LIMITED,
        ("limits", "address_space_mb"),
    ),
    _setting(
        "cpu_seconds",
        "SECONDS",
        "CPU-time limit of the submission's process in seconds (default {default}).",
        parsers.positive_whole,
        LIMITED,
        ("limits", "cpu_seconds"),
    ),
    _setting(
        "child_user",
        "USER",
        "When grading as root, run the submission as: auto (a fresh unused uid for each "
        "child), a user name, or none (keep root); default {default}.",
        parsers.child_user,
        LIMITED,
        ("limits", "child_user"),
    ),
    # rlsys batch only
    _batch_output("csv", "Write one row per submission (CSV) to this path."),
    _batch_output("json", "Write the rows plus each full report (JSON) to this path."),
    _batch_output(
        "html",
        "Write the class report: one self-contained HTML page (score "
        "histograms, hidden categories most often failed, submissions that did not load "
        "or timed out, the slowest).",
    ),
    Option(
        "jobs",
        "N",
        "Submissions graded at once (default: the CPU count; one where the fence hides no "
        "/proc: seccomp or none).",
        parsers.positive_whole,
        commands=BATCH,
        short="-j",
    ),
    Option(
        "no_behaviour",
        None,
        "Do not run the behaviour probes of the similarity report (about 60 calls per "
        "file in the grader's child; the report then has no behaviour share).",
        commands=BATCH,
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
    Option("force", None, "Overwrite the file if it exists.", commands=("template",)),
    Option("force", None, "Write into DIR even if it is not empty.", commands=("kit",)),
    Option("json", None, "Print JSON instead of text.", commands=("ledger", "validate", "result")),
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
        "Which group of the result file to read (default {default}).",
        parsers.either("release", "retain"),
        commands=("ledger",),
        default="release",
    ),
    Option(
        "wheel",
        "PATH",
        "Bundle this pytest-rlsys wheel (default: a wheel packed from the installed "
        "package); its pinned dependencies are bundled either way.",
        commands=("kit",),
    ),
    Option(
        "namespace",
        "NAME",
        "PrairieLearn: the registry namespace the grading image is pushed to (a Docker "
        "Hub user or organisation); info.json then names NAME/rlsys-grader:VERSION.",
        commands=("kit",),
    ),
    # rlsys validate / result
    Option(
        "max_errors",
        "N",
        "Show at most N errors per file in text output (0: all; default {default}).",
        parsers.count,
        commands=("validate",),
        default=100,
    ),
    Option(
        "max_mib",
        "MIB",
        "Refuse result files larger than this many MiB (default {default}).",
        parsers.positive_number,
        commands=("validate", "result", "ledger"),
        record=("result_file", "max_mib"),
    ),
    Option(
        "points",
        "N",
        "Points per check (default {default}; 8 checks).",
        parsers.positive_number,
        commands=("result",),
        record=("rubric", "per_check"),
    ),
    Option(
        "artefacts",
        "DIR",
        "The run's raw artefacts: re-hash the adapters in DIR/<group>/adapters/ "
        "(initial/ and updated/, adapter_model.safetensors) and compare the file's "
        "samples with DIR/<group>/samples.jsonl.",
        commands=("result",),
    ),
)


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


def add_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    """Give ``parser`` every option the table lists for ``rlsys COMMAND``."""
    for option in for_command(command):
        flags = [option.cli_flag] + ([option.short] if option.short else [])
        kwargs: dict[str, Any] = {"dest": option.name, "help": option.help_text}
        if option.metavar is None:
            parser.add_argument(*flags, action="store_true", **kwargs)
            continue
        if option.parse is not None:
            kwargs["type"] = parsers.argparse_type(option.parse, option.name)
        parser.add_argument(*flags, metavar=option.metavar, default=option.default, **kwargs)


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


def limits_from(values: Mapping[str, Any]) -> Limits:
    """The child's limits: each option the user set (not None), else Limits' default."""
    from pytest_rlsys.grading.outcomes import Limits

    given: dict[str, Any] = {
        o.record[1]: values[o.name]
        for o in OPTIONS
        if o.record and o.record[0] == "limits" and values.get(o.name) is not None
    }
    if given.get("child_user") == "none":
        given["child_user"] = None  # keep root
    return Limits(**given)


# -- the grading request ---------------------------------------------------------------------


def check_outputs(outputs: Mapping[str, Path], flag: Callable[[str], str]) -> None:
    """Every output path is usable before anything is graded (``flag``: how the user
    spelled the option of that name)."""
    seen: dict[Path, str] = {}
    for name, path in outputs.items():  # one file each: the second would overwrite the first
        other = seen.setdefault(path.resolve(), name)
        if other != name:
            raise OutputPathError(
                f"{flag(other)} and {flag(name)} name the same file {path}; give each its own",
                missing_folder=False,
            )
    for name, path in outputs.items():
        if path.is_dir():
            raise OutputPathError(
                f"{flag(name)}: {path} is a directory; give a file path", missing_folder=False
            )
        if not path.parent.is_dir():
            raise OutputPathError(
                f"{flag(name)} {path}: folder {path.parent} does not exist; create it first",
                missing_folder=True,
            )


def _request(
    values: Mapping[str, Any], base: Path, options: list[Option], flag: Callable[[str], str]
) -> GradingRequest:
    """The request from parsed values (None: unset) of ``options``; paths relative to
    ``base``.  Checks, in this order: the output paths, the rubric file, the result file."""
    from pytest_rlsys.grading.private import unreadable_battery
    from pytest_rlsys.grading.request import GradingRequest
    from pytest_rlsys.grading.rubric import Rubric, RubricError, check_weights, load_rubric
    from pytest_rlsys.grading.scoring import RenderOptions
    from pytest_rlsys.messages import default_lang

    if values.get("submission") and (problem := unreadable_battery()):
        raise SettingError(problem)
    outputs = {o.name: base / values[o.name] for o in options if o.output and values.get(o.name)}
    check_outputs(outputs, flag)
    rubric = Rubric()
    if values.get("rubric"):
        try:
            rubric = load_rubric(base / values["rubric"])
            if rubric.weights:  # case ids are the battery's: checked before any grading
                from pytest_rlsys.grading.grader import prepare_battery  # cached for it

                seed = GradingRequest(seed=values.get("seed")).battery_seed
                check_weights(rubric, prepare_battery(seed).cases)
        except RubricError as exc:
            raise SettingError(f"{flag('rubric')}: {exc}") from None
    result = base / values["result"] if values.get("result") else None
    if result is not None and not result.exists():
        raise SettingError(f"{flag('result')}: {result}: no such file")
    if result is not None and result.is_dir():
        raise SettingError(f"{flag('result')}: {result} is a directory; give the JSON file")
    chosen = {k: values[k] for k in ("hidden_visibility",) if values.get(k)}
    return GradingRequest(
        submission=base / values["submission"] if values.get("submission") else None,
        result=result,
        seed=values.get("seed"),
        rubric=rubric,
        limits=limits_from(values),
        outputs=outputs,
        render=RenderOptions(lang=values.get("lang") or default_lang(), **chosen),
    )


def request_from_pytest(config: pytest.Config) -> GradingRequest:
    """The plugin's request: each ``--rlsys-NAME``, else its ini key (bad values name
    the one that was used); paths relative to where pytest was started."""
    values: dict[str, Any] = {}
    for option in for_pytest():
        given = config.getoption(f"rlsys_{option.name}")
        ini = config.getini(option.ini_key) if option.ini_key else None
        values[option.name] = resolve(option.name, given, ini)
    return _request(
        values,
        config.invocation_params.dir,
        list(for_pytest()),
        lambda name: by_name(name).pytest_flag,
    )


def request_from_args(args: argparse.Namespace, command: str) -> GradingRequest:
    """``rlsys COMMAND``'s request from its parsed arguments (argparse has parsed every
    value with the table's parsers); paths relative to the current folder."""
    options = list(for_command(command))
    values = {o.name: getattr(args, o.name, None) for o in options}
    values["submission"] = getattr(args, "submission", None)
    flags = {o.name: o.cli_flag for o in options}
    return _request(values, Path.cwd(), options, flags.__getitem__)
