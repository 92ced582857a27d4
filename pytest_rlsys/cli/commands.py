"""One function per ``rlsys`` command (grade | batch | template | ledger | kit), each taking
the parsed arguments of :func:`pytest_rlsys.cli.build_parser` and returning an ExitCode.
Bad input is raised as UsageError / CommandError and reported in one place."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_rlsys import ctrl_c, settings
from pytest_rlsys.cli.base import CommandError, ExitCode, UsageError
from pytest_rlsys.cli.validate import max_bytes_of
from pytest_rlsys.escaping import clean, roster_name, say
from pytest_rlsys.outputs import terminal
from pytest_rlsys.outputs.text import dump_json
from pytest_rlsys.resources import exercise_path

if TYPE_CHECKING:
    from pytest_rlsys.grading.request import GradingRequest

__all__ = ["grade", "kit", "ledger", "similarity_note", "template"]


def _request(args: argparse.Namespace, command: str) -> GradingRequest:
    """The command's grading request; its output paths are checked before anything is
    graded (a folder given as a file is a usage error; a missing parent folder is an
    error, never created silently: a typo must not scatter grades into new folders)."""
    prog = f"rlsys {command}"
    try:
        return settings.request_from_args(args, command)
    except settings.OutputPathError as exc:
        if exc.missing_folder:
            raise CommandError(str(exc), prog) from None
        raise UsageError(f"argument {exc}", prog) from None
    except settings.SettingError as exc:
        raise UsageError(f"argument {exc}", prog) from None


# -- grade ----------------------------------------------------------------------------------


def grade(args: argparse.Namespace) -> ExitCode:
    """Grade one submission as ``pytest --rlsys-submission`` does, without pytest (so no
    pytest config or conftest of the current folder takes part): a batch of one."""
    from pytest_rlsys.grading.isolation import ChildProcess
    from pytest_rlsys.resources import FUNCTIONS

    prog = "rlsys grade"
    request = _request(args, "grade")
    if request.submission is None:  # argparse requires it; a namespace built elsewhere
        raise UsageError("the submission file is required", prog)
    # As the plugin does: the child's interpreter starts first, so that its start-up
    # overlaps the import of the grading modules and the battery's build (it runs nothing
    # of the submission's until the grader has protected its private files and loads it).
    standby = ChildProcess.on_standby(list(FUNCTIONS), request.limits)
    try:
        from pytest_rlsys.session import GradingSession

        session = GradingSession.open(request, standby)
    except BaseException as exc:
        standby.close()  # no grader took it (closing twice is harmless)
        from pytest_rlsys.grading.grader import SubmissionPathError

        if isinstance(exc, SubmissionPathError):  # nothing to grade: 0 and the reason
            raise UsageError(str(exc), prog) from None
        raise
    if args.verbose:
        say("\n".join(session.header_lines(Path.cwd())))
    try:
        if session.grader is not None:
            session.grader.run_all()
    except BaseException:
        # Interrupted (Ctrl-C) or a fault of ours: the cases not run are no fault of the
        # submission's, so nothing is recorded (a score file would read as its grade).
        session.close()
        raise
    ctrl_c.ending()  # graded: the files and the summary are written whatever is pressed
    session.finish()
    width = max(40, shutil.get_terminal_size((terminal.WIDTH, 24)).columns)
    say("\n".join(session.summary_lines(args.verbose, width)))
    return ExitCode.ERROR if session.write_errors else ExitCode.OK


# -- similarity -----------------------------------------------------------------------------


def similarity_note(args: argparse.Namespace) -> ExitCode:
    """``rlsys similarity FILE...``: each file's instructor-only note against the
    references (its behaviour probed in a grader's child, its code read in a bounded
    child); it changes no score."""
    from pytest_rlsys.similarity.note import instructor_note

    request = _request(args, "similarity")
    for name in args.files:  # each line names its file, escaped as a batch row's name
        note = instructor_note(Path(name), request.limits)
        say(clean(f"{roster_name(name)}: {note}", newlines=False))
    return ExitCode.OK


# -- template -------------------------------------------------------------------------------


def template(args: argparse.Namespace) -> ExitCode:
    from pytest_rlsys.cli.template import in_language
    from pytest_rlsys.messages import WROTE

    prog = "rlsys template"
    lang = args.lang or "both"
    text = in_language(exercise_path().read_text(encoding="utf-8"), lang)
    if not args.path:
        say(text, end="")
        return ExitCode.OK
    target = Path(args.path)
    if target.exists() and not args.force:
        raise UsageError(f"{target} exists; pass --force to overwrite it", prog)
    # The docstring's grading command names the file as written.
    text = text.replace("--rlsys-submission rlsys_ledger.py", f"--rlsys-submission {target.name}")
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot write {target}: {exc.strerror}", prog) from None
    say(WROTE.fill(lang, {"path": str(target)}))  # "both": English
    return ExitCode.OK


# -- ledger ---------------------------------------------------------------------------------


def ledger(args: argparse.Namespace) -> ExitCode:
    from pytest_rlsys.ledger import LedgerError, ledger_report, load_topology, render_text

    prog = "rlsys ledger"
    # --group and --max-mib are about the --result file: without one they would be
    # silently ignored, and the report would look as if they had been applied.
    unused = [
        flag
        for flag, given in (("--group", args.group), ("--max-mib", args.max_mib))
        if given is not None
    ]
    if unused and not args.result:
        raise UsageError(
            f"{' and '.join(unused)} {'apply' if len(unused) > 1 else 'applies'} to a "
            "closure result file: pass --result FILE too, or leave "
            f"{'them' if len(unused) > 1 else 'it'} out (the topology's own rates are used)",
            prog,
        )
    group = args.group or settings.by_name("group").default
    try:
        topology = load_topology(Path(args.topology))
        result = Path(args.result) if args.result else None
        report = ledger_report(topology, result, group, max_bytes_of(args))
    except LedgerError as exc:
        raise UsageError(str(exc), prog) from None
    if args.json:
        say(dump_json(report), end="")
    else:
        say(render_text(report), end="")
    return ExitCode.OK


# -- kit ------------------------------------------------------------------------------------


def kit(args: argparse.Namespace) -> ExitCode:
    from pytest_rlsys.outputs.kits import KitError, KitUsageError, write_kit

    prog = "rlsys kit"
    # An option of another platform's kit would be silently ignored: refuse it instead.
    for flag, value, only in (
        ("--namespace", args.namespace, "prairielearn"),
        ("--hidden-visibility", args.hidden_visibility, "gradescope"),
    ):
        if value is not None and args.platform != only:
            raise UsageError(
                f"{flag} applies to the {only} kit only; leave it out for the {args.platform} kit",
                prog,
            )
    target = Path(args.dir)
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target} exists and is not a folder", prog)
    # DIR itself is created, its parent never: as for every output path, a typo must not
    # scatter a kit (and its secret seed) into new folders.
    parent = target.absolute().parent
    if not target.exists() and not parent.is_dir():
        raise CommandError(
            f"the folder {parent} does not exist; create it first (mkdir -p {parent}) "
            "or give a DIR inside an existing folder",
            prog,
        )
    if target.is_dir() and any(target.iterdir()) and not args.force:
        raise UsageError(f"{target} is not empty; pass --force to write into it", prog)
    wheel = Path(args.wheel) if args.wheel else None
    if wheel is not None and not wheel.is_file():
        problem = "is a directory" if wheel.is_dir() else "no such file"
        raise UsageError(f"argument --wheel: {wheel}: {problem}", prog)
    try:
        made = write_kit(
            args.platform,
            target,
            wheel,
            namespace=args.namespace,
            hidden_visibility=args.hidden_visibility or "visible",
        )
    except KitUsageError as exc:  # a bad --namespace or --wheel: exit 2, as every option
        raise UsageError(str(exc), prog) from None
    except KitError as exc:
        raise CommandError(str(exc), prog) from None
    for path in made.files:
        say(path)
    for line in made.advice:
        say(f"note: {line}")
    return ExitCode.OK
