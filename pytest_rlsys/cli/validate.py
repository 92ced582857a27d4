"""``rlsys validate FILE...`` and ``rlsys result FILE``.

``validate`` checks the schema only: it prints each problem as
``FILE::$.json.path: message`` (the check-jsonschema convention) and exits 0
only when every file is valid. ``result`` grades a file: it prints the check
table, its errors and notes, and exits with one of ``RESULT_EXIT_CODES`` so CI
can gate on it. Neither prints a traceback for bad input.

Public API::

    main(argv) -> int          # rlsys validate
    render_text(results, max_errors) / render_json(results) -> str; RENDERERS
    grade_main(argv) -> int    # rlsys result (exit codes: RESULT_EXIT_CODES)
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pytest_rlsys.resultfile.loading import DEFAULT_MAX_BYTES, LoadedResult, load_result_file

if TYPE_CHECKING:  # `rlsys validate` never grades, so it does not import the checks
    from pytest_rlsys.resultfile.grade import ResultGrade

_MIB = 1024 * 1024


def _positive_mib(text: str) -> int:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return max(1, int(value * _MIB))


def _add_max_mib(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-mib",
        type=_positive_mib,
        default=DEFAULT_MAX_BYTES,
        metavar="MIB",
        dest="max_bytes",
        help=f"refuse files larger than this (default {DEFAULT_MAX_BYTES // _MIB} MiB)",
    )


def _validate_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rlsys validate",
        description="Validate pt-verl-closure result files against the schema their "
        "schema_version names. This checks the schema only (structure, types, ranges): "
        "it does not re-derive the checks from the evidence; 'rlsys result FILE' does.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--json", action="store_true", help="print a JSON summary instead")
    parser.add_argument(
        "--max-errors",
        type=int,
        default=100,
        metavar="N",
        help="show at most N errors per file in text output (0 = all; default 100)",
    )
    _add_max_mib(parser)
    return parser


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


def render_json(results: Sequence[LoadedResult], max_errors: int = 0) -> str:
    """``{"valid": bool, "files": [{"file", "valid", ..., "errors": [{"path", "message"}]}]}``.

    Every error is listed (``max_errors`` only shortens the text output).
    """
    del max_errors
    payload = {
        "valid": all(result.ok for result in results),
        "files": [_file_record(result) for result in results],
    }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def _printable(text: str) -> str:
    # A JSON path quotes the file's own keys, which may hold newlines or
    # terminal escapes: one problem stays one line, and inert.
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


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


# Output name -> renderer; the only places that turn problems into text.
RENDERERS: dict[str, Callable[[Sequence[LoadedResult], int], str]] = {
    "text": render_text,
    "json": render_json,
}


def _write(stream: TextIO, text: str) -> None:
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:  # `rlsys validate ... | head` must not print a traceback
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """``rlsys validate FILE...``: 0 when every file is valid, 1 otherwise."""
    args = _validate_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    results = [load_result_file(name, max_bytes=args.max_bytes) for name in args.files]
    render = RENDERERS["json" if args.json else "text"]
    _write(sys.stdout, render(results, args.max_errors))
    return 0 if all(result.ok for result in results) else 1


# rlsys result's exit codes, by ResultGrade.verdict (argparse's usage error is 2).
RESULT_EXIT_CODES: dict[str, int] = {
    "passed": 0,
    "contradicted": 1,
    "not_gradable": 3,
    "failed": 4,
}
_EXIT_HELP = """exit codes:
  0  every check passes on the evidence and the file claims exactly that
  1  the evidence (or --artefacts) contradicts at least one claimed check:
     a check claimed passed that fails, or claimed failed that passes
  2  usage error (bad option, --artefacts not a folder)
  3  not gradable: the file cannot be read, is not strict JSON, names an
     unknown schema_version or does not match its schema
  4  an honest record of a failed run: every claim matches the evidence,
     but some checks fail"""


def _grade_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rlsys result",
        description="Grade a pt-verl-closure result file: re-derive each of its eight checks "
        "from the evidence in the file (sampling coverage, phase order, resume calls, "
        "physical bounds, coherence) and compare with what the file claims. No file can "
        "prove itself: with --artefacts, the run's raw artefacts are checked too.",
        epilog=_EXIT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", metavar="FILE")
    parser.add_argument(
        "--points", type=float, default=5.0, help="points per check (default 5; 8 checks)"
    )
    parser.add_argument("--json", action="store_true", help="print the grade as JSON")
    parser.add_argument(
        "--artefacts",
        metavar="DIR",
        help="the run's raw artefacts: re-hash DIR/<group>/adapters/<initial|updated>/"
        "adapter_model.safetensors and compare the file's samples with "
        "DIR/<group>/samples.jsonl",
    )
    _add_max_mib(parser)
    return parser


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
    lines.append(f"verdict: {grade.verdict.replace('_', ' ')}")
    return "\n".join(lines) + "\n"


def grade_main(argv: Sequence[str] | None = None) -> int:
    """``rlsys result FILE``: exit code from ``RESULT_EXIT_CODES`` (2 for usage)."""
    parser = _grade_parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if not args.points > 0 or args.points != args.points or args.points == float("inf"):
        parser.error("--points must be a positive finite number")
    from pytest_rlsys.resultfile.artefacts import ARTEFACT_LAYOUT
    from pytest_rlsys.resultfile.grade import grade_result_file

    if args.artefacts is not None and not Path(args.artefacts).is_dir():
        parser.error(f"--artefacts {args.artefacts}: not a folder (expected {ARTEFACT_LAYOUT})")
    grade = grade_result_file(
        args.file, args.points, max_bytes=args.max_bytes, artefacts=args.artefacts
    )
    if args.json:
        _write(sys.stdout, json.dumps(grade.as_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        _write(sys.stdout, format_grade(grade))
    return RESULT_EXIT_CODES[grade.verdict]
