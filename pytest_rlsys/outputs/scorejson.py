"""The project's own score document (schemas/rlsys-score.v1.json)."""

from __future__ import annotations

import platform
from typing import Any

from pytest_rlsys import __version__
from pytest_rlsys.grading.scoring import SCORE_SCHEMA_ID, ScoreReport
from pytest_rlsys.outputs import wording
from pytest_rlsys.outputs.registry import RenderOptions
from pytest_rlsys.outputs.text import dump_json

__all__ = ["document", "render"]


def document(report: ScoreReport, lang: str = "en") -> dict[str, Any]:
    """The score document, its messages worded in ``lang``; its shape is published in
    schemas/rlsys-score.v1.json."""
    doc: dict[str, Any] = {
        "$schema": SCORE_SCHEMA_ID,
        "schema_version": "rlsys-score/1",
        "score": report.score,
        "max_score": report.max_score,
        "sections": {
            name: {
                "score": s["score"],
                "max_score": s["max_score"],
                "cases_passed": s["passed"],
                "cases": s["cases"],
                "not_implemented": s["not_implemented"] == s["cases"] > 0,
            }
            for name, s in report.sections().items()
        },
        "tests": [
            {
                "id": c.id,
                "section": c.section,
                "score": c.cents / 100,
                "max_score": c.max_cents / 100,
                "status": c.status,
                "visibility": c.visibility,
                "message": wording.message(c, lang),
                "category": wording.category(c, lang),
                **({"kind": c.kind} if c.kind else {}),
                **({"path": c.path} if c.path else {}),
                **(
                    {"call": c.call, "claim": c.claim, "expected": c.expected, "got": c.got}
                    if c.visibility == "visible" and c.call
                    else {}
                ),
            }
            for c in report.cases
        ],
        "ungraded_points": report.ungraded_cents / 100,
        "load_error": wording.load_error_text(report, lang) or None,
        "notes": [n.text(lang) for n in (*report.learner_notes, *report.notes)]
        + ([report.ran_as.text(lang)] if report.ran_as else []),
        "elapsed_s": round(report.elapsed_s, 3),
        "reproducibility": {
            "seed": report.seed,
            "package_version": __version__,
            "python_version": platform.python_version(),
            "battery_sha256": report.battery_sha256,
            "submission": report.submission,
            "submission_sha256": report.submission_sha256,
            "result_sha256": report.result_sha256,
            "rubric_sha256": report.rubric_sha256,
            "lang": lang,
        },
    }
    if report.fence is not None:
        doc["fence"] = report.fence
    if report.gpu_result is not None:
        doc["gpu_result"] = report.gpu_result
    return doc


def render(report: ScoreReport, options: RenderOptions) -> str:
    return dump_json(document(report, options.lang))
