"""One function per ``rlsys`` command (grade | batch | template | ledger | kit), each taking
the parsed arguments of :func:`pytest_rlsys.cli.build_parser` and returning an ExitCode.
Bad input is raised as UsageError / CommandError and reported in one place."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import os
import shutil
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_rlsys import settings, similarity
from pytest_rlsys.cli.base import CommandError, ExitCode, UsageError
from pytest_rlsys.cli.validate import max_bytes_of
from pytest_rlsys.escaping import clean, csv_cell, say
from pytest_rlsys.outputs import batchline, scorejson, terminal
from pytest_rlsys.outputs.files import write_atomic
from pytest_rlsys.outputs.text import dump_json
from pytest_rlsys.resources import exercise_path

if TYPE_CHECKING:
    from pytest_rlsys.grading.ahead import StandbyPool
    from pytest_rlsys.grading.grader import Grader
    from pytest_rlsys.grading.isolation import ChildProcess
    from pytest_rlsys.grading.probes import ProbeRun
    from pytest_rlsys.grading.request import GradingRequest

__all__ = [
    "CSV_FIELDS",
    "batch",
    "find_submissions",
    "grade",
    "kit",
    "ledger",
    "template",
]


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
    from pytest_rlsys.grading.grader import SubmissionPathError
    from pytest_rlsys.session import GradingSession

    prog = "rlsys grade"
    request = _request(args, "grade")
    if request.submission is None:  # argparse requires it; a namespace built elsewhere
        raise UsageError("the submission file is required", prog)
    try:
        session = GradingSession.open(request)
    except SubmissionPathError as exc:  # nothing to grade: its files say 0 and the reason
        raise UsageError(str(exc), prog) from None
    if args.verbose:
        say("\n".join(session.header_lines(Path.cwd())))
    try:
        if session.grader is not None:
            session.grader.run_all()
    finally:
        session.finish()  # on Ctrl-C too: the cases run so far are recorded
    width = max(40, shutil.get_terminal_size((terminal.WIDTH, 24)).columns)
    say("\n".join(session.summary_lines(args.verbose, width)))
    return ExitCode.ERROR if session.write_errors else ExitCode.OK


# -- batch ----------------------------------------------------------------------------------

CSV_FIELDS = (
    "submission",
    "status",
    "score",
    "max_score",
    "todo1",
    "todo2",
    "todo3",
    "cases_passed",
    "cases",
    "seed",
    "submission_sha256",
    "seconds",
    "message",
    *similarity.CSV_COLUMNS,
)
# status: graded | not_loaded (tried; the file did not load, every case scores 0)
#         | not_graded (not tried: no single .py file, unreadable, internal error)


NOT_PY = (
    "{name} is not a .py file, so it was not graded "
    "(a submission is one .py file or a folder holding one)"
)


def find_submissions(folder: Path) -> list[tuple[str, Path | None, str]]:
    """(name, file or None, problem) for each submission: a .py file, or a folder with one."""
    found: list[tuple[str, Path | None, str]] = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith(".") or entry.name == "__pycache__":  # Python's, no one's
            continue
        if entry.is_symlink() or not entry.is_dir():
            # Graded as `rlsys grade` grades it: a link is never followed (it could point
            # at the reference or a classmate's work) and a FIFO or device never read;
            # each scores 0 with the reason.
            if entry.suffix == ".py" or entry.is_dir():
                found.append((entry.name, entry, ""))
            else:  # a row all the same: a learner who handed in notes.txt must not vanish
                found.append((entry.name, None, NOT_PY.format(name=entry.name)))
        else:
            files, problem = _python_files(entry)
            named = entry / exercise_path().name  # the kits' rule: the template's name first
            if problem:
                found.append((entry.name, None, problem))
            elif len(files) == 1:
                found.append((entry.name, files[0], ""))
            elif named in files:
                found.append((entry.name, named, ""))
            else:
                found.append(
                    (
                        entry.name,
                        None,
                        f"expected one .py file in {entry.name}/, or one named "
                        f"{exercise_path().name} among several, found {len(files)}"
                        + (f": {', '.join(sorted(f.name for f in files)[:5])}" if files else ""),
                    )
                )
    return found


# A submission folder is walked without recursion, to a bounded size: a folder 1,100
# levels deep once made os.walk raise RecursionError and no CSV was written for anyone.
MAX_FOLDER_ENTRIES = 10_000
MAX_FOLDER_DEPTH = 32


def _python_files(folder: Path) -> tuple[list[Path], str]:
    """The .py files below ``folder`` (links not followed, dot-names skipped), or a
    problem when the folder is deeper or bigger than a submission can be."""
    files: list[Path] = []
    pending, seen = [(folder, 0)], 0
    while pending:
        current, depth = pending.pop()
        try:
            with os.scandir(current) as entries:
                listed = list(entries)
        except OSError:
            continue
        for entry in listed:
            seen += 1
            if seen > MAX_FOLDER_ENTRIES:
                return [], f"{folder.name}/ holds over {MAX_FOLDER_ENTRIES} entries"
            if entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                if depth + 1 > MAX_FOLDER_DEPTH:
                    return [], f"{folder.name}/ is nested over {MAX_FOLDER_DEPTH} folders deep"
                pending.append((Path(entry.path), depth + 1))
            elif entry.name.endswith(".py"):
                files.append(Path(entry.path))
    return sorted(files), ""


def _grade_row(
    name: str,
    path: Path | None,
    problem: str,
    request: GradingRequest,
    standbys: StandbyPool[ChildProcess] | None = None,
    running: _Running | None = None,
    probed: dict[str, dict[str, str] | None] | None = None,
) -> dict[str, Any]:
    """One row: the submission graded through ``open_grader``, as ``rlsys grade`` grades
    it, so a link, a FIFO or a file gone missing scores 0 with the same reason.
    ``running``: where the grader is listed while it runs (a batch stops it there).  Given
    ``probed``, a file that loaded is then run on the behaviour probes (instructor-only,
    docs/similarity.md) and its tokens stored there under ``name``."""
    from pytest_rlsys.grading.grader import open_grader

    row: dict[str, Any] = {"submission": name, "seed": request.seed}
    if path is None:
        return {**row, "status": "not_graded", "message": problem}
    began = time.monotonic()
    request = dataclasses.replace(request, submission=path)
    try:
        grader = open_grader(request, standbys.take() if standbys is not None else None)
        if running is not None:
            running.add(grader)
        try:
            grader.run_all()
        finally:
            if running is not None:
                running.discard(grader)
        report = grader.report()
        if probed is not None and not (running is not None and running.stopped):
            loaded = report.load_error is None
            probed[name] = _probe(grader.source, path, loaded, request, standbys, running)
    except Exception as exc:  # one broken submission never stops the batch
        return {
            **row,
            "status": "not_graded",
            "message": f"{type(exc).__name__}: {exc}",
            "seconds": round(time.monotonic() - began, 3),
        }
    sections = report.sections()
    return {
        **row,
        "status": "not_loaded" if report.load_error else "graded",
        "score": report.score,
        "max_score": report.max_score,
        **{s: sections[s]["score"] for s in ("todo1", "todo2", "todo3") if s in sections},
        "cases_passed": sum(s["passed"] for s in sections.values()),
        "cases": len(report.cases),
        "submission_sha256": report.submission_sha256,
        "seconds": round(time.monotonic() - began, 3),
        # Every row below full marks says why, in one line (a load error with its hint).
        "message": batchline.below_full_marks(report, request.lang),
        "report": scorejson.document(report, request.lang),
    }


class _Running:
    """The graders a batch's workers are running.  An interrupted batch stops them
    (``Grader.stop``) and cancels the submissions not begun: otherwise its pool, as it
    shuts down, waited for every running call to reach its time limit and then graded
    the rest of the class (one Ctrl-C took 78 s for a class of 8; a second one ended
    only that wait, and Python's wait for the workers at exit went on)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        # Graders and probe runs (each with stop()), by id(): a Grader is not hashable.
        self.graders: dict[int, Grader | ProbeRun] = {}
        self.stopped = False

    def add(self, grader: Grader | ProbeRun) -> None:
        with self.lock:
            self.graders[id(grader)] = grader
            stopped = self.stopped
        if stopped:  # opened while the batch was being stopped
            grader.stop()

    def discard(self, grader: Grader | ProbeRun) -> None:
        with self.lock:
            self.graders.pop(id(grader), None)

    def stop(self) -> None:
        with self.lock:
            self.stopped = True
            graders = list(self.graders.values())
        for grader in graders:
            grader.stop()


def _probe(
    source: str,
    path: Path,
    loaded: bool,
    request: GradingRequest,
    standbys: StandbyPool[ChildProcess] | None,
    running: _Running | None = None,
) -> dict[str, str] | None:
    """The file's tokens on the behaviour probes, in a fenced child with the request's
    limits; None when it did not load (nothing measured)."""
    from pytest_rlsys.grading.probes import ProbeRun, run_probes

    if not loaded:
        return None
    probing = ProbeRun()  # an interrupted batch ends the probes too (running.stop)
    if running is not None:
        running.add(probing)
    try:  # the grade is already made: nothing here may cost the row
        standby = standbys.take() if standbys is not None else None
        tokens = run_probes(source, str(path), request.limits, standby, run=probing)
    except Exception:
        return None
    finally:
        if running is not None:
            running.discard(probing)
    return tokens


class _Progress:
    """A tqdm bar on a terminal (never in a log file), naming the slowest running one."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.running: dict[str, float] = {}
        self.lock = threading.Lock()
        self.bar: Any = None
        if enabled and sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="sub", file=sys.stderr, dynamic_ncols=True)

    def started(self, name: str) -> None:
        with self.lock:
            self.running[name] = time.monotonic()

    def finished(self, name: str) -> None:
        with self.lock:
            self.running.pop(name, None)
        if self.bar is not None:
            self.bar.update(1)

    def slowest(self) -> str:
        with self.lock:
            if not self.running:
                return ""
            name, since = min(self.running.items(), key=lambda item: item[1])
        return f"slowest: {clean(name, newlines=False)} {time.monotonic() - since:.0f}s"

    def refresh(self) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(self.slowest(), refresh=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def batch(args: argparse.Namespace) -> ExitCode:
    from pytest_rlsys.grading.ahead import StandbyPool
    from pytest_rlsys.grading.isolation import ChildProcess
    from pytest_rlsys.grading.private import check_folder_private
    from pytest_rlsys.resources import FUNCTIONS

    prog = "rlsys batch"
    folder = Path(args.folder)
    if not os.path.lexists(folder):  # the one rule for a named input that is not there
        raise UsageError(f"{folder}: no such folder", prog)
    if not folder.is_dir():
        raise UsageError(f"{folder} is not a folder of submissions", prog)
    request = _request(args, "batch")
    problem = check_folder_private(folder)
    if problem is not None:  # as root: children must not read their classmates' files
        raise UsageError(problem, prog)
    # One seed for the whole class, chosen once and written in every row.
    request = dataclasses.replace(request, seed=request.battery_seed)
    seed = request.seed
    # This run's own outputs, written into the class folder by an earlier run, are no one's
    # (by path, links not followed: a learner's link to an output is still a learner's row).
    outputs = {os.path.abspath(out) for out in (args.csv, args.json, args.html) if out}
    submissions = [
        found
        for found in find_submissions(folder)
        if not (found[2] and os.path.abspath(folder / found[0]) in outputs)
    ]
    if all(problem == NOT_PY.format(name=name) for name, _, problem in submissions):
        raise UsageError(f"no submissions (.py files) in {folder}", prog)
    jobs = args.jobs or os.cpu_count() or 2
    progress = _Progress(len(submissions), not args.no_progress)
    standbys = StandbyPool(lambda: ChildProcess.on_standby(list(FUNCTIONS), request.limits))
    running = _Running()

    # Each file's behaviour on the probes (docs/similarity.md), unless told not to run them.
    probed: dict[str, dict[str, str] | None] | None = None if args.no_behaviour else {}

    def work(name: str, path: Path | None, problem: str) -> dict[str, Any]:
        progress.started(name)
        try:
            return _grade_row(name, path, problem, request, standbys, running, probed)
        finally:
            progress.finished(name)

    rows: list[dict[str, Any]] = []
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        pending: set[Future[dict[str, Any]]] = {
            pool.submit(work, name, path, problem) for name, path, problem in submissions
        }
        while pending:
            done, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
            rows += [future.result() for future in done]
            progress.refresh()
    except BaseException:
        # Interrupted (Ctrl-C): what is running ends now and nothing else begins; the
        # workers then end within moments (Python waits for them at exit).
        running.stop()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    else:
        pool.shutdown()  # every future is done: its idle workers end at once
    finally:
        standbys.close()
        progress.close()
    rows.sort(key=lambda r: r["submission"])
    # Instructor-only, never part of a score: near copies of the reference or a classmate.
    alike = similarity.compare_files({name: path for name, path, _ in submissions}, probed)
    for row in rows:
        row["similarity"] = alike[row["submission"]].as_dict()
    table = io.StringIO()
    writer = csv.DictWriter(table, fieldnames=CSV_FIELDS, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(
        {k: csv_cell(v) for k, v in {**row, **alike[row["submission"]].csv_cells()}.items()}
        for row in rows
    )
    try:
        if args.csv:
            write_atomic(Path(args.csv), table.getvalue())
        if args.json:
            write_atomic(Path(args.json), dump_json({"seed": seed, "submissions": rows}))
        if args.html:
            from pytest_rlsys.outputs.class_report import write_class_report

            write_class_report(Path(args.html), rows, seed)
    except OSError as exc:
        raise CommandError(f"could not write the grades: {exc}", prog) from None
    if not args.csv and not args.json and not args.html:
        say(table.getvalue(), end="")
    counts = {
        status: sum(r["status"] == status for r in rows)
        for status in ("graded", "not_loaded", "not_graded")
    }
    say(
        f"{prog}: {len(rows)} submissions: {counts['graded']} graded, "
        f"{counts['not_loaded']} did not load (score 0), {counts['not_graded']} "
        f"not graded (see the message column), seed {seed}",
        err=True,
    )
    return ExitCode.OK


# -- template -------------------------------------------------------------------------------


def template(args: argparse.Namespace) -> ExitCode:
    prog = "rlsys template"
    text = exercise_path().read_text(encoding="utf-8")
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
    say(f"wrote {target}; grade it with: pytest --rlsys-submission {target}")
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
