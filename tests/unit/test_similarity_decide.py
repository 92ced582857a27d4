"""The similarity decision (pytest_rlsys/similarity/decide.py) over per-file signs, each
sign's row of the table and what a file the probes could not judge may flag; the bounded
analysis child (analyse.py) and the rewrite's per-statement fallback (winnow.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_rlsys import similarity
from pytest_rlsys.grading.outcomes import Limits
from pytest_rlsys.similarity import FileSigns, birthmark, decide, winnow

CORPORA = Path(__file__).parent.parent / "corpora"
CHAPTER = CORPORA / "learner_corpus" / "ok_chapter_reference.py"
# Written by the detector's author, who knew the references: behaviour 0.865, code 0.29.
KNEW_THE_REFERENCE = CORPORA / "similarity" / "independent" / "loops_and_helpers.py"
# Two independent solutions in one style: 0.62 by code alone (docs/similarity.md).
SAME_STYLE = (
    CORPORA / "similarity" / "cleanroom" / "independent" / "ind1_loops_beginner.py",
    CORPORA / "similarity" / "cleanroom2" / "independent" / "ind1_beginner_loops.py",
)


def _signs(source: str, **changes: object) -> FileSigns:
    found = similarity.signs_in(source)
    return FileSigns(**{**found.__dict__, **changes})  # type: ignore[arg-type]


def test_a_classmate_the_probes_could_not_judge_is_held_to_the_code_only_line() -> None:
    texts = [path.read_text("utf-8") for path in SAME_STYLE]
    signs = {"a.py": _signs(texts[0]), "b.py": _signs(texts[1])}
    found = decide.compare_signs(signs)  # neither probed (--no-behaviour, did not load)
    assert found["a.py"].closest == "b.py"
    assert decide.THRESHOLD <= found["a.py"].score < decide.CONFIRMED_ABOVE  # type: ignore[operator]
    assert not found["a.py"].flagged and not found["b.py"].flagged
    assert found["a.py"].look_by == ("code",)  # over the line, unconfirmed: worth a look
    # Clear code evidence stands alone: the same file twice, neither probed.
    twice = decide.compare_signs({"a.py": signs["a.py"], "c.py": signs["a.py"]})
    assert twice["a.py"].flagged_by == ("code",) and twice["a.py"].closest == "c.py"
    assert twice["a.py"].look_by == ()  # flagged: not also "worth a look"


def test_each_sign_is_named_in_flagged_by() -> None:
    chapter = _signs(CHAPTER.read_text("utf-8"))
    found = decide.compare_signs({"c.py": chapter})["c.py"]
    assert found.flagged_by == ("code", "sentences") and found.closest == decide.REFERENCE
    said_only = _signs("x = 1\n", said=chapter.said)
    assert decide.compare_signs({"s.py": said_only})["s.py"].flagged_by == ("sentences",)
    runs = _signs("x = 1\n", runs=True)
    assert decide.compare_signs({"r.py": runs})["r.py"].flagged_by == ("hidden",)
    plain = decide.compare_signs({"p.py": _signs("x = 1\n")})["p.py"]
    assert plain.flagged_by == () and not plain.flagged
    assert plain.as_dict()["flagged_by"] == [] and plain.csv_cells()["similarity_flagged_by"] == ""


def test_an_honest_file_whose_only_sign_is_behaviour_is_worth_a_look_not_flagged() -> None:
    # An author who studied the reference and wrote their own code (0.29 on code, none of
    # its sentences) can do what it does wherever the template is silent: the trial's two
    # honest variants reached 0.897 and 0.90.  Here: the chapter's own tokens, behaviour 1.
    honest = _signs(KNEW_THE_REFERENCE.read_text("utf-8"))
    chapter = {name: token for name, (token, _) in birthmark.reference_tokens()[1].items()}
    found = decide.compare_signs({"h.py": honest}, {"h.py": chapter}, {"h.py": True})["h.py"]
    assert found.behaviour == 1.0 and found.sentences == 0
    assert found.score is not None and found.score < decide.THRESHOLD - decide.LOOK_BELOW
    assert not found.flagged and found.flagged_by == ()
    assert found.look_by == ("behaviour",) and found.closest == decide.REFERENCE
    assert found.as_dict()["worth_a_look"] == ["behaviour"] and not found.as_dict()["flagged"]
    assert found.csv_cells()["similarity_worth_a_look"] == "behaviour"
    # Behaviour still confirms text evidence: with three of the reference's sentences it
    # is named beside them.
    said = _signs(KNEW_THE_REFERENCE.read_text("utf-8"), said=_signs(CHAPTER.read_text()).said)
    both = decide.compare_signs({"s.py": said}, {"s.py": chapter}, {"s.py": True})["s.py"]
    assert both.flagged_by == ("sentences", "behaviour") and both.look_by == ()


def test_a_tie_for_the_closest_classmate_names_the_first_name_in_order() -> None:
    # The batch hands the files over in the order their grading finished: a tie must not
    # name whichever came first (two runs named different classmates).
    same = _signs(SAME_STYLE[0].read_text("utf-8"))
    for order in (["z.py", "b.py", "a.py"], ["a.py", "b.py", "z.py"]):
        found = decide.compare_signs(dict.fromkeys(order, same))
        assert {n: f.closest for n, f in found.items()} == {
            "a.py": "b.py",
            "b.py": "a.py",
            "z.py": "a.py",
        }


def test_a_file_that_loaded_but_cannot_be_read_here_is_hidden() -> None:
    # A parse window: the grader's child compiled it, the analysis cannot parse it.
    unread = _signs("def f(:\n", parsed=False)
    assert decide.compare_signs({"w.py": unread}, loaded={"w.py": True})["w.py"].hidden
    assert not decide.compare_signs({"w.py": unread}, loaded={"w.py": False})["w.py"].hidden


def test_a_file_with_a_reason_instead_of_signs_is_not_compared() -> None:
    found = decide.compare_signs({"x.py": "its analysis took over the 10 s limit"})["x.py"]
    assert found.score is None and not found.flagged
    assert found.csv_cells()["similarity_not_compared"] == "its analysis took over the 10 s limit"


def test_one_dead_line_past_the_recursion_limit_keeps_the_rest_canonical() -> None:
    text = CHAPTER.read_text("utf-8")
    dead = "\n\ndef _dead():\n    return " + "-" * 600 + "1\n"
    whole = winnow.fingerprints(text)
    padded = winnow.fingerprints(text + dead)
    assert whole <= padded  # each statement kept its canonical form; the dead one is raw
    assert decide.compare_signs({"p.py": _signs(text + dead)})["p.py"].score == 1.0


@pytest.mark.parametrize("limits", [Limits(load_timeout_s=0.001), Limits(address_space_mb=1)])
def test_the_analysis_child_is_bounded(limits: Limits) -> None:
    # Thirty copies: their syntax tree needs more memory than the interpreter's free
    # arenas hold at the cap (one copy could be parsed within them on some machines).
    found = similarity.signs_of(CHAPTER.read_bytes() * 30, limits)
    assert isinstance(found, str) and ("took over" in found or "ran out of" in found)
    assert isinstance(similarity.signs_of(CHAPTER.read_bytes()), FileSigns)


def test_a_file_is_never_failed_by_the_file_before_it_in_the_same_child() -> None:
    # One child serves file after file; if it dies between them (as a hostile file could
    # leave it), the next file is tried again in a fresh child, not reported as failed.
    analysis = similarity.Analysis()
    try:
        assert isinstance(analysis.run(b"x = 1\n"), FileSigns)
        assert analysis.proc is not None
        analysis.proc.kill()
        analysis.proc.wait()
        assert isinstance(analysis.run(CHAPTER.read_bytes()), FileSigns)
        assert analysis.served == 1  # the fresh child's first file
    finally:
        analysis.close()
