"""``rlsys grade | batch | template | ledger``: the jobs that do not need pytest's CLI."""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from pytest_rlsys.outputs import reports
from pytest_rlsys.resources import exercise_path

GRADING_DIR = Path(__file__).resolve().parents[1] / "plugin" / "anchor"


class _Parser(argparse.ArgumentParser):
    """argparse that exits with 2 and one line, the way the rest of rlsys does."""

    def error(self, message: str) -> Any:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _add_limits(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", help="seed for the hidden cases (default: random, recorded)")
    parser.add_argument("--lang", choices=("zh", "en"), help="feedback language")
    parser.add_argument("--rubric", metavar="PATH", help="rubric file overriding points")
    parser.add_argument("--timeout", metavar="SECONDS", help="per-call wall-clock limit")
    parser.add_argument("--budget", metavar="SECONDS", help="whole-submission time budget")


# -- grade ----------------------------------------------------------------------------------


def grade_main(argv: Sequence[str]) -> int:
    """Grade one submission through pytest with the packaged config (user config ignored)."""
    parser = _Parser(prog="rlsys grade", description=(
        "Grade one submission with the packaged battery. Runs pytest with the package's own "
        "configuration, so the current folder's pytest.ini/conftest do not take part. "
        "Exit 0 when grading completed (whatever the score), 4 on a usage error."))
    parser.add_argument("submission", help="the learner's .py file")
    parser.add_argument("--result", metavar="FILE", help="also grade a closure result file")
    for name in ("report", "gradescope", "prairielearn", "junit", "classroom"):
        parser.add_argument(f"--{name}", metavar="PATH", help=f"write the {name} output here")
    _add_limits(parser)
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per case")
    args = parser.parse_args(argv)
    import pytest

    here = Path.cwd()
    pytest_args = ["-c", str(GRADING_DIR / "pytest.ini"), "--rootdir", str(GRADING_DIR),
                   "-p", "no:cacheprovider", "--noconftest", "-q" if not args.verbose else "-v",
                   "--rlsys-submission", str(here / args.submission)]
    for name in ("result", "report", "gradescope", "prairielearn", "junit", "classroom",
                 "rubric"):
        value = getattr(args, name)
        if value:
            pytest_args += [f"--rlsys-{name}", str(here / value)]
    for name in ("seed", "lang", "timeout", "budget"):
        value = getattr(args, name)
        if value:
            pytest_args += [f"--rlsys-{name}", str(value)]
    code = pytest.main(pytest_args)
    return 0 if code in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) else int(code)


# -- batch ----------------------------------------------------------------------------------

CSV_FIELDS = ("submission", "status", "score", "max_score", "todo1", "todo2", "todo3",
              "cases_passed", "cases", "seed", "submission_sha256", "seconds", "message")


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
        if entry.is_file() and entry.suffix == ".py":
            found.append((entry.name, entry, ""))
        elif entry.is_dir():
            files = sorted(Path(root) / name
                           for root, _, names in os.walk(entry)  # links not followed
                           for name in names
                           if name.endswith(".py") and not name.startswith("."))
            if len(files) == 1:
                found.append((entry.name, files[0], ""))
            else:
                found.append((entry.name, None, f"expected one .py file in {entry.name}/, "
                                                f"found {len(files)}"))
    return found


def _grade_row(name: str, path: Path | None, problem: str, seed: int, limits: Any,
               rubric: Any, lang: str) -> dict[str, Any]:
    from pytest_rlsys.grading.grader import grade_file

    row: dict[str, Any] = {"submission": name, "seed": seed}
    if path is None:
        return {**row, "status": "error", "message": problem}
    began = time.monotonic()
    try:
        report = grade_file(path, seed=seed, limits=limits, rubric=rubric, lang=lang)
    except Exception as exc:  # one broken submission never stops the batch
        return {**row, "status": "error", "message": f"{type(exc).__name__}: {exc}",
                "seconds": round(time.monotonic() - began, 3)}
    sections = report.sections()
    return {
        **row, "status": "graded", "score": report.score, "max_score": report.max_score,
        **{s: sections[s]["score"] for s in ("todo1", "todo2", "todo3") if s in sections},
        "cases_passed": sum(s["passed"] for s in sections.values()),
        "cases": len(report.cases), "submission_sha256": report.submission_sha256,
        "seconds": round(time.monotonic() - began, 3), "message": "",
        "report": report.to_json(),
    }


