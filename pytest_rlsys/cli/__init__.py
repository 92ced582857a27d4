"""The ``rlsys`` command: one parser builder, one function per command
(:mod:`pytest_rlsys.cli.commands`, :mod:`pytest_rlsys.cli.validate`), named exit codes,
one usage-error path and one BrokenPipe / Ctrl-C path.  Only ``closure`` (the GPU runner,
installed apart) keeps its own parser and is handed its arguments as they are."""

from __future__ import annotations

import os
import signal
import sys


def _interrupted_while_starting(number: int, frame: object) -> None:
    raise SystemExit(130)  # ExitCode.INTERRUPTED: a Ctrl-C before main() ran, no traceback


# The program's own start (`rlsys`, `python -m pytest_rlsys`): a Ctrl-C while the modules
# below load ends it quietly; main() puts Python's KeyboardInterrupt back.  Never in a
# host program that imports this module (a test run keeps its own Ctrl-C).
_STARTING = os.path.basename(sys.argv[0]) == "rlsys" or sys.argv[0].endswith(
    os.path.join("pytest_rlsys", "__main__.py")
)
if _STARTING and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, _interrupted_while_starting)
if _STARTING and sys.argv[1:2] in (["grade"], ["batch"]):
    from pytest_rlsys.grading import collect_rarely

    collect_rarely()  # from before the modules below load

import argparse  # noqa: E402  (after the handler: these imports are what takes time)
import contextlib  # noqa: E402
import importlib  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402

from pytest_rlsys import ctrl_c, settings  # noqa: E402
from pytest_rlsys.cli.base import (  # noqa: E402
    CommandError,
    ExitCode,
    Parser,
    UsageError,
    exit_codes_help,
)
from pytest_rlsys.escaping import say  # noqa: E402

__all__ = ["ExitCode", "build_parser", "main"]

# name, synopsis, one-line summary; the order of the top-level help.
COMMANDS = (
    ("grade", "FILE", "grade one submission with the packaged battery"),
    ("batch", "DIR", "grade a class folder in parallel, to CSV/JSON/HTML"),
    ("template", "[PATH]", "write the learner template (stdout when no PATH)"),
    ("validate", "FILE...", "check result files against their schema (schema only)"),
    ("result", "FILE", "grade a result file's checks from its own evidence"),
    (
        "closure",
        "COMMAND ...",
        "verl experiment: preflight|run|summary|plot|tiny-model",
    ),
    ("ledger", "TOPOLOGY", "capacity, transfer and admission report of a topology"),
    ("kit", "PLATFORM DIR", "a kit: gradescope|prairielearn|actions|classroom50"),
    ("similarity", "FILE...", "instructors: each file against the references"),
    ("fence", "", "the fence a submission runs behind on this machine"),
)

USAGE = (
    "usage: rlsys COMMAND [ARGS...]\n\ncommands:\n"
    + "".join(f"  {f'{n} {s}':<22}{h}\n" for n, s, h in COMMANDS)
    + "\nRun 'rlsys COMMAND --help' for a command's options.\n"
    + exit_codes_help(
        meanings={
            ExitCode.ERROR: "could not finish (an output could not be written, ...); "
            "result: the file is not gradable"
        }
    )
    + "\n  (closure, the GPU runner, has its own: rlsys closure --help)\n"
)


# Each command's function as "module:name" of this package, imported only when that
# command runs: `rlsys grade` does not load the batch's similarity report and thread pool.
Run = Callable[[argparse.Namespace], ExitCode] | str


