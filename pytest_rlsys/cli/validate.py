"""``rlsys validate FILE...`` and ``rlsys result FILE``: two commands of the one parser
(``cli.build_parser``; options in ``settings.OPTIONS``), exit codes from ``ExitCode``.

``validate`` checks the schema only: it prints each problem as
``FILE::$.json.path: message`` (the check-jsonschema convention) and exits 0
only when every file is valid. ``result`` grades a file: it prints the check
table, its errors and notes, and exits with one of ``RESULT_EXIT_CODES`` so CI
can gate on it. Neither prints a traceback for bad input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_rlsys.cli.base import ExitCode, UsageError
from pytest_rlsys.escaping import clean, say
from pytest_rlsys.outputs.text import dump_json
from pytest_rlsys.safe_read import missing_inputs

if TYPE_CHECKING:  # imported when a command runs, not when any rlsys parser is built
    from pytest_rlsys.resultfile.grade import ResultGrade
    from pytest_rlsys.resultfile.loading import LoadedResult

__all__ = [
    "RESULT_EXIT_CODES",
    "RESULT_MEANINGS",
    "format_grade",
    "render_json",
    "render_text",
    "result",
    "validate",
]

MIB = 1024 * 1024
LIMIT_OPTION = "--max-mib"  # the option that raises the size limit (validate, result, ledger)


def max_bytes_of(args: argparse.Namespace) -> int:
    """--max-mib as bytes (at least one); unset: the reader's own limit."""
    from pytest_rlsys.resultfile.loading import DEFAULT_MAX_BYTES

    mib = getattr(args, "max_mib", None)
    return DEFAULT_MAX_BYTES if mib is None else max(1, int(mib * MIB))


def _file_record(loaded: LoadedResult) -> dict[str, Any]:
    return {
        "file": loaded.path,
        "valid": loaded.ok,
        "schema_version": loaded.schema_version,
        "schema_id": loaded.schema_id,
        "stage": loaded.stage,
        "sha256": loaded.sha256,
        "errors": [problem.as_dict() for problem in loaded.problems],
    }


def render_json(results: Sequence[LoadedResult]) -> str:
    """``{"valid": bool, "files": [{"file", "valid", ..., "errors": [{"path", "message"}]}]}``,
    every error listed (``--max-errors`` shortens the text output only)."""
    payload = {
        "valid": all(result.ok for result in results),
        "files": [_file_record(result) for result in results],
    }
    return dump_json(payload)  # every string through the one escaping rule


def _printable(text: str) -> str:
    # A JSON path quotes the file's own keys, which may hold newlines or terminal
    # escapes: one problem stays one line, and inert (the one escaping rule).
    return clean(text, newlines=False)


def render_text(results: Sequence[LoadedResult], max_errors: int = 100) -> str:
    """One ``FILE::$.json.path: message`` line per problem (check-jsonschema's form)."""
    lines: list[str] = []
    for result in results:
        name = _printable(result.path)
        if result.ok:
            lines.append(f"{name}: ok ({result.schema_version})")
            continue
        problems = result.problems
        shown = problems if max_errors <= 0 else problems[:max_errors]
        lines += [f"{name}::{_printable(p.path)}: {_printable(p.message)}" for p in shown]
        hidden = len(problems) - len(shown)
        if hidden > 0:
            lines.append(f"{name}: {hidden} more errors not shown (use --max-errors 0 to see all)")
    bad = sum(not result.ok for result in results)
    lines.append(
        f"{len(results) - bad} of {len(results)} file{'s' if len(results) != 1 else ''} valid"
    )
    return "\n".join(lines) + "\n"


def validate(args: argparse.Namespace) -> ExitCode:
    """``rlsys validate FILE...``: OK when every file is valid, else FAILED."""
    from pytest_rlsys.resultfile.loading import load_result_file  # never the checks

    missing = missing_inputs(args.files)
    if missing:
        raise UsageError("; ".join(missing), "rlsys validate")
    results = [
        load_result_file(name, max_bytes=max_bytes_of(args), limit_option=LIMIT_OPTION)
        for name in args.files
    ]
    # The file's own keys and values reach these lines: the one escaping rule, at the
    # edge, for every line either command prints.
    say(render_json(results) if args.json else render_text(results, args.max_errors), end="")
    sys.stdout.flush()  # a closed pipe is met here, inside the one BrokenPipe path
    return ExitCode.OK if all(r.ok for r in results) else ExitCode.FAILED


