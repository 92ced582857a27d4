"""The output table: each file a grading run can write, by name, with its help text, its
consumer and the module that renders it.  Option declarations read this table (one
``--rlsys-<kind>`` per entry); ``render`` picks the renderer from it.

Importing this module is cheap (no renderer, no grading code): the plugin reads the table
in every pytest run, and a renderer module is imported only when its file is written.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from pytest_rlsys.grading.scoring import (
    OUTPUT_KINDS,
    PLATFORM_VISIBILITIES,
    OutputKind,
    PlatformVisibility,
    RenderOptions,
    ScoreReport,
)

__all__ = [
    "OUTPUTS",
    "Output",
    "RenderOptions",
    "Renderer",
    "parse_hidden_visibility",
    "render",
    "renderer",
]

Renderer = Callable[[ScoreReport, RenderOptions], str]


@dataclass(frozen=True)
class Output:
    kind: OutputKind
    help: str
    consumer: str  # who reads the file, and where its rules are written
    module: str  # pytest_rlsys.outputs.<module>.render(report, options) -> str


OUTPUTS: dict[OutputKind, Output] = {
    "report": Output(
        "report",
        "Write the score report JSON (schema rlsys-score/1) to this path.",
        "schemas/rlsys-score.v1.json",
        "scorejson",
    ),
    "gradescope": Output(
        "gradescope",
        "Also write a Gradescope results.json to this path.",
        "https://gradescope-autograders.readthedocs.io/en/latest/specs/",
        "gradescope",
    ),
    "prairielearn": Output(
        "prairielearn",
        "Also write a PrairieLearn external-grader results.json to this path.",
        "https://prairielearn.readthedocs.io/en/latest/externalGrading/#grading-results",
        "prairielearn",
    ),
    "junit": Output(
        "junit",
        "Also write JUnit XML (points as suite properties) to this path.",
        "pytest's testing/example_scripts/junit-10.xsd",
        "junit",
    ),
    "classroom": Output(
        "classroom",
        "Also write the GitHub Classroom runner result JSON (the payload that "
        "autograding-grading-reporter decodes from a step output, before base64) to this path.",
        "https://github.com/education/autograding-grading-reporter",
        "classroom",
    ),
}
assert tuple(OUTPUTS) == OUTPUT_KINDS  # one entry per declared kind, in the same order


def renderer(kind: str) -> Renderer:
    """The renderer of output ``kind``; ValueError naming the known kinds otherwise."""
    entry = OUTPUTS.get(kind)  # type: ignore[call-overload]
    if entry is None:
        raise ValueError(f"unknown output kind {kind!r} (expected one of {OUTPUT_KINDS})")
    module = importlib.import_module(f"pytest_rlsys.outputs.{entry.module}")
    function: Renderer = module.render
    return function


def render(kind: str, report: ScoreReport, options: RenderOptions | None = None) -> str:
    """The text of output ``kind`` for ``report``; never raises on the report's content."""
    return renderer(kind)(report, options or RenderOptions())


def parse_hidden_visibility(text: str) -> PlatformVisibility:
    for visibility in PLATFORM_VISIBILITIES:
        if text == visibility:
            return visibility
    raise ValueError(f"must be one of {', '.join(PLATFORM_VISIBILITIES)}")
