"""The learner corpus (tests/corpora/learner_corpus/): single-mistake files written from the
template and the chapter only, by someone who never saw the battery (issue 23).

Each mutant must lose points at two seeds, and only in its own TODO; each file the
MANIFEST marks equivalent or a correct reading must keep full marks; no file's score may
move by more than 2 points over seeds (a few here, twenty in the slow test)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_rlsys.grading.battery import default_seed
from pytest_rlsys.grading.grader import grade_file

CORPUS = Path(__file__).parent / "learner_corpus"
# correct.py, the writer's own full solution that every mistake starts from, is not in
# the MANIFEST: it is graded as a correct reading.
MANIFEST: list[dict[str, Any]] = [
    *json.loads((CORPUS / "MANIFEST.json").read_text("utf-8")),
    {"file": "correct.py", "todo": 0, "kind": "correct", "equivalent": True, "mistake": "(none)"},
]
FULL = {"todo1": 30.0, "todo2": 35.0, "todo3": 35.0}
KILL_SEEDS = (default_seed(), 1)


def _mutant(entry: dict[str, Any]) -> bool:
    return entry["kind"] == "mutant" and not entry["equivalent"]


def _scores(name: str, seed: int) -> dict[str, float]:
    report = grade_file(CORPUS / name, seed=seed)
    return {section: value["score"] for section, value in report.sections().items()}


def test_manifest_lists_every_file() -> None:
    assert {e["file"] for e in MANIFEST} == {p.name for p in CORPUS.glob("*.py")}
    assert sum(1 for e in MANIFEST if _mutant(e)) >= 30


@pytest.mark.parametrize("entry", MANIFEST, ids=[e["file"] for e in MANIFEST])
def test_each_mistake_loses_points_in_its_own_todo_only(entry: dict[str, Any]) -> None:
    for seed in KILL_SEEDS:
        scores = _scores(entry["file"], seed)
        if not _mutant(entry):
            assert scores == FULL, (entry["file"], seed, entry["mistake"])
            continue
        own = f"todo{entry['todo']}"
        assert scores[own] < FULL[own], (entry["file"], seed, entry["mistake"])
        others = {s: v for s, v in scores.items() if s != own}
        assert others == {s: v for s, v in FULL.items() if s != own}, (entry["file"], seed)


def _spread(seeds: range | tuple[int, ...]) -> dict[str, float]:
    spreads = {}
    for entry in MANIFEST:
        totals = [sum(_scores(entry["file"], seed).values()) for seed in seeds]
        spreads[entry["file"]] = max(totals) - min(totals)
    return spreads


def test_no_file_spreads_by_more_than_two_points_over_a_few_seeds() -> None:
    spreads = _spread((2, 3, 4))
    assert max(spreads.values()) <= 2, {f: s for f, s in spreads.items() if s > 2}


@pytest.mark.slow
def test_no_file_spreads_by_more_than_two_points_over_twenty_seeds() -> None:
    spreads = _spread(range(20))
    assert max(spreads.values()) <= 2, {f: s for f, s in spreads.items() if s > 2}