def build_parser(only: str | None = None) -> Parser:
    """Every command's arguments (``only``: that command's alone, all a run needs):
    positionals here, options from the settings table (``command``)."""
    root = Parser(prog="rlsys", add_help=False)
    sub = root.add_subparsers(dest="command", parser_class=Parser)
    summary = {name: text for name, _, text in COMMANDS}
    codes = (ExitCode.OK, ExitCode.USAGE, ExitCode.ERROR, ExitCode.INTERRUPTED)

    def command(
        name: str,
        description: str,
        run: Run,
        epilog: str = exit_codes_help(*codes),
    ) -> Parser:
        parser: Parser = sub.add_parser(
            name, help=summary[name], description=description, epilog=epilog
        )
        parser.set_defaults(run=run)
        settings.add_arguments(parser, name)  # its options: the settings table's
        return parser

    if only in (None, "grade"):
        p = command(
            "grade",
            "Grade one submission with the packaged battery, as pytest --rlsys-submission "
            "grades it but without pytest, so the current folder's pytest.ini/conftest "
            "take no part. Every option is the pytest plugin's --rlsys-NAME as --NAME.",
            "commands:grade",
        )
        p.add_argument("submission", help="the learner's .py file")

    if only in (None, "batch"):
        p = command(
            "batch",
            "Grade every submission in a folder (each a .py file, or a subfolder "
            "holding one) in parallel, one row per submission, every one with the same "
            "seed. Output paths are checked before anything is graded.",
            "batch:batch",
        )
        p.add_argument(
            "folder",
            metavar="DIR",
            help="the class folder: one .py file per submission, or one subfolder per "
            "submission holding one .py file, or rlsys_ledger.py among others, as the kits "
            "pick (named by the subfolder); a folder holding only folders (a section) is "
            "walked, each learner named by its path (Section A/Li Na); any other "
            "file gets a not_graded row",
        )

    if only in (None, "similarity"):
        p = command(
            "similarity",
            "Instructors only: each file against the chapter's references, one line each (its "
            "code read in a bounded child, its behaviour probed behind the grading fence; "
            "docs/similarity.md). It changes no score.",
            "commands:similarity_note",
        )
        p.add_argument("files", nargs="+", metavar="FILE", help="submission files (.py)")

    if only in (None, "template"):
        p = command(
            "template",
            "Write the learner template (TODO 1-3) to PATH or stdout.",
            "commands:template",
        )
        p.add_argument("path", nargs="?", help="where to write it (default: stdout)")

    if only in (None, "validate"):
        p = command(
            "validate",
            "Validate pt-verl-closure result files against the schema their schema_version "
            "names. This checks the schema only (structure, types, ranges): it does not "
            "re-derive the checks from the evidence; 'rlsys result FILE' does.",
            "validate:validate",
            exit_codes_help(
                ExitCode.OK,
                ExitCode.FAILED,
                ExitCode.USAGE,
                ExitCode.INTERRUPTED,
                meanings={ExitCode.OK: "every file is valid", ExitCode.FAILED: "a file is invalid"},
            ),
        )
        p.add_argument("files", nargs="+", metavar="FILE", help="result files (JSON)")

    if only in (None, "result"):
        from pytest_rlsys.cli import validate  # its exit codes are the help

        p = command(
            "result",
            "Grade a pt-verl-closure result file: re-derive each of its eight checks from the "
            "evidence in the file (sampling coverage, phase order, resume calls, physical "
            "bounds, coherence) and compare with what the file claims. No file can prove "
            "itself: with --artefacts, the run's raw artefacts are checked too.",
            "validate:result",
            exit_codes_help(
                *validate.RESULT_MEANINGS, ExitCode.INTERRUPTED, meanings=validate.RESULT_MEANINGS
            ),
        )
        p.add_argument("file", metavar="FILE", help="the result file (JSON)")

    if only in (None, "ledger"):
        p = command(
            "ledger",
            "Capacity, transfer and admission report for a topology file "
            "(JSON or TOML; YAML with PyYAML installed), computed by the reference "
            "implementation.",
            "commands:ledger",
        )
        p.add_argument("topology")
        # Unset unless given, so that --group without --result is refused, not ignored (the
        # command applies the default, release).
        p.set_defaults(group=None)

    if only in (None, "kit"):
        p = command(
            "kit",
            "Write an instructor kit for a grading platform into DIR: gradescope "
            "(autograder.zip: setup.sh, run_autograder), prairielearn (an external-grader "
            "question folder), actions (a GitHub Actions template repository) or classroom50 "
            "(a Classroom 50 autograder bundle).",
            "commands:kit",
        )
        p.add_argument("platform", choices=("gradescope", "prairielearn", "actions", "classroom50"))
        p.add_argument("dir", metavar="DIR", help="folder to write the kit into (created)")

    if only not in (None, "fence"):
        return root
    command(
        "fence",
        "Print the fence a submission's process runs behind when this user grades on this "
        "machine (see docs/threat-model.md, 'The fence, per mode'): its level, the "
        "mechanisms, and what it does not protect.",
        _fence,
    )
    return root


def _fence(args: argparse.Namespace) -> ExitCode:
    from pytest_rlsys.grading import fence

    say(fence.describe(fence.machine_fence()), end="")
    return ExitCode.OK


def _run(args: list[str]) -> int:
    if not args or args[0] in {"-h", "--help", "help"}:
        say(USAGE, err=not args, end="")
        return ExitCode.OK if args else ExitCode.USAGE
    if args[0] == "closure":
        # Imported here: the GPU runner is an optional part that must not break the others.
        from rlsys_closure.cli import main as closure_main

        return closure_main(args[1:])
    if args[0] not in {name for name, _, _ in COMMANDS}:
        raise UsageError(f"unknown command {args[0]!r}\n\n{USAGE}")
    if args[0] in ("grade", "batch"):
        from pytest_rlsys.grading import fence

        fence.prepare()  # while the rest starts: the first child needs it
    try:
        namespace, extra = build_parser(args[0]).parse_known_args(args)
    except SystemExit as exc:  # --help of a command
        return int(exc.code) if isinstance(exc.code, int) else ExitCode.USAGE
    if extra:  # argparse would name the root parser ("rlsys:"); the command's is meant
        raise UsageError(f"unrecognized arguments: {' '.join(extra)}", f"rlsys {args[0]}")
    run = namespace.run
    if isinstance(run, str):
        module, _, name = run.partition(":")
        run = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    return int(run(namespace))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if signal.getsignal(signal.SIGINT) is _interrupted_while_starting:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # started: the path below
        ctrl_c.install()  # the program's own: one press ends it, later ones wait for that
    try:
        return _run(args)
    except UsageError as exc:
        say(f"{exc.prog}: error: {exc}", err=True)
        return ExitCode.USAGE
    except CommandError as exc:
        say(f"{exc.prog}: {exc}", err=True)
        return exc.code
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, as Unix tools do.
        with contextlib.suppress(OSError, ValueError, AttributeError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return ExitCode.OK
    except BaseException as exc:  # a Ctrl-C, also one wrapped by a class's creation
        if not ctrl_c.is_interrupt(exc):
            raise
        ctrl_c.ending()  # what is left (a batch's workers, whose calls were killed) is bounded
        say("rlsys: interrupted", err=True)
        return ExitCode.INTERRUPTED


if __name__ == "__main__":
    raise SystemExit(main())
