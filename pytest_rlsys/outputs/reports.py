"""The render entry: the text of any output file of a grading run, by name (report,
gradescope, prairielearn, junit, classroom).  Each format has its own module, picked from
the table in ``registry``; the learner's terminal text is ``terminal``'s, the batch CSV's
message ``batchline``'s; files are written by ``files.write_atomic``."""

from __future__ import annotations

from pytest_rlsys.grading.scoring import ScoreReport
from pytest_rlsys.outputs import registry
from pytest_rlsys.outputs.registry import RenderOptions

__all__ = ["RenderOptions", "render"]


def render(
    kind: str, report: ScoreReport, lang: str = "en", options: RenderOptions | None = None
) -> str:
    """The text of output ``kind`` (report, gradescope, prairielearn, junit, classroom);
    the renderer comes from the output table (pytest_rlsys.outputs.registry.OUTPUTS)."""
    return registry.render(kind, report, options or RenderOptions(lang=lang))
