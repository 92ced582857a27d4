"""The behaviour sign's calibration (docs/similarity.md, "The behaviour sign"): the shipped
references' tokens are today's, no independent correct solution behaves as a reference,
every disguised copy does (the three held-out set 3 lost to code and sentences too: worth a
look, since behaviour alone never flags), and a hostile submission gets its own tokens
without taking the batch down."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from benchmarks.birthmark_calibration import tally, weigh
from pytest_rlsys import similarity
from pytest_rlsys.cli import main
from pytest_rlsys.grading.outcomes import Limits
from pytest_rlsys.resources import solution_path
from pytest_rlsys.similarity import birthmark
from pytest_rlsys.similarity import note as similarity_note
from pytest_rlsys.similarity.probes import run_file

CORPORA = Path(__file__).parent
SET = CORPORA / "similarity"
LEARNER = CORPORA / "learner_corpus"
CHAPTER = LEARNER / "ok_chapter_reference.py"
EXAMPLE = CORPORA.parent.parent / "examples" / "learner_example.py"
EXAMPLE_BUG = "busiest = [max(fabrics, key=fabrics.get)] if fabrics else []"
EXAMPLE_FIX = "busiest = sorted(f for f, v in fabrics.items() if v == critical)"
# Written by authors who knew the references (the detector's own two, the README's example):
# they keep every trait of the chapter's the probes read, and are the highest by far.
KNEW_THE_REFERENCE = {"dataclass_style.py", "loops_and_helpers.py", "learner_example.py"}


def _independent(tmp_path: Path) -> list[Path]:
    fixed = tmp_path / "learner_example.py"  # its one planted bug (ties lost) fixed
    text = EXAMPLE.read_text("utf-8")
    assert EXAMPLE_BUG in text
    fixed.write_text(text.replace(EXAMPLE_BUG, EXAMPLE_FIX), "utf-8")
    return [
        *sorted((SET / "independent").glob("*.py")),
        *sorted(SET.glob("cleanroom*/independent/*.py")),
        LEARNER / "correct.py",
        *sorted(p for p in LEARNER.glob("ok_*.py") if p != CHAPTER),
        fixed,
    ]


def _shares(paths: list[Path]) -> dict[str, float]:
    out: dict[str, float] = {}
    for path in paths:
        tokens = run_file(path)
        assert tokens is not None, path
        share = birthmark.behaviour(tokens)
        assert share is not None, path
        out[f"{path.parent.parent.name}/{path.name}"] = share
    return out


@pytest.mark.slow
def test_the_shipped_tokens_and_weights_are_the_references_and_the_corpus_s(
    tmp_path: Path,
) -> None:
    # After a change of probes: python benchmarks/birthmark_calibration.py --write
    ours, chapter = (run_file(p, chosen=birthmark.CANDIDATES) for p in (solution_path(), CHAPTER))
    assert ours is not None and chapter is not None
    others = [run_file(p, chosen=birthmark.CANDIDATES) or {} for p in _independent(tmp_path)]
    shipped = birthmark.reference_tokens()
    rounded = [
        {name: (token, round(weight, 4)) for name, (token, weight) in ref.items()}
        for ref in (weigh(ours, others), weigh(chapter, others))
    ]
    assert [dict(ref) for ref in shipped] == rounded
    # The classmates' tally (birthmark.alike) is the same independent set's, counted.
    total, seen = birthmark.independent_tally()
    assert (total, {k: dict(v) for k, v in seen.items()}) == tally(others)


@pytest.mark.slow
def test_the_calibration_figures_are_the_docs_s(tmp_path: Path) -> None:
    # docs/similarity.md's behaviour table: per set, independent work's highest agreement,
    # the copies' lowest; a change of probes or weights updates both.
    independent = _shares(_independent(tmp_path))
    copies = _shares([*sorted((SET / "copies").glob("*.py")), *sorted(SET.glob("*/copies/*.py"))])
    partial = _shares(sorted(SET.glob("*/partial/*.py")))
    assert max(independent.values()) < birthmark.THRESHOLD <= min(copies.values())
    assert round(max(independent.values()), 3) == 0.865
    assert {n.split("/")[1] for n, s in independent.items() if s > 0.7} == KNEW_THE_REFERENCE
    assert round(max(s for n, s in independent.items() if "cleanroom" in n), 3) == 0.215
    assert round(min(copies.values()), 3) == 0.896  # cleanroom3/copy4_reordered_loops.py
    for missed in ("copy3_inlined_no_temps.py", "copy6_mix_30min.py", "copy7_copy_of_copy6.py"):
        assert copies[f"cleanroom3/{missed}"] >= birthmark.THRESHOLD
    assert len(copies) == 40 and len(independent) == 28
    assert max(partial.values()) < birthmark.THRESHOLD
    assert round(max(partial.values()), 3) == 0.519


@pytest.mark.slow
def test_the_copies_only_behaviour_sees_are_worth_a_look_not_flagged() -> None:
    # docs/similarity.md, "The rule": set 3's three misses (code 0.17 - 0.38, no sentence)
    # behave as the chapter does, as honest work that knew the reference can: listed apart.
    for name in ("copy3_inlined_no_temps.py", "copy6_mix_30min.py", "copy7_copy_of_copy6.py"):
        path = SET / "cleanroom3" / "copies" / name
        found = similarity.compare_class(
            {name: path.read_text("utf-8")}, probed={name: run_file(path)}
        )[name]
        assert found.behaviour is not None and found.behaviour >= birthmark.THRESHOLD, name
        assert not found.flagged and found.look_by == ("behaviour",), (name, found)
        assert found.closest == similarity.REFERENCE and found.sentences == 0


HOSTILE = textwrap.dedent(
    """
    import os, sys, time

    def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
        print("raise:ValueError " * 1000)
        time.sleep(60)

    def transfer_ledger(edges, placement):
        sys.stdout.write("x" * 100000)
        os._exit(1)

    def evaluate_topology(*args, **kwargs):
        if kwargs:
            return object()
        if args[4] is not True:
            return "raise:ValueError"
        raise SystemExit(0)
    """
)


@pytest.mark.slow
def test_a_hostile_submission_gets_its_own_tokens(tmp_path: Path) -> None:
    limits = Limits(call_timeout_s=0.5)
    (tmp_path / "hostile.py").write_text(HOSTILE, "utf-8")
    tokens = run_file(tmp_path / "hostile.py", limits)
    assert tokens is not None and tokens.keys() == {p.name for p in birthmark.probes()}
    by_func = {p.name: p.func for p in birthmark.probes()}
    sleeping = [tokens[n] for n, f in by_func.items() if f == "pipeline_capacity"]
    assert sleeping[:2] == ["timeout", "timeout"] and set(sleeping[2:]) == {birthmark.NOT_RUN}
    assert {tokens[n] for n, f in by_func.items() if f == "transfer_ledger"} == {"crashed"}
    gate = {tokens[n] for n, f in by_func.items() if f == "evaluate_topology"}
    assert gate <= {"raise:other"} | {t for t in gate if t.startswith("value:")}
    assert "raise:ValueError" not in gate  # spelled as a value: a value's token
    share = birthmark.behaviour(tokens)
    assert share is not None and share < 0.2


@pytest.mark.slow
def test_a_hostile_submission_cannot_take_the_batch_down(tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    subs.mkdir(mode=0o700)
    (subs / "hostile.py").write_text(HOSTILE, "utf-8")
    (subs / "copy.py").write_text(
        (SET / "cleanroom3" / "copies" / "copy7_copy_of_copy6.py").read_text("utf-8")
    )
    (subs / "broken.py").write_text("def pipeline_capacity(:\n", "utf-8")
    out = tmp_path / "grades.json"
    argv = ["batch", str(subs), "--seed", "1", "--json", str(out), "--no-progress"]
    assert main([*argv, "--timeout", "0.5"]) == 0
    rows = {r["submission"]: r for r in json.loads(out.read_text())["submissions"]}
    assert rows["hostile.py"]["similarity"]["behaviour"] < 0.2
    assert not rows["hostile.py"]["similarity"]["flagged"]
    assert rows["broken.py"]["similarity"]["behaviour"] is None  # did not load: not measured
    # The copy only behaviour sees: worth a look, never flagged by behaviour alone.
    copied = rows["copy.py"]["similarity"]
    assert not copied["flagged"] and copied["closest"] == similarity.REFERENCE
    assert copied["worth_a_look"] == ["behaviour"]
    assert copied["behaviour"] >= birthmark.THRESHOLD > copied["score"]
    assert rows["copy.py"]["score"] == 100.0  # nothing here changes a score
    # --no-behaviour: not measured, and nothing makes the copy worth a look
    assert main([*argv, "--no-behaviour"]) == 0
    rows = {r["submission"]: r for r in json.loads(out.read_text())["submissions"]}
    assert rows["copy.py"]["similarity"]["behaviour"] is None
    assert rows["copy.py"]["similarity"]["worth_a_look"] == []


@pytest.mark.slow
def test_probes_that_fail_cost_neither_the_row_nor_the_log_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_rlsys.similarity import probes

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the probes broke")

    monkeypatch.setattr(probes, "probe", broken)
    subs = tmp_path / "subs"
    subs.mkdir(mode=0o700)
    (subs / "copy.py").write_text(CHAPTER.read_text("utf-8"), "utf-8")
    out = tmp_path / "grades.json"
    assert main(["batch", str(subs), "--seed", "1", "--json", str(out), "--no-progress"]) == 0
    (row,) = json.loads(out.read_text())["submissions"]
    assert row["status"] == "graded" and row["score"] == 100.0
    assert row["similarity"]["behaviour"] is None and row["similarity"]["flagged"]
    note = similarity_note.instructor_note(subs / "copy.py")
    assert "(a near copy" in note and "probes" not in note.split("(")[0]


@pytest.mark.slow
def test_a_probe_run_stopped_from_another_thread_ends_at_once(tmp_path: Path) -> None:
    # An interrupted batch (Ctrl-C) stops its probe runs: the call under way is killed and
    # none begins after it.  Before, the run went on to the call's time limit and a second
    # Ctrl-C met Python's wait for the worker (a traceback).
    import threading
    import time

    from pytest_rlsys.grading.grader import open_grader
    from pytest_rlsys.grading.request import GradingRequest
    from pytest_rlsys.similarity.probes import probe

    source = (
        "def pipeline_capacity(*a, **k):\n    while True:\n        pass\n"
        "def transfer_ledger(*a, **k):\n    while True:\n        pass\n"
    )
    path = tmp_path / "s.py"
    path.write_text(source, "utf-8")
    grader = open_grader(GradingRequest(submission=path, limits=Limits(call_timeout_s=60)))
    got: list[object] = []
    worker = threading.Thread(target=lambda: got.append(probe(grader)))
    worker.start()
    deadline = time.monotonic() + 30
    while grader.child is None or grader.child.proc is None:  # the first call is under way
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.5)
    stopped = time.monotonic()
    grader.stop()
    worker.join(20)
    grader.close()
    assert not worker.is_alive() and got == [None]
    assert time.monotonic() - stopped < 20  # not the call's 60 s
