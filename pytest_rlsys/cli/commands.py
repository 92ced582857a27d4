"""One function per ``rlsys`` command (grade | batch | template | ledger | kit), each taking
the parsed arguments of :func:`pytest_rlsys.cli.build_parser` and returning an ExitCode.
Bad input is raised as UsageError / CommandError and reported in one place."""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from pytest_rlsys import settings
from pytest_rlsys.cli.base import CommandError, ExitCode, UsageError
from pytest_rlsys.escaping import clean, csv_cell
from pytest_rlsys.outputs import reports
from pytest_rlsys.outputs.text import dump_json
from pytest_rlsys.resources import exercise_path

__all__ = [
    "CSV_FIELDS",
    "batch",
    "check_outputs",
    "find_submissions",
    "grade",
    "kit",
    "ledger",
    "template",
]

GRADING_DIR = Path(__file__).resolve().parents[1] / "plugin" / "anchor"


def check_outputs(args: argparse.Namespace, command: str) -> None:
    """Every output path of ``command`` is usable before anything is graded.

    A folder given as a file is a usage error; a missing parent folder is an error (never
    created silently: a typo must not scatter grades into new folders).
    """
    prog = f"rlsys {command}"
    for option in settings.for_command(command):
        value = getattr(args, option.name, None)
        if not option.output or not value:
            continue
        path = Path(value)
        if path.is_dir():
            raise UsageError(
                f"argument {option.cli_flag}: {path} is a directory; give a file path", prog
            )
        if not path.parent.is_dir():
            raise CommandError(
                f"{option.cli_flag} {path}: folder {path.parent} does not exist; create it first",
                prog,
            )


# -- grade ----------------------------------------------------------------------------------


def grade(args: argparse.Namespace) -> ExitCode:
    """Grade one submission through pytest with the packaged config (user config ignored)."""
    import pytest

    check_outputs(args, "grade")
    here = Path.cwd()
    pytest_args = [
        "-c",
        str(GRADING_DIR / "pytest.ini"),
        "--rootdir",
        str(GRADING_DIR),
        "-p",
        "no:cacheprovider",
        "--noconftest",
        "-v" if args.verbose else "-q",
        "--rlsys-submission",
        str(here / args.submission),
    ]
    for option in settings.for_command("grade"):
        value = getattr(args, option.name)
        if option.pytest and value is not None:
            text = str(here / value) if option.parse is None else str(value)
            pytest_args += [option.pytest_flag, text]
    code = pytest.main(pytest_args)
    if code in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        return ExitCode.OK
    if code == pytest.ExitCode.USAGE_ERROR:
        return ExitCode.USAGE
    if code == pytest.ExitCode.INTERRUPTED:
        return ExitCode.INTERRUPTED
    return ExitCode.ERROR


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
)
# status: graded | not_loaded (tried; the file did not load, every case scores 0)
#         | not_graded (not tried: no single .py file, unreadable, internal error)


