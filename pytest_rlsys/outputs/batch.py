"""One batch result (``rlsys batch``) and its writers: the CSV, the JSON and the class page
(``class_report``) all render the same typed rows, as check-jsonschema's reporters render
one result.  Facts stay typed (``ScoreReport``, ``Similarity``) until a writer words them."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Any, Literal

from pytest_rlsys.escaping import csv_cell
from pytest_rlsys.grading.scoring import ScoreReport
from pytest_rlsys.outputs import batchline, scorejson
from pytest_rlsys.outputs.text import dump_json
from pytest_rlsys.similarity import CSV_COLUMNS, Similarity, not_compared

__all__ = ["CSV_FIELDS", "BatchResult", "BatchRow", "csv_text", "json_text"]

# graded: the file loaded and its cases ran; not_loaded: tried, it did not load (every case
# scores 0); not_graded: not tried (no single .py file, unreadable, an internal error).
Status = Literal["graded", "not_loaded", "not_graded"]
STATUSES: tuple[Status, ...] = ("graded", "not_loaded", "not_graded")
SECTIONS = ("todo1", "todo2", "todo3")
CSV_FIELDS = (
    "submission",
    "status",
    "score",
    "max_score",
    *SECTIONS,
    "cases_passed",
    "cases",
    "seed",
    "submission_sha256",
    "seconds",
    "message",
    *CSV_COLUMNS,
)


@dataclass
class BatchRow:
    """One submission of a batch.  ``data``: the bytes that were graded, the ones the
    similarity report compares (a path is never read again after grading)."""

    name: str
    status: Status
    report: ScoreReport | None = None
    similarity: Similarity = field(default_factory=lambda: not_compared("not read"))
    seconds: float | None = None
    message: str = ""
    data: bytes | None = field(default=None, repr=False)

    @property
    def scored(self) -> ScoreReport | None:
        """The report behind the row's score; none for a row not graded."""
        return self.report if self.status != "not_graded" else None

    def cells(self, seed: int | None, lang: str) -> dict[str, Any]:
        """The row's plain fields (the CSV's, the JSON's without the report)."""
        out: dict[str, Any] = {"submission": self.name, "seed": seed, "status": self.status}
        report = self.scored
        if report is not None:
            sections = report.sections()
            out |= {
                "score": report.score,
                "max_score": report.max_score,
                **{s: sections[s]["score"] for s in SECTIONS if s in sections},
                "cases_passed": sum(s["passed"] for s in sections.values()),
                "cases": len(report.cases),
            }
        if self.report is not None:
            out["submission_sha256"] = self.report.submission_sha256
        if self.seconds is not None:
            out["seconds"] = round(self.seconds, 3)
        out["message"] = self.message or (
            batchline.below_full_marks(report, lang) if report is not None else ""
        )
        return out


@dataclass
class BatchResult:
    """A whole batch: one seed and language for every row, rows sorted by name."""

    seed: int | None
    lang: str
    rows: list[BatchRow]

    def counts(self) -> dict[Status, int]:
        return {status: sum(r.status == status for r in self.rows) for status in STATUSES}


def csv_text(result: BatchResult) -> str:
    table = io.StringIO()
    writer = csv.DictWriter(table, fieldnames=CSV_FIELDS, extrasaction="ignore")
    writer.writeheader()
    for row in result.rows:
        cells = {**row.cells(result.seed, result.lang), **row.similarity.csv_cells()}
        writer.writerow({k: csv_cell(v) for k, v in cells.items()})
    return table.getvalue()


def json_text(result: BatchResult) -> str:
    rows = []
    for row in result.rows:
        doc = row.cells(result.seed, result.lang)
        if row.scored is not None:
            doc["report"] = scorejson.document(row.scored, result.lang)
        rows.append({**doc, "similarity": row.similarity.as_dict()})
    return dump_json({"seed": result.seed, "submissions": rows})
