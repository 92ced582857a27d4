"""The behaviour probes (``birthmark.py``) as a step of the grader (``Grader.answer``): made in
the graded child after its cases, under its rules (fence, limits, call timeout, sealed
output, the timeouts per function, ``stop``), and reduced to ``birthmark.token`` each.
Bounded: none is made past ``BUDGET_S``.  Instructor-only; nothing here changes a score.
"""

from __future__ import annotations

from pathlib import Path

from pytest_rlsys.grading.grader import Grader, open_grader
from pytest_rlsys.grading.outcomes import Limits
from pytest_rlsys.grading.request import GradingRequest
from pytest_rlsys.similarity import birthmark

# A whole class's probes must not cost as much as its grading: about 60 calls of well under
# a millisecond each for a working file; this caps a file whose every call hangs.
BUDGET_S = 15.0


def probe(
    grader: Grader, chosen: tuple[birthmark.Probe, ...] | None = None
) -> dict[str, str] | None:
    """Each probe's token for the grader's submission; None when it did not load (or
    gives none of the functions): nothing measured."""
    made = birthmark.probes() if chosen is None else chosen
    outcomes = grader.answer([(p.func, p.args, p.kwargs) for p in made], BUDGET_S)
    if outcomes is None:
        return None
    return {p.name: birthmark.token(o) for p, o in zip(made, outcomes, strict=True)}


def run_file(
    path: Path, limits: Limits | None = None, chosen: tuple[birthmark.Probe, ...] | None = None
) -> dict[str, str] | None:
    """``probe`` on a file opened as the grader opens it, without grading it (the kits'
    instructor note, the calibration scripts); None if it cannot be read or load."""
    grader = open_grader(GradingRequest(submission=path, limits=limits or Limits()))
    try:
        return probe(grader, chosen)
    finally:
        grader.close()
