"""The instructor-only note on one file (``rlsys similarity FILE``, the kits' instructor
log): the file opened as the grader opens it, probed in that grader's child
(``probes.probe``), its bytes read in a bounded child (``analyse.signs_of``) and compared
with the references.  It changes no score."""

from __future__ import annotations

from pathlib import Path

from pytest_rlsys.grading.grader import open_grader
from pytest_rlsys.grading.outcomes import Limits
from pytest_rlsys.grading.request import GradingRequest
from pytest_rlsys.similarity import probes
from pytest_rlsys.similarity.analyse import signs_of
from pytest_rlsys.similarity.birthmark import THRESHOLD as BEHAVES_AT
from pytest_rlsys.similarity.decide import MIN_SHARED_SENTENCES, Similarity, compare_signs
from pytest_rlsys.similarity.winnow import THRESHOLD

PREFIX = "rlsys similarity (instructors only): "


def judge(path: Path, limits: Limits | None = None) -> Similarity | None:
    """The file's verdict alone against the references; None if it cannot be read."""
    grader = open_grader(GradingRequest(submission=path, limits=limits or Limits()))
    try:
        if grader.refusal is not None:
            return None
        try:  # the note must come out whatever the probes meet
            tokens = probes.probe(grader)
        except Exception:
            tokens = None
    finally:
        grader.close()
    signs = {"submission": signs_of(grader.data, limits)}
    return compare_signs(signs, {"submission": tokens}, {"submission": tokens is not None})[
        "submission"
    ]


def instructor_note(path: Path, limits: Limits | None = None) -> str:
    """One line for a platform's instructor-only log."""
    found = judge(path, limits)
    if found is None:
        return PREFIX + "not compared (the file could not be read)"
    if found.not_compared:
        return PREFIX + f"not compared: {found.not_compared}"
    if found.hidden:
        return PREFIX + (
            "it runs code built at run time (it reaches exec, eval, compile or the like, "
            "or a function it gives is named nowhere in it, or its code cannot be read), "
            "so its code cannot all be compared: flagged, read it (it changes no score)"
        )
    if found.closest is None or found.score is None:
        return PREFIX + (
            "nothing of its own to compare (empty, the template untouched, or too little "
            "code; it changes no score)"
        )
    if found.flagged:
        verdict = f"a near copy, read it: flagged by {', '.join(found.flagged_by)}"
    elif found.look_by:  # behaviour alone is never a flag: docs/similarity.md
        verdict = f"not flagged, worth a look by {', '.join(found.look_by)}"
    else:
        verdict = "not flagged"
    said = (
        f" and holds {found.sentences} of its sentences word for word"
        if found.sentences >= MIN_SHARED_SENTENCES
        else ""
    )
    acts = found.behaviour
    acted = "" if acts is None else f", behaves as it on {acts:.2f} of the probes"
    return PREFIX + (
        f"shares {found.score:.2f} of its code with the reference{said}{acted} "
        f"({verdict}; flagged at {THRESHOLD:.2f} or at {MIN_SHARED_SENTENCES} sentences, "
        f"behaviour from {BEHAVES_AT:.2f} confirming them; it changes no score)"
    )
