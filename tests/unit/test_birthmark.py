"""The behaviour sign's pure part (pytest_rlsys/similarity/birthmark.py): outcomes as tokens, the
shipped references, the weighted score and how it flags (docs/similarity.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.birthmark_calibration import independent_text, tally, weigh
from pytest_rlsys import similarity
from pytest_rlsys.grading.outcomes import CallOutcome
from pytest_rlsys.similarity import birthmark, decide


def _returned(value: object) -> str:
    # As the parent receives it: decoded from the child's JSON frame.
    return birthmark.token(CallOutcome("returned", value=json.loads(json.dumps(value))))


def test_a_returned_value_keeps_its_types() -> None:
    assert _returned(1) != _returned(1.0) != _returned(True)
    assert _returned("1") != _returned(1)
    assert _returned([0, 0.0]) != _returned([0.0, 0.0])


def test_a_returned_value_ignores_rounding_and_dict_order() -> None:
    assert _returned({"a": 0.1 + 0.2, "b": 1}) == _returned({"b": 1, "a": 0.3})
    assert _returned({"a": 1.0}) != _returned({"a": 1.00001})


def test_an_exception_is_only_its_family() -> None:
    value_error = CallOutcome("raised", exc_type="ValueError", value_error=True, message="x")
    subclass = CallOutcome("raised", exc_type="MyError", value_error=True, message="other text")
    key_error = CallOutcome("raised", exc_type="KeyError", message="x")
    todo = CallOutcome("raised", exc_type="NotImplementedError", not_implemented=True)
    assert birthmark.token(value_error) == birthmark.token(subclass) == "raise:ValueError"
    assert birthmark.token(key_error) == "raise:other"
    assert birthmark.token(todo) == "raise:NotImplementedError"


@pytest.mark.parametrize(
    "kind, expected",
    [
        ("timeout", "timeout"),
        ("crashed", "crashed"),
        ("protocol", "crashed"),
        ("missing", "not_run"),
    ],
)
def test_a_call_that_did_not_answer_has_its_own_token(kind: str, expected: str) -> None:
    assert birthmark.token(CallOutcome(kind)) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize("spelled", ["raise:ValueError", "raise:other", "timeout", "crashed"])
def test_no_returned_value_can_spell_another_token(spelled: str) -> None:
    assert _returned(spelled).startswith("value:")
    assert _returned(spelled) != spelled


def test_a_non_plain_value_is_one_token_whatever_its_class_says() -> None:
    one = {birthmark.NONPLAIN_MARK: "Decimal"}
    other = {birthmark.NONPLAIN_MARK: "raise:ValueError"}
    assert _returned(one) == _returned(other) != _returned({"x": 1})


REF = {"p1": ("value:aa", 1.0), "p2": ("raise:other", 0.5), "p3": ("raise:ValueError", 0.0)}


def test_agreement_is_weighted_and_skips_weightless_probes() -> None:
    assert birthmark.agreement({"p1": "value:aa", "p2": "x", "p3": "x"}, REF) == pytest.approx(
        1.0 / 1.5
    )
    assert birthmark.agreement({"p2": "raise:other"}, REF) == 1.0  # only p2 measured
    assert birthmark.agreement({"p3": "raise:ValueError"}, REF) is None
    assert birthmark.agreement({}, REF) is None


def test_behaviour_is_the_closer_reference() -> None:
    other = {"p1": ("value:bb", 1.0)}
    mine = {"p1": "value:bb", "p2": "x"}
    assert birthmark.behaviour(mine, (REF, other)) == 1.0
    assert birthmark.behaviour({}, (REF, other)) is None


def test_weigh_counts_the_independent_solutions_that_differ() -> None:
    weighed = weigh({"p": "a", "q": "b"}, [{"p": "a", "q": "c"}, {"p": "z", "q": "c"}])
    assert weighed == {"p": ("a", 0.5), "q": ("b", 1.0)}


def test_the_references_file_round_trips_and_holds_no_code() -> None:
    ours, chapter = birthmark.reference_tokens()
    assert ours.keys() == chapter.keys() == {p.name for p in birthmark.CANDIDATES}
    text = birthmark.REFERENCES_FILE.read_text("utf-8")
    assert "def " not in text and "float(" not in text
    probes = birthmark.probes()
    assert 30 <= len(probes) <= 80
    assert all(max(ours[p.name][1], chapter[p.name][1]) > 0 for p in probes)


def test_every_probe_s_arguments_are_plain_data() -> None:
    for probe in birthmark.CANDIDATES:
        json.dumps([probe.args, dict(probe.kwargs)])  # NaN is allowed: the child reads it
    assert len({p.name for p in birthmark.CANDIDATES}) == len(birthmark.CANDIDATES)


def test_behaviour_at_the_threshold_alone_makes_a_file_worth_a_look_never_flagged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = "def pipeline_capacity(a, b, c):\n    return {}\n"
    # Each file's share stands in its tokens here: the score itself is tested below.
    monkeypatch.setattr(decide, "behaviour", lambda tokens: float(tokens["share"]))
    found = similarity.compare_class(
        {"a.py": source, "b.py": source + "\n"},
        probed={
            "a.py": {"share": str(birthmark.THRESHOLD)},
            "b.py": {"share": str(birthmark.THRESHOLD - 0.01)},
        },
    )
    assert not found["a.py"].flagged and found["a.py"].closest == similarity.REFERENCE
    assert found["a.py"].look_by == ("behaviour",)
    assert found["a.py"].as_dict()["behaviour"] == round(birthmark.THRESHOLD, 3)
    assert found["a.py"].csv_cells()["similarity_behaviour"] == round(birthmark.THRESHOLD, 3)
    assert found["a.py"].csv_cells()["similarity_worth_a_look"] == "behaviour"
    assert "behaviour" not in found["b.py"].look_by


def test_behaviour_not_measured_is_null_and_an_empty_cell() -> None:
    source = "def pipeline_capacity(a, b, c):\n    return {}\n"
    found = similarity.compare_class({"a.py": source})["a.py"]
    assert found.as_dict()["behaviour"] is None
    assert found.csv_cells()["similarity_behaviour"] == ""


def test_two_files_behave_alike_by_the_tokens_few_independent_solutions_share() -> None:
    counts = birthmark.independent_tally()
    assert counts[0] >= 20  # the calibration set's independent solutions, as shipped
    common = {name: max(seen, key=seen.__getitem__) for name, seen in counts[1].items()}
    rare = {name: "value:" + "0" * 16 for name in common}  # a token no independent one had
    assert birthmark.alike(rare, dict(rare)) == 1.0
    # Both doing what most independent work does weighs little either way...
    assert birthmark.alike(common, dict(common)) == 1.0
    # ...one rare choice each, not shared, weighs most: the two are not one program.
    half = dict(common, **dict(list(rare.items())[::2]))
    share = birthmark.alike(half, common)
    assert share is not None and share < birthmark.THRESHOLD
    assert birthmark.alike({}, common) is None and birthmark.alike(common, {}) is None


def test_the_independent_tally_reads_back_what_it_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = tally([{"p": "raise:other", "q": "value:1"}, {"p": "raise:other"}])
    assert counts == (2, {"p": {"raise:other": 2}, "q": {"value:1": 1}})
    path = tmp_path / "tally.txt"
    path.write_text(independent_text(counts), "utf-8")
    monkeypatch.setattr(birthmark, "INDEPENDENT_FILE", path)
    birthmark.independent_tally.cache_clear()
    try:
        assert birthmark.independent_tally() == counts
        path.write_text("not a tally\n", "utf-8")
        birthmark.independent_tally.cache_clear()
        assert birthmark.independent_tally() == (0, {})
        assert birthmark.alike({"p": "raise:other"}, {"p": "raise:other"}) is None
    finally:
        birthmark.independent_tally.cache_clear()
