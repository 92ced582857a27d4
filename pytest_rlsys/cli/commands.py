"""One function per ``rlsys`` command (grade | batch | template | ledger | kit), each taking
the parsed arguments of :func:`pytest_rlsys.cli.build_parser` and returning an ExitCode.
Bad input is raised as UsageError / CommandError and reported in one place."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pytest_rlsys import settings, similarity
from pytest_rlsys.cli.base import CommandError, ExitCode, UsageError
from pytest_rlsys.cli.validate import max_bytes_of
from pytest_rlsys.escaping import clean, say
from pytest_rlsys.outputs import terminal
from pytest_rlsys.outputs.batch import (
    CSV_FIELDS,
    BatchResult,
    BatchRow,
    Status,
    csv_text,
    json_text,
)
from pytest_rlsys.outputs.files import write_atomic
from pytest_rlsys.outputs.text import dump_json
from pytest_rlsys.resources import exercise_path

if TYPE_CHECKING:
    from pytest_rlsys.grading.ahead import StandbyPool
    from pytest_rlsys.grading.grader import Grader
    from pytest_rlsys.grading.isolation import ChildProcess
    from pytest_rlsys.grading.request import GradingRequest
    from pytest_rlsys.similarity import FileSigns

__all__ = [
    "CSV_FIELDS",
    "batch",
    "find_submissions",
    "grade",
    "kit",
    "ledger",
    "similarity_note",
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

NOT_PY = (
    "{name} is not a .py file, so it was not graded "
    "(a submission is one .py file or a folder holding one)"
)


# (name, file or None, problem): one submission of a class folder.
Found = tuple[str, Path | None, str]


def find_submissions(folder: Path) -> list[Found]:
    """(name, file or None, problem) for each submission: a .py file, or a folder with one."""
    found: list[Found] = []
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


@dataclass
class _Graded:
    """A graded row and what the similarity report needs of it: the file's code signs (or
    why there are none), its behaviour tokens (None: not probed) and whether it loaded."""

    row: BatchRow
    signs: FileSigns | str
    tokens: dict[str, str] | None = None
    loaded: bool = False


def _grade_row(
    name: str,
    path: Path | None,
    problem: str,
    request: GradingRequest,
    standbys: StandbyPool[ChildProcess] | None = None,
    running: _Running | None = None,
    behaviour: bool = True,
    analysis: similarity.Analysis | None = None,
) -> _Graded:
    """One row: the submission graded through a ``GradingSession``, as ``rlsys grade``
    grades it, so a link, a FIFO or a file gone missing scores 0 with the same reason.
    ``running``: where the grading is listed while it runs (a batch stops it there).
    ``behaviour``: the graded child then answers the behaviour probes (instructor-only,
    docs/similarity.md).  The graded bytes are then read in a bounded child of their own
    (``similarity.Analysis``): never the path again, never in this process."""
    from pytest_rlsys.grading.grader import SubmissionPathError
    from pytest_rlsys.session import GradingSession

    running = running or _Running()
    if path is None:
        return _Graded(BatchRow(name, "not_graded", message=problem), f"not read: {problem}")
    began = time.monotonic()
    try:
        session = GradingSession.open(
            dataclasses.replace(request, submission=path, outputs={}),
            standbys.take() if standbys is not None else None,
            row=True,
        )
        grader = session.grader
        assert grader is not None  # the request names a submission
        tokens = None
        with running.listed(grader):
            try:
                grader.run_all(keep=behaviour)
                tokens = _probe(grader) if behaviour else None
            finally:
                report = session.finish()
    except Exception as exc:  # one broken submission never stops the batch
        message = (
            str(exc) if isinstance(exc, SubmissionPathError) else f"{type(exc).__name__}: {exc}"
        )
        seconds = round(time.monotonic() - began, 3)
        return _Graded(BatchRow(name, "not_graded", seconds=seconds, message=message), message)
    status: Status = "not_loaded" if report.load_error else "graded"
    data = grader.data if grader.refusal is None else None
    seconds = round(time.monotonic() - began, 3)  # as every writer shows it
    row = BatchRow(name, status, report, seconds=seconds, data=data)
    if data is None:
        return _Graded(row, f"not read: {report.load_error}")
    analysis = analysis or similarity.Analysis(request.limits)
    with running.listed(analysis):
        signs = analysis.run(data)
    return _Graded(row, signs, tokens, report.load_error is None)


def _probe(grader: Grader) -> dict[str, str] | None:
    """The file's tokens on the behaviour probes, in its graded child (None: not measured)."""
    from pytest_rlsys.similarity.probes import probe

    try:  # the grade is already made: nothing here may cost the row
        return probe(grader)
    except Exception:
        return None


class _Stoppable(Protocol):
    def stop(self) -> None: ...


