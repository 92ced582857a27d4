"""One grading request: everything a driver decided before anything is graded.

Both drivers build it in one place each (``settings.request_from_pytest`` for the plugin,
``settings.request_from_args`` for ``rlsys grade``/``batch``), with the same parsers, the
same defaults and the same output-path check, and hand it to ``grader.open_grader``, the
only way to open a grader.  So ``pytest --rlsys-submission``, ``rlsys grade`` and ``rlsys
batch`` cannot drift apart: a refused file, a seed, a rubric or a limit means the same in
all three.  The record is frozen; a batch makes one per submission with
``dataclasses.replace(request, submission=path)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pytest_rlsys.grading.outcomes import Limits
from pytest_rlsys.grading.rubric import Rubric
from pytest_rlsys.grading.scoring import RenderOptions

__all__ = ["GradingRequest"]


@dataclass(frozen=True)
class GradingRequest:
    """What to grade, how, and which files to write."""

    submission: Path | None = None  # the learner's .py file
    result: Path | None = None  # a verl closure result file (section gpu_result)
    # None: the battery's own seed (``battery_seed``).
    seed: int | None = None
    rubric: Rubric = field(default_factory=Rubric)
    limits: Limits = field(default_factory=Limits)
    # Output option name -> path, every one checked usable when the request was built.
    outputs: Mapping[str, Path] = field(default_factory=dict)
    render: RenderOptions = field(default_factory=RenderOptions)

    @property
    def battery_seed(self) -> int:
        """The seed graded with: the request's, else the battery's own, fixed by its version
        (the same file graded twice gets the same report).  The one place for the default."""
        from pytest_rlsys.grading import battery  # the battery only when grading

        return self.seed if self.seed is not None else battery.default_seed()

    @property
    def lang(self) -> str:
        """The language of learner feedback (one value: the render options')."""
        return self.render.lang