def batch_main(argv: Sequence[str]) -> int:
    from tqdm import tqdm

    from pytest_rlsys.grading.grader import random_seed
    from pytest_rlsys.grading.rubric import Rubric, RubricError, load_rubric
    from pytest_rlsys.messages import default_lang
    from pytest_rlsys.settings import SettingError, limits_from, resolve

    parser = _Parser(prog="rlsys batch", description=(
        "Grade every submission in a folder (each a .py file, or a subfolder holding one) in "
        "parallel, one row per submission. Every submission gets the same seed."))
    parser.add_argument("folder")
    parser.add_argument("--csv", metavar="PATH", help="write one row per submission (CSV)")
    parser.add_argument("--json", metavar="PATH", help="write rows plus full reports (JSON)")
    parser.add_argument("--html", metavar="PATH", help="write the class report (one "
                        "self-contained HTML page: score histograms, hidden categories most "
                        "often failed, submissions that did not load or timed out, slowest)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2,
                        help="submissions graded at once (default: CPU count)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_limits(parser)
    args = parser.parse_args(argv)
    folder = Path(args.folder)
    if not folder.is_dir():
        sys.stderr.write(f"rlsys batch: {folder} is not a folder of submissions\n")
        return 2
    from pytest_rlsys.grading.private import check_folder_private

    problem = check_folder_private(folder)
    if problem is not None:  # as root: children must not read their classmates' files
        sys.stderr.write(f"rlsys batch: {problem}\n")
        return 2
    if args.jobs < 1:
        sys.stderr.write("rlsys batch: --jobs must be at least 1\n")
        return 2
    try:
        values = {name: resolve(name, getattr(args, name), None)
                  for name in ("seed", "lang", "timeout", "budget")}
        rubric = load_rubric(Path(args.rubric)) if args.rubric else Rubric()
    except (SettingError, RubricError) as exc:
        sys.stderr.write(f"rlsys batch: {exc}\n")
        return 2
    seed = values["seed"] if values["seed"] is not None else random_seed()
    lang = values["lang"] or default_lang()
    limits = limits_from(values)
    submissions = find_submissions(folder)
    if not submissions:
        sys.stderr.write(f"rlsys batch: no submissions (.py files) in {folder}\n")
        return 2
    rows: list[dict[str, Any]] = []
    with ThreadPoolExecutor(max_workers=args.jobs) as pool, tqdm(
            total=len(submissions), unit="sub", disable=args.no_progress,
            file=sys.stderr) as bar:
        futures = [pool.submit(_grade_row, name, path, problem, seed, limits, rubric, lang)
                   for name, path, problem in submissions]
        for future in as_completed(futures):
            rows.append(future.result())
            bar.update(1)
    rows.sort(key=lambda r: r["submission"])
    table = io.StringIO()
    writer = csv.DictWriter(table, fieldnames=CSV_FIELDS, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    if args.csv:
        reports.write_atomic(Path(args.csv), table.getvalue())
    if args.json:
        reports.write_atomic(Path(args.json), json.dumps(
            {"seed": seed, "submissions": rows}, ensure_ascii=False, indent=2) + "\n")
    if args.html:
        from pytest_rlsys.outputs.class_report import write_class_report

        try:
            write_class_report(Path(args.html), rows, seed)
        except OSError as exc:
            sys.stderr.write(f"rlsys batch: cannot write {args.html}: {exc.strerror or exc}\n")
            return 2
    if not args.csv and not args.json:
        sys.stdout.write(table.getvalue())
    errors = sum(r["status"] != "graded" for r in rows)
    sys.stderr.write(f"rlsys batch: {len(rows)} submissions, {len(rows) - errors} graded, "
                     f"{errors} could not be graded, seed {seed}\n")
    return 0


# -- template -------------------------------------------------------------------------------


def template_main(argv: Sequence[str]) -> int:
    parser = _Parser(prog="rlsys template",
                     description="Write the learner template (TODO 1-3) to PATH or stdout.")
    parser.add_argument("path", nargs="?", help="where to write it (default: stdout)")
    parser.add_argument("--force", action="store_true", help="overwrite an existing file")
    args = parser.parse_args(argv)
    text = exercise_path().read_text(encoding="utf-8")
    if not args.path:
        sys.stdout.write(text)
        return 0
    target = Path(args.path)
    if target.exists() and not args.force:
        sys.stderr.write(f"rlsys template: {target} exists; pass --force to overwrite it\n")
        return 2
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        sys.stderr.write(f"rlsys template: cannot write {target}: {exc.strerror}\n")
        return 2
    sys.stdout.write(f"wrote {target}; grade it with: pytest --rlsys-submission {target}\n")
    return 0


# -- ledger ---------------------------------------------------------------------------------


def ledger_main(argv: Sequence[str]) -> int:
    from pytest_rlsys.ledger import LedgerError, ledger_report, load_topology, render_text

    parser = _Parser(prog="rlsys ledger", description=(
        "Capacity, transfer and admission report for a topology file (JSON, YAML or TOML), "
        "computed by the reference implementation."))
    parser.add_argument("topology")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--result", metavar="FILE", help=(
        "take stage rates from a closure result file: stages named in the topology's "
        "'stage_phases' get rate = 1 / measured phase duration"))
    parser.add_argument("--group", default="release", choices=("release", "retain"),
                        help="which group of the result file to read (default release)")
    args = parser.parse_args(argv)
    try:
        topology = load_topology(Path(args.topology))
        report = ledger_report(topology, Path(args.result) if args.result else None,
                               args.group)
    except LedgerError as exc:
        sys.stderr.write(f"rlsys ledger: {exc}\n")
        return 2
    if args.json:
        sys.stdout.write(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_text(report))
    return 0
