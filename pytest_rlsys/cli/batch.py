"""``rlsys batch DIR``: every submission of a class folder graded through a
``GradingSession`` each, in parallel, into one typed ``BatchResult`` (outputs/batch.py)
that the CSV, the JSON and the class page render; the similarity report's signs read on
the way (the probes in the graded child, the code in a bounded child)."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import itertools
import os
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pytest_rlsys import ctrl_c, similarity
from pytest_rlsys.cli.base import CommandError, ExitCode, UsageError
from pytest_rlsys.cli.commands import _request
from pytest_rlsys.escaping import clean, roster_name, say
from pytest_rlsys.messages import Msg
from pytest_rlsys.outputs.batch import BatchResult, BatchRow, Status, csv_text, json_text
from pytest_rlsys.outputs.files import write_atomic
from pytest_rlsys.outputs.wording import load_error_text
from pytest_rlsys.resources import exercise_path

if TYPE_CHECKING:
    from pytest_rlsys.grading.ahead import StandbyPool
    from pytest_rlsys.grading.grader import Grader
    from pytest_rlsys.grading.isolation import ChildProcess
    from pytest_rlsys.grading.request import GradingRequest
    from pytest_rlsys.similarity import FileSigns

__all__ = ["NOT_PY", "batch", "find_submissions"]


NOT_PY = Msg(
    "{name} is not a .py file, so it was not graded "
    "(a submission is one .py file or a folder holding one)",
    "{name} 不是 .py 文件，因此未评分（一份提交是一个 .py 文件，或装有一个 .py 文件的文件夹）",
)
# The batch's other words for the instructor, in the batch's language (--lang).
WORDS = {
    "no_folder": Msg(
        "{folder}: no such folder; give the class folder: one .py file (or one folder "
        "holding one) per learner",
        "{folder}：文件夹不存在；请给出班级文件夹：每位学习者一个 .py 文件（或一个装有它的文件夹）",
    ),
    "not_folder": Msg(
        "{folder} is not a folder; give the class folder (to grade one file: rlsys grade FILE)",
        "{folder} 不是文件夹；请给出班级文件夹（评一个文件：rlsys grade FILE）",
    ),
    "groupings": Msg(
        "{name}/ was not read: over {n} folders in its groupings",
        "{name}/ 未读取：其分组中的文件夹超过 {n} 个",
    ),
    "nested": Msg("{name}/ is nested over {n} folders deep", "{name}/ 嵌套超过 {n} 层文件夹"),
    "entries": Msg("{name}/ holds over {n} entries", "{name}/ 中的条目超过 {n} 个"),
    "expected": Msg(
        "expected one .py file in {name}/, or one named {file} among several, found {n}{listed}",
        "{name}/ 中应当只有一个 .py 文件，或在多个中有一个名为 {file}，实际找到 {n} 个{listed}",
    ),
    "listed": Msg(": {files}", "：{files}"),
    "other_files": Msg("; other files: {files}", "；其他文件：{files}"),
    "not_read": Msg("not read: {problem}", "未读取：{problem}"),
    "failed": Msg("the comparison failed ({exc})", "比较失败（{exc}）"),
    "slowest": Msg("slowest: {name} {s}s", "最慢：{name} {s} 秒"),
    "one_at_a_time": Msg(
        "{prog}: grading one submission at a time, not {jobs}: the fence here ({level}) does "
        "not hide /proc, through which two children running at once could pass data "
        "(Landlock or bubblewrap would)",
        "{prog}：逐份评分，而不是同时 {jobs} 份：此处的隔离（{level}）不隐藏 /proc，"
        "同时运行的两个子进程可以经由它传递数据（Landlock 或 bubblewrap 可以隐藏）",
    ),
    "summary": Msg(
        "{prog}: {n} submissions: {graded} graded, {not_loaded} did not load (score 0), "
        "{not_graded} not graded (see the message column), seed {seed}",
        "{prog}：{n} 份提交：{graded} 份已评分，{not_loaded} 份未能加载（0 分），"
        "{not_graded} 份未评分（见 message 列），种子 {seed}",
    ),
}


def _say(key: str, lang: str, **fields: object) -> str:
    return WORDS[key].fill(lang, {k: str(v) for k, v in fields.items()})


# (name, file or None, problem): one submission of a class folder.
Found = tuple[str, Path | None, str]


def find_submissions(folder: Path, lang: str = "en") -> list[Found]:
    """(name, file or None, problem) for each submission: a .py file, or a folder with one;
    each named as the roster shows it (escaping.roster_name).  A folder holding only
    folders is a grouping (a section of an LMS export), not a learner: the
    learners inside it are found at any depth, each named by its path below ``folder``
    ("Section A/Li Na").  Links are never followed, and the walk is bounded.  ``lang``:
    the language of the problems."""
    found: list[Found] = []
    pending: list[tuple[Path, str, int]] = [(folder, "", 0)]
    budget = [MAX_FOLDER_ENTRIES]
    while pending:
        current, prefix, depth = pending.pop()
        for entry in _entries(current):
            name = prefix + roster_name(entry.name)
            problem = _grouping(entry, name, depth + 1, budget, lang)
            if problem is None:
                pending.append((entry, f"{name}/", depth + 1))
                continue
            path, problem = (None, problem) if problem else _submission(entry, name, lang)
            found.append((name, path, problem))
    return found


def _entries(folder: Path, cap: int | None = None) -> list[Path]:
    """``folder``'s entries by name (at most ``cap`` read), less dot-names and Python's
    __pycache__ (no one's)."""
    try:
        with os.scandir(folder) as listed:
            names = [e.name for e in itertools.islice(listed, cap)]
    except OSError:
        return []
    return [folder / n for n in sorted(names) if not n.startswith(".") and n != "__pycache__"]


def _grouping(entry: Path, name: str, depth: int, budget: list[int], lang: str) -> str | None:
    """None when ``entry`` is a grouping folder (folders inside, no file: a link there is
    a row of its own, never followed, as in the class folder),
    '' when it is a submission (bounded by ``_python_files``), or why the walk stopped
    there (too deep or too big: the groupings' folders count against one ``budget``)."""
    if entry.is_symlink() or not entry.is_dir():
        return ""
    inside = _entries(entry, MAX_FOLDER_ENTRIES + 1)
    if not inside or any(p.name.endswith(".py") or _is_file(p) for p in inside):
        return ""  # a learner's folder (an empty one too: a row all the same)
    budget[0] -= len(inside)
    if budget[0] < 0:
        return _say("groupings", lang, name=name, n=MAX_FOLDER_ENTRIES)
    if depth > MAX_FOLDER_DEPTH:
        return _say("nested", lang, name=name, n=MAX_FOLDER_DEPTH)
    return None


def _is_file(path: Path) -> bool:
    return not path.is_symlink() and not path.is_dir()


def _submission(entry: Path, name: str, lang: str) -> tuple[Path | None, str]:
    """The file to grade for ``entry`` (shown as ``name``; or None) and the problem that
    stops it."""
    if entry.is_symlink() or not entry.is_dir():
        # Graded as `rlsys grade` grades it: a link is never followed (it could point
        # at the reference or a classmate's work) and a FIFO or device never read;
        # each scores 0 with the reason.
        if entry.suffix == ".py" or entry.is_dir():
            return entry, ""
        # a row all the same: a learner who handed in notes.txt must not vanish
        return None, NOT_PY.fill(lang, {"name": name})
    files, problem = _python_files(entry, lang)
    named = entry / exercise_path().name  # the kits' rule: the template's name first
    if problem:
        return None, problem
    if len(files) == 1:
        return files[0], ""
    if named in files:
        return named, ""
    shown = ", ".join(sorted(f.name for f in files)[:5])
    listed = _say("listed", lang, files=shown) if files else ""
    if not files:  # what was handed in instead (rlsys_ledger.py.txt), as the kits say
        others = [p.name for p in _entries(entry, MAX_FOLDER_ENTRIES) if _is_file(p)][:5]
        listed = _say("other_files", lang, files=", ".join(others)) if others else ""
    file, n = exercise_path().name, len(files)
    return None, _say("expected", lang, name=name, file=file, n=n, listed=listed)


# A submission folder is walked without recursion, to a bounded size: a folder 1,100
# levels deep once made os.walk raise RecursionError and no CSV was written for anyone.
# The class folder's groupings are walked within the same bounds.
MAX_FOLDER_ENTRIES = 10_000
MAX_FOLDER_DEPTH = 32


def _python_files(folder: Path, lang: str) -> tuple[list[Path], str]:
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
                return [], _say("entries", lang, name=folder.name, n=MAX_FOLDER_ENTRIES)
            if entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                if depth + 1 > MAX_FOLDER_DEPTH:
                    return [], _say("nested", lang, name=folder.name, n=MAX_FOLDER_DEPTH)
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
        unread = _say("not_read", request.lang, problem=problem)
        return _Graded(BatchRow(name, "not_graded", message=problem), unread)
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
            exc.said.text(request.lang)
            if isinstance(exc, SubmissionPathError)
            else f"{type(exc).__name__}: {exc}"
        )
        seconds = round(time.monotonic() - began, 3)
        return _Graded(BatchRow(name, "not_graded", seconds=seconds, message=message), message)
    status: Status = "not_loaded" if report.load_error else "graded"
    data = grader.data if grader.refusal is None else None
    seconds = round(time.monotonic() - began, 3)  # as every writer shows it
    # An empty file did not load (the grader's load error says the file is empty): 0 of
    # the maximum, as `rlsys grade` scores it; it is compared all the same (nothing).
    row = BatchRow(name, status, report, seconds=seconds, data=data)
    if data is None:
        unread = _say("not_read", request.lang, problem=load_error_text(report, request.lang))
        return _Graded(row, unread)
    analysis = analysis or similarity.Analysis(request.limits, request.lang)
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

    def __init__(self, total: int, enabled: bool, lang: str = "en") -> None:
        self.running: dict[str, float] = {}
        self.lang = lang
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
        seconds = f"{time.monotonic() - since:.0f}"
        return _say("slowest", self.lang, name=clean(name, newlines=False), s=seconds)

    def refresh(self) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(self.slowest(), refresh=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _outputs(args: argparse.Namespace, submissions: list[Found], prog: str) -> set[str]:
    """This run's output paths; a usage error when one is a submission of the batch
    (``--csv DIR/alice.py`` once overwrote alice's graded file with the CSV)."""
    given = [("--csv", args.csv), ("--json", args.json), ("--html", args.html)]
    outputs = {os.path.abspath(out): flag for flag, out in given if out}
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
            mine.analysis = similarity.Analysis(request.limits, request.lang)
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


def _compare(graded: list[_Graded], lang: str) -> None:
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
        failed = similarity.not_compared(_say("failed", lang, exc=repr(exc)))
        found = dict.fromkeys(names, failed)
    for g in graded:
        g.row.similarity = found[g.row.name]


def batch(args: argparse.Namespace) -> ExitCode:
    from pytest_rlsys.grading.private import check_folder_private
    from pytest_rlsys.outputs.class_report import class_report_html

    prog = "rlsys batch"
    folder = Path(args.folder)
    request = _request(args, "batch")
    if not os.path.lexists(folder):  # the one rule for a named input that is not there
        raise UsageError(_say("no_folder", request.lang, folder=folder), prog)
    if not folder.is_dir():
        raise UsageError(_say("not_folder", request.lang, folder=folder), prog)
    problem = check_folder_private(folder)
    if problem is not None:  # as root: children must not read their classmates' files
        raise UsageError(problem, prog)
    # One seed for the whole class, chosen once and written in every row.
    request = dataclasses.replace(request, seed=request.battery_seed)
    found = find_submissions(folder, request.lang)
    outputs = _outputs(args, found, prog)
    # This run's own outputs, written into the class folder by an earlier run, are no one's
    # (by path, links not followed: a learner's link to an output is still a learner's row).
    submissions = [f for f in found if not (f[2] and os.path.abspath(folder / f[0]) in outputs)]
    lang = request.lang
    if all(problem == NOT_PY.fill(lang, {"name": name}) for name, _, problem in submissions):
        raise UsageError(f"no submissions (.py files) in {folder}", prog)
    progress = _Progress(len(submissions), not args.no_progress, lang)
    jobs = _jobs(args.jobs or os.cpu_count() or 2, request, prog)
    graded = _grade_class(submissions, request, jobs, progress, not args.no_behaviour)
    _compare(graded, request.lang)
    rows = sorted((g.row for g in graded), key=lambda row: row.name)
    result = BatchResult(request.seed, request.lang, rows)
    # Each file is built first, then all are written with a Ctrl-C held: the files on the
    # disk are all this run's or all an earlier one's (a press while they are written is
    # raised once they are, exit 130).
    texts = [(args.csv, csv_text), (args.json, json_text), (args.html, class_report_html)]
    built = [(Path(path), render(result)) for path, render in texts if path]
    try:
        with ctrl_c.held():
            for path, text in built:
                write_atomic(path, text)
    except OSError as exc:
        raise CommandError(f"could not write the grades: {exc}", prog) from None
    if not args.csv and not args.json and not args.html:
        say(csv_text(result), end="")
    counts = result.counts()
    n, seed = len(result.rows), result.seed
    say(_say("summary", request.lang, prog=prog, n=n, seed=seed, **counts), err=True)
    return ExitCode.OK


def _jobs(jobs: int, request: GradingRequest, prog: str) -> int:
    """How many submissions are graded at once: ``jobs``, or one (said in one line) where
    the children's fence does not hide /proc from each other (docs/threat-model.md)."""
    from pytest_rlsys.grading import fence

    have = fence.for_limits(request.limits)
    if jobs > 1 and have.one_at_a_time:
        say(_say("one_at_a_time", request.lang, prog=prog, jobs=jobs, level=have.level), err=True)
        return 1
    return jobs
