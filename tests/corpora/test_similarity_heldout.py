"""Held-out set 4 (tests/corpora/similarity_heldout4/, its README says how it was written):
a clean-room session that never saw the detector wrote 8 independent solutions, 10
disguised copies of the chapter's reference (7 of them heavy: every message rewritten and
the code restructured) and 3 one-TODO copies, before the behaviour sign existed.  It is kept
out of every calibration (the probes' weights and the thresholds never saw it), so these are
held-out figures (docs/similarity.md): code and sentences flag 3 / 10 copies; the behaviour
sign, which never flags alone, makes the other 7 worth a look, and no independent solution
is either."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_rlsys import similarity
from pytest_rlsys.similarity.probes import run_file

HELD_OUT = Path(__file__).parent / "similarity_heldout4"


def _alone(path: Path, behaviour: bool) -> similarity.Similarity:
    """``path`` against the references only, as `rlsys batch` sees a class of one."""
    probed: dict[str, dict[str, str] | None] = {}
    if behaviour:
        probed[path.name] = run_file(path)
        assert probed[path.name] is not None, path
    found = similarity.compare_class({path.name: path.read_text("utf-8")}, probed=probed)
    return found[path.name]


@pytest.mark.slow
def test_the_held_out_set_is_judged_as_the_docs_say() -> None:
    found = {
        sub: {p.name: _alone(p, True) for p in sorted((HELD_OUT / sub).glob("*.py"))}
        for sub in ("independent", "copies", "partial")
    }
    flagged = {sub: {n: f.flagged for n, f in files.items()} for sub, files in found.items()}
    assert len(flagged["independent"]) == 8 and len(flagged["copies"]) == 10
    assert not any(f.flagged or f.look_by for f in found["independent"].values())
    # The three light copies by their code; the seven heavy ones by behaviour alone, which
    # makes them worth a look and never flags (honest work that knew the reference reaches
    # it too: docs/similarity.md, "The rule").
    assert sorted(n for n, f in flagged["copies"].items() if f) == [
        "copy01.py",
        "copy02.py",
        "copy03.py",
    ]
    looked = {n for n, f in found["copies"].items() if "behaviour" in f.look_by}
    assert looked == {f"copy{i:02}.py" for i in range(4, 11)}
    # One TODO of three copied: only the largest (transfer_ledger, part2) is flagged.
    assert flagged["partial"] == {"part1.py": False, "part2.py": True, "part3.py": False}


def test_without_the_behaviour_sign_most_heavy_copies_go_unseen() -> None:
    # The figure before the behaviour sign: code and sentences flag the three light copies.
    copies = {p.name: _alone(p, False) for p in sorted((HELD_OUT / "copies").glob("*.py"))}
    assert sorted(n for n, f in copies.items() if f.flagged) == [
        "copy01.py",
        "copy02.py",
        "copy03.py",
    ]
