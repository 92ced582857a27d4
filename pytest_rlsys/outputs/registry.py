"""The output table: each file a grading run can write, by name, with the module that
renders it; ``render`` picks the renderer from it (the options are ``settings.OPTIONS``).

A renderer module is imported only when its file is written.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from pytest_rlsys.grading.scoring import OUTPUT_KINDS, OutputKind, RenderOptions, ScoreReport

__all__ = ["MODULES", "RenderOptions", "Renderer", "render", "renderer"]

Renderer = Callable[[ScoreReport, RenderOptions], str]

# Each output's module (``pytest_rlsys.outputs.<module>.render(report, options) -> str``),
# and who reads its file, where that reader's rules are written.
MODULES: dict[OutputKind, str] = {
    "report": "scorejson",  # schemas/rlsys-score.v1.json
    "gradescope": "gradescope",  # https://gradescope-autograders.readthedocs.io/en/latest/specs/
    # https://prairielearn.readthedocs.io/en/latest/externalGrading/#grading-results
    "prairielearn": "prairielearn",
    "junit": "junit",  # pytest's testing/example_scripts/junit-10.xsd
}
assert tuple(MODULES) == OUTPUT_KINDS  # one entry per declared kind, in the same order


def renderer(kind: str) -> Renderer:
    """The renderer of output ``kind``; ValueError naming the known kinds otherwise."""
    module = MODULES.get(kind)  # type: ignore[call-overload]
    if module is None:
        raise ValueError(f"unknown output kind {kind!r} (expected one of {OUTPUT_KINDS})")
    function: Renderer = importlib.import_module(f"pytest_rlsys.outputs.{module}").render
    return function


def render(kind: str, report: ScoreReport, options: RenderOptions | None = None) -> str:
    """The text of output ``kind`` for ``report``; never raises on the report's content."""
    return renderer(kind)(report, options or RenderOptions())
