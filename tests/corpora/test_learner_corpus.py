"""The learner corpus (tests/corpora/learner_corpus/): single-mistake files written from the
template and the chapter only, by someone who never saw the battery (issue 23).

Each mutant must lose points at two seeds, and only in its own TODO; each file the
MANIFEST marks equivalent or a correct reading must keep full marks; no file's score may
move by more than 2 points over seeds (a few, and twenty in a slow test).  Every file is
graded once per seed in a session (``scores``), whichever checks ask for it; the plain
loop grades a sample (``SAMPLE``: the first two files of each TODO and kind) at the
battery's own seed only, ``--run-slow`` every file at every seed."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_rlsys.grading.battery import default_seed
from pytest_rlsys.grading.grader import grade_file
from tests.english import check_chinese

CORPUS = Path(__file__).parent / "learner_corpus"
# correct.py, the writer's own full solution that every mistake starts from, is not in
# the MANIFEST: it is graded as a correct reading.
MANIFEST: list[dict[str, Any]] = [
    *json.loads((CORPUS / "MANIFEST.json").read_text("utf-8")),
    {"file": "correct.py", "todo": 0, "kind": "correct", "equivalent": True, "mistake": "(none)"},
]
FULL = {"todo1": 30.0, "todo2": 35.0, "todo3": 35.0}
KILL_SEEDS = (default_seed(), 1)
_GROUPS: dict[tuple[str, str, bool], list[str]] = {}
for _entry in MANIFEST:
    _key = (str(_entry["todo"]), _entry["kind"], bool(_entry["equivalent"]))
    _GROUPS.setdefault(_key, []).append(_entry["file"])
# The plain loop's share: every TODO and kind of file stays in it, each whole grading
# (about 1 s) once; --run-slow grades the rest.
SAMPLE = frozenset(name for names in _GROUPS.values() for name in names[:2])


def _mutant(entry: dict[str, Any]) -> bool:
    return entry["kind"] == "mutant" and not entry["equivalent"]


Scores = Callable[[str, int], dict[str, float]]


def _grade(name: str, seed: int) -> dict[str, float]:
    report = grade_file(CORPUS / name, seed=seed)
    check_chinese(report)  # an honest mistake's feedback, as a zh learner reads it
    return {section: value["score"] for section, value in report.sections().items()}


@pytest.fixture(scope="session")
def scores() -> Scores:
    """The files x seeds matrix, each cell graded once however many checks read it."""
    return functools.cache(_grade)


def test_manifest_lists_every_file() -> None:
    assert {e["file"] for e in MANIFEST} == {p.name for p in CORPUS.glob("*.py")}
    assert sum(1 for e in MANIFEST if _mutant(e)) >= 30


@pytest.mark.parametrize(
    ("entry", "seed"),
    [
        pytest.param(
            entry,
            seed,
            marks=[] if seed == default_seed() and entry["file"] in SAMPLE else [pytest.mark.slow],
            id=f"{entry['file']}-{seed}",
        )
        for seed in KILL_SEEDS
        for entry in MANIFEST
    ],
)
def test_each_mistake_loses_points_in_its_own_todo_only(
    scores: Scores, entry: dict[str, Any], seed: int
) -> None:
    got = scores(entry["file"], seed)
    if not _mutant(entry):
        assert got == FULL, (entry["file"], seed, entry["mistake"])
        return
    own = f"todo{entry['todo']}"
    assert got[own] < FULL[own], (entry["file"], seed, entry["mistake"])
    others = {s: v for s, v in got.items() if s != own}
    assert others == {s: v for s, v in FULL.items() if s != own}, (entry["file"], seed)


def _spread(scores: Scores, seeds: range | tuple[int, ...]) -> dict[str, float]:
    spreads = {}
    for entry in MANIFEST:
        totals = [sum(scores(entry["file"], seed).values()) for seed in seeds]
        spreads[entry["file"]] = max(totals) - min(totals)
    return spreads


@pytest.mark.slow
def test_no_file_spreads_by_more_than_two_points_over_a_few_seeds(scores: Scores) -> None:
    spreads = _spread(scores, (1, 2, 3))
    assert max(spreads.values()) <= 2, {f: s for f, s in spreads.items() if s > 2}


@pytest.mark.slow
def test_no_file_spreads_by_more_than_two_points_over_twenty_seeds(scores: Scores) -> None:
    spreads = _spread(scores, range(20))
    assert max(spreads.values()) <= 2, {f: s for f, s in spreads.items() if s > 2}