def find_submissions(folder: Path) -> list[tuple[str, Path | None, str]]:
    """(name, file or None, problem) for each submission: a .py file, or a folder with one."""
    found: list[tuple[str, Path | None, str]] = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_symlink():
            # Never followed: a link could point at the reference or a classmate's work.
            if entry.suffix == ".py" or entry.is_dir():
                found.append((entry.name, entry, ""))  # graded 0 with the reason
            continue
        if entry.suffix == ".py" and not entry.is_dir():
            # A FIFO, socket or device named *.py gets its row too: the grader refuses
            # it (score 0, with the reason), as it refuses it for `rlsys grade`.
            found.append((entry.name, entry, ""))
        elif entry.is_dir():
            files, problem = _python_files(entry)
            if problem:
                found.append((entry.name, None, problem))
            elif len(files) == 1:
                found.append((entry.name, files[0], ""))
            else:
                found.append(
                    (
                        entry.name,
                        None,
                        f"expected one .py file in {entry.name}/, found {len(files)}",
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


def _load_problem(grader: Any) -> str:
    """Why the submission did not load, or '' when it did."""
    if grader.decode_error:
        return str(grader.decode_error)
    child = grader.child
    load = getattr(child, "load", None) if child is not None else None
    if load is not None and not load.ok:
        return str(load.message)
    return ""


class _Standbys:
    """Children started ahead of the submissions that will use them (``ChildProcess
    .standby``): each grade takes one and starts the one the next grade will take, so a
    child's interpreter starts while the submission before it is graded."""

    def __init__(self, limits: Any) -> None:
        self.limits = limits
        self.lock = threading.Lock()
        self.ready: list[Any] = []

    def take(self) -> Any:
        from pytest_rlsys.grading.isolation import ChildProcess
        from pytest_rlsys.resources import FUNCTIONS

        with self.lock:
            child = self.ready.pop() if self.ready else None
        ahead = ChildProcess.on_standby(list(FUNCTIONS), self.limits)
        with self.lock:
            self.ready.append(ahead)
        return child

    def close(self) -> None:
        with self.lock:
            left, self.ready = self.ready, []
        for child in left:
            child.close()


def _grade_row(
    name: str,
    path: Path | None,
    problem: str,
    seed: int,
    limits: Any,
    rubric: Any,
    lang: str,
    standbys: _Standbys | None = None,
) -> dict[str, Any]:
    from pytest_rlsys.grading.grader import Grader, read_submission

    row: dict[str, Any] = {"submission": name, "seed": seed}
    if path is None:
        return {**row, "status": "not_graded", "message": problem}
    began = time.monotonic()
    standby = standbys.take() if standbys is not None else None
    try:
        grader = Grader(path, read_submission(path), seed, limits, rubric, lang, standby=standby)
        grader.run_all()
        report = grader.report()
    except Exception as exc:  # one broken submission never stops the batch
        if standby is not None:
            standby.close()  # not taken by a grader (closing twice is harmless)
        return {
            **row,
            "status": "not_graded",
            "message": f"{type(exc).__name__}: {exc}",
            "seconds": round(time.monotonic() - began, 3),
        }
    sections = report.sections()
    load_problem = _load_problem(grader)
    return {
        **row,
        "status": "not_loaded" if load_problem else "graded",
        "score": report.score,
        "max_score": report.max_score,
        **{s: sections[s]["score"] for s in ("todo1", "todo2", "todo3") if s in sections},
        "cases_passed": sum(s["passed"] for s in sections.values()),
        "cases": len(report.cases),
        "submission_sha256": report.submission_sha256,
        "seconds": round(time.monotonic() - began, 3),
        "message": load_problem,
        "report": report.to_json(),
    }


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
    from pytest_rlsys.grading.grader import random_seed
    from pytest_rlsys.grading.rubric import Rubric, RubricError, load_rubric
    from pytest_rlsys.messages import default_lang

    prog = "rlsys batch"
    folder = Path(args.folder)
    if not folder.is_dir():
        raise UsageError(f"{folder} is not a folder of submissions", prog)
    check_outputs(args, "batch")
    from pytest_rlsys.grading.private import check_folder_private

    problem = check_folder_private(folder)
    if problem is not None:  # as root: children must not read their classmates' files
        raise UsageError(problem, prog)
    try:
        rubric = load_rubric(Path(args.rubric)) if args.rubric else Rubric()
    except RubricError as exc:
        raise UsageError(f"argument --rubric: {exc}", prog) from None
    seed = args.seed if args.seed is not None else random_seed()
    lang = args.lang or default_lang()
    limits = settings.limits_from({name: getattr(args, name) for name in settings.LIMIT_SETTINGS})
    submissions = find_submissions(folder)
    if not submissions:
        raise UsageError(f"no submissions (.py files) in {folder}", prog)
    jobs = args.jobs or os.cpu_count() or 2
    progress = _Progress(len(submissions), not args.no_progress)

    standbys = _Standbys(limits)

    def work(name: str, path: Path | None, problem: str) -> dict[str, Any]:
        progress.started(name)
        try:
            return _grade_row(name, path, problem, seed, limits, rubric, lang, standbys)
        finally:
            progress.finished(name)

    rows: list[dict[str, Any]] = []
    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            pending: set[Future[dict[str, Any]]] = {
                pool.submit(work, name, path, problem) for name, path, problem in submissions
            }
            while pending:
                done, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
                rows += [future.result() for future in done]
                progress.refresh()
    finally:
        standbys.close()
        progress.close()
    rows.sort(key=lambda r: r["submission"])
    table = io.StringIO()
    writer = csv.DictWriter(table, fieldnames=CSV_FIELDS, extrasaction="ignore")
    writer.writeheader()
    writer.writerows({k: csv_cell(v) for k, v in row.items()} for row in rows)
    try:
        if args.csv:
            reports.write_atomic(Path(args.csv), table.getvalue())
        if args.json:
            reports.write_atomic(
                Path(args.json),
                json.dumps({"seed": seed, "submissions": rows}, ensure_ascii=False, indent=2)
                + "\n",
            )
        if args.html:
            from pytest_rlsys.outputs.class_report import write_class_report

            write_class_report(Path(args.html), rows, seed)
    except OSError as exc:
        raise CommandError(f"could not write the grades: {exc}", prog) from None
    if not args.csv and not args.json and not args.html:
        sys.stdout.write(table.getvalue())
    counts = {
        status: sum(r["status"] == status for r in rows)
        for status in ("graded", "not_loaded", "not_graded")
    }
    sys.stderr.write(
        f"{prog}: {len(rows)} submissions: {counts['graded']} graded, "
        f"{counts['not_loaded']} did not load (score 0), {counts['not_graded']} "
        f"not graded (see the message column), seed {seed}\n"
    )
    return ExitCode.OK


# -- template -------------------------------------------------------------------------------


def template(args: argparse.Namespace) -> ExitCode:
    prog = "rlsys template"
    text = exercise_path().read_text(encoding="utf-8")
    if not args.path:
        sys.stdout.write(text)
        return ExitCode.OK
    target = Path(args.path)
    if target.exists() and not args.force:
        raise UsageError(f"{target} exists; pass --force to overwrite it", prog)
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot write {target}: {exc.strerror}", prog) from None
    sys.stdout.write(f"wrote {target}; grade it with: pytest --rlsys-submission {target}\n")
    return ExitCode.OK


# -- ledger ---------------------------------------------------------------------------------


def ledger(args: argparse.Namespace) -> ExitCode:
    from pytest_rlsys.ledger import LedgerError, ledger_report, load_topology, render_text

    try:
        topology = load_topology(Path(args.topology))
        report = ledger_report(topology, Path(args.result) if args.result else None, args.group)
    except LedgerError as exc:
        raise UsageError(str(exc), "rlsys ledger") from None
    if args.json:
        sys.stdout.write(dump_json(report))
    else:
        sys.stdout.write(clean(render_text(report)))
    return ExitCode.OK


# -- kit ------------------------------------------------------------------------------------


def kit(args: argparse.Namespace) -> ExitCode:
    from pytest_rlsys.outputs.kits import KitError, write_kit

    prog = "rlsys kit"
    target = Path(args.dir)
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target} exists and is not a folder", prog)
    if target.is_dir() and any(target.iterdir()) and not args.force:
        raise UsageError(f"{target} is not empty; pass --force to write into it", prog)
    try:
        written = write_kit(args.platform, target, Path(args.wheel) if args.wheel else None)
    except KitError as exc:
        raise CommandError(str(exc), prog) from None
    for path in written:
        sys.stdout.write(f"{path}\n")
    return ExitCode.OK