class _Running:
    """What a batch's workers are running (gradings, analyses).  An interrupted batch
    stops them and cancels the submissions not begun: otherwise its pool, as it shuts
    down, waited for every running call to reach its time limit and then graded the rest
    of the class (one Ctrl-C took 78 s for a class of 8; a second one ended only that
    wait, and Python's wait for the workers at exit went on)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: dict[int, _Stoppable] = {}  # by id(): a Grader is not hashable
        self.stopped = False

    @contextlib.contextmanager
    def listed(self, item: _Stoppable) -> Iterator[None]:
        with self.lock:
            self.items[id(item)] = item
            stopped = self.stopped
        if stopped:  # begun while the batch was being stopped
            item.stop()
        try:
            yield
        finally:
            with self.lock:
                self.items.pop(id(item), None)

    def stop(self) -> None:
        with self.lock:
            self.stopped = True
            items = list(self.items.values())
        for item in items:
            item.stop()


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


def _outputs(args: argparse.Namespace, submissions: list[Found], prog: str) -> set[str]:
    """This run's output paths; a usage error when one is a submission of the batch
    (``--csv DIR/alice.py`` once overwrote alice's graded file with the CSV)."""
    outputs = {os.path.abspath(out): flag for flag, out in _output_flags(args) if out}
    for _, path, _ in submissions:
        flag = next((f for out, f in outputs.items() if path and _same(out, path)), None)
        if flag is not None:
            raise UsageError(
                f"argument {flag}: {path} is a submission of this batch; writing there "
                "would overwrite it: give a path outside the class folder",
                prog,
            )
    return set(outputs)


def _same(out: str, path: Path) -> bool:
    """``out`` names the file ``path`` (links not followed: a learner's link to an output
    path must not stop the batch)."""
    if os.path.abspath(path) == out:
        return True
    try:
        mine, theirs = os.lstat(out), os.lstat(path)
    except OSError:
        return False
    return (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino)


def _output_flags(args: argparse.Namespace) -> list[tuple[str, str | None]]:
    return [("--csv", args.csv), ("--json", args.json), ("--html", args.html)]


def _grade_class(
    submissions: list[Found],
    request: GradingRequest,
    jobs: int,
    progress: _Progress,
    behaviour: bool,
) -> list[_Graded]:
    """Every submission graded, ``jobs`` at once; Ctrl-C stops what runs at once."""
    from pytest_rlsys.grading.ahead import StandbyPool
    from pytest_rlsys.grading.isolation import ChildProcess
    from pytest_rlsys.resources import FUNCTIONS

    standbys = StandbyPool(lambda: ChildProcess.on_standby(list(FUNCTIONS), request.limits))
    running = _Running()
    # One analysis child per worker, serving file after file (each under its own limits).
    mine, analyses = threading.local(), []

    def work(name: str, path: Path | None, problem: str) -> _Graded:
        if not hasattr(mine, "analysis"):
            mine.analysis = similarity.Analysis(request.limits)
            analyses.append(mine.analysis)
        progress.started(name)
        try:
            return _grade_row(
                name, path, problem, request, standbys, running, behaviour, mine.analysis
            )
        finally:
            progress.finished(name)

    graded: list[_Graded] = []
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        pending: set[Future[_Graded]] = {pool.submit(work, *found) for found in submissions}
        while pending:
            done, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
            graded += [future.result() for future in done]
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
        for analysis in analyses:
            analysis.close()
        progress.close()
    return graded


def _compare(graded: list[_Graded]) -> None:
    """Each row's similarity record (instructor-only, never part of a score): a pure
    decision over integer sets made in the children; no fault of it costs the grades."""
    names = [g.row.name for g in graded]
    try:
        found = similarity.compare_signs(
            {g.row.name: g.signs for g in graded},
            {g.row.name: g.tokens for g in graded},
            {g.row.name: g.loaded for g in graded},
        )
    except Exception as exc:
        found = dict.fromkeys(names, similarity.not_compared(f"the comparison failed ({exc!r})"))
    for g in graded:
        g.row.similarity = found[g.row.name]


def batch(args: argparse.Namespace) -> ExitCode:
    from pytest_rlsys.grading.private import check_folder_private
    from pytest_rlsys.outputs.class_report import write_class_report

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
    found = find_submissions(folder)
    outputs = _outputs(args, found, prog)
    # This run's own outputs, written into the class folder by an earlier run, are no one's
    # (by path, links not followed: a learner's link to an output is still a learner's row).
    submissions = [f for f in found if not (f[2] and os.path.abspath(folder / f[0]) in outputs)]
    if all(problem == NOT_PY.format(name=name) for name, _, problem in submissions):
        raise UsageError(f"no submissions (.py files) in {folder}", prog)
    progress = _Progress(len(submissions), not args.no_progress)
    jobs = args.jobs or os.cpu_count() or 2
    graded = _grade_class(submissions, request, jobs, progress, not args.no_behaviour)
    _compare(graded)
    result = BatchResult(request.seed, request.lang, sorted((g.row for g in graded), key=_name))
    try:
        if args.csv:
            write_atomic(Path(args.csv), csv_text(result))
        if args.json:
            write_atomic(Path(args.json), json_text(result))
        if args.html:
            write_class_report(Path(args.html), result)
    except OSError as exc:
        raise CommandError(f"could not write the grades: {exc}", prog) from None
    if not args.csv and not args.json and not args.html:
        say(csv_text(result), end="")
    counts = result.counts()
    say(
        f"{prog}: {len(result.rows)} submissions: {counts['graded']} graded, "
        f"{counts['not_loaded']} did not load (score 0), {counts['not_graded']} "
        f"not graded (see the message column), seed {result.seed}",
        err=True,
    )
    return ExitCode.OK


def _name(row: BatchRow) -> str:
    return row.name


# -- similarity -----------------------------------------------------------------------------


def similarity_note(args: argparse.Namespace) -> ExitCode:
    """``rlsys similarity FILE...``: each file's instructor-only note against the
    references (its behaviour probed in a grader's child, its code read in a bounded
    child); it changes no score."""
    from pytest_rlsys.similarity.note import instructor_note

    request = _request(args, "similarity")
    for name in args.files:
        say(clean(instructor_note(Path(name), request.limits), newlines=False))
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
