"""The project's own score document (schemas/rlsys-score.v1.json)."""

from __future__ import annotations

from pytest_rlsys.grading.scoring import ScoreReport
from pytest_rlsys.outputs.registry import RenderOptions
from pytest_rlsys.outputs.text import dump_json

__all__ = ["render"]


def render(report: ScoreReport, options: RenderOptions) -> str:
    return dump_json(report.to_json())