# rlsys result's exit codes, by ResultGrade.verdict, and what each means for it.
RESULT_EXIT_CODES: dict[str, ExitCode] = {
    "passed": ExitCode.OK,
    "contradicted": ExitCode.CONTRADICTED,
    "not_gradable": ExitCode.NOT_GRADABLE,
    "failed": ExitCode.HONEST_FAILURE,
    "unverified": ExitCode.UNVERIFIED,
}
RESULT_MEANINGS: dict[ExitCode, str] = {
    ExitCode.OK: "every check passes on the evidence and the file claims exactly that",
    ExitCode.CONTRADICTED: "the evidence (or --artefacts) contradicts at least one claimed "
    "check: a check claimed passed that fails, or claimed failed that passes",
    ExitCode.USAGE: "usage error (bad option, FILE not there, --artefacts not a folder)",
    ExitCode.NOT_GRADABLE: "not gradable: the file is there but cannot be read, is not "
    "strict JSON, "
    "names an unknown schema_version or does not match its schema",
    ExitCode.HONEST_FAILURE: "an honest record of a failed run: every claim matches the "
    "evidence, but some checks fail",
    ExitCode.UNVERIFIED: "unverified: nothing is contradicted, but an artefact a claim needs "
    "is absent or unreadable under --artefacts (missing evidence, not a refutation; the "
    "message names the file, the folder looked in and what to pass)",
}


def format_grade(grade: ResultGrade) -> str:
    """The text report of ``rlsys result``."""
    lines = [f"gpu_result: {grade.path}"]
    if not grade.gradable:
        # One reason, said once; the per-check lines would repeat it eight times.
        lines.append(f"  not gradable: 0/{grade.max_score:g}; errors:")
        lines += [f"  {grade.path}::{error}" for error in grade.errors]
        lines.append("  fix them (check with 'rlsys validate FILE') and grade it again")
        return "\n".join(lines) + "\n"
    width = max(len(case.id) for case in grade.cases)
    for case in grade.cases:
        lines.append(
            f"  {case.id:<{width}}  {case.status:<6}  {case.score:g}/{case.max_score:g}  "
            f"{case.message}"
        )
    passed = sum(case.status == "passed" for case in grade.cases)
    lines.append(
        f"  total {grade.score:g}/{grade.max_score:g} ({passed} of {len(grade.cases)} "
        "checks passed)"
    )
    if grade.notes:
        lines.append("notes:")
        lines += [f"  - {note}" for note in grade.notes]
    verdict = grade.verdict.replace("_", " ")
    if grade.verdict == "unverified":  # not a lie: say so where the verdict is read
        verdict += " (no claim is contradicted; an artefact named above is missing)"
    lines.append(f"verdict: {verdict}")
    return "\n".join(lines) + "\n"


def result(args: argparse.Namespace) -> ExitCode:
    """``rlsys result FILE``: the exit code from ``RESULT_EXIT_CODES``."""
    from pytest_rlsys.grading.rubric import DEFAULT_PER_CHECK
    from pytest_rlsys.resultfile.artefacts import ARTEFACT_LAYOUT
    from pytest_rlsys.resultfile.grade import grade_result_file

    missing = missing_inputs([args.file])
    if missing:
        raise UsageError(missing[0], "rlsys result")
    if args.artefacts is not None and not Path(args.artefacts).is_dir():
        raise UsageError(
            f"argument --artefacts: {args.artefacts}: not a folder (expected {ARTEFACT_LAYOUT})",
            "rlsys result",
        )
    points = DEFAULT_PER_CHECK if args.points is None else args.points
    grade = grade_result_file(
        args.file,
        points,
        max_bytes=max_bytes_of(args),
        artefacts=args.artefacts,
        limit_option=LIMIT_OPTION,
    )
    if args.json:
        say(dump_json(grade.as_dict()), end="")
    else:
        say(format_grade(grade), end="")
    sys.stdout.flush()
    return RESULT_EXIT_CODES[grade.verdict]
