"""Which submissions are near copies of the references or of each other: one pure decision
over each file's signs (analyse.FileSigns and its behaviour tokens), which also records
which sign flagged (``flagged_by``) and which make an unflagged file worth a look
(``look_by``).  The rules and their calibration: docs/similarity.md, "The rule".

A flag needs evidence an instructor can show a learner: text the file shares with another
past what independent work shares (between classmates from THRESHOLD to CONFIRMED_ABOVE,
only with the behaviour that confirms it), or code that cannot be read.

- ``code``: shared code >= THRESHOLD with a reference, or >= CONFIRMED_ABOVE (the code-only
  line) with a classmate;
- ``code+behaviour``: shared code >= THRESHOLD with a classmate, both probed and alike
  (>= BEHAVES_AT);
- ``sentences``: MIN_SHARED_SENTENCES of a reference's own sentences;
- ``behaviour``: agreement >= BEHAVES_AT with a reference on the probes, named beside
  ``code`` or ``sentences`` against a reference: it confirms them, never flags alone (an
  honest author who studied the reference behaves like it: docs/similarity.md);
- ``hidden``: it runs code built at run time, gives a function it names nowhere, or ran in
  the grader's child but cannot be read here.

Worth a look (``look_by``, only when nothing but ``hidden`` flagged it): ``code`` when its
closest code is within LOOK_BELOW under THRESHOLD or over it unconfirmed (classmates),
``behaviour`` when it behaves as a reference with neither its code nor its sentences.

A file the probes could not judge (not loaded, not probed) is never evidence of likeness:
between it and a classmate only code over the code-only line flags.  Ties between classmates
go to the first name in sorted order (the batch compares rows in the order they finish).
Nothing here changes a score.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pytest_rlsys.similarity.analyse import FileSigns
from pytest_rlsys.similarity.birthmark import THRESHOLD as BEHAVES_AT
from pytest_rlsys.similarity.birthmark import alike, behaviour, provided
from pytest_rlsys.similarity.winnow import (
    THRESHOLD,
    base_fingerprints,
    overlap,
    reference_fingerprints,
    reference_sentences,
)

# Three of a reference's own sentences is the flag: no independent solution of either
# calibration set shares even one with the chapter's reference (docs/similarity.md); one or
# two could be a phrase the docstrings suggest.
MIN_SHARED_SENTENCES = 3
# The code-only line between classmates: code shared at THRESHOLD or more but below this
# flags a pair only if both were probed and behave alike (birthmark.alike).  Independent
# work never shared more than 0.62, a classmate's copies at least 0.92 (docs/similarity.md,
# "Classmates"); a pair the probes could not judge is held to this line, never to THRESHOLD.
CONFIRMED_ABOVE = 0.75
# "Worth a look" by code: this close under THRESHOLD (the class page lists such files apart).
LOOK_BELOW = 0.10
REFERENCE = "reference"
CSV_COLUMNS = (
    "similar_to",
    "similarity",
    "similarity_flagged",
    "similarity_flagged_by",
    "similarity_worth_a_look",
    "similarity_sentences",
    "similarity_behaviour",
    "similarity_alike",
    "similarity_hidden",
    "similarity_not_compared",
)
Tokens = Mapping[str, str]


@dataclass(frozen=True)
class Similarity:
    """One submission's closest match: ``closest`` is "reference" or a classmate's name;
    ``score`` is None when the file was not compared (``not_compared`` says why);
    ``sentences``: how many of a reference's own sentences it holds word for word;
    ``behaviour``: its agreement with a reference on the behaviour probes, None when they
    were not run; ``alike``: when ``closest`` is a classmate, how far the two behave alike
    (None when either was not probed); ``hidden``: its code cannot all be compared;
    ``flagged_by``: the signs that flagged it (the table above), empty when not flagged;
    ``look_by``: the signs that make it worth a look, empty when another sign than
    ``hidden`` flagged it."""

    closest: str | None
    score: float | None
    flagged_by: tuple[str, ...] = ()
    sentences: int = 0
    behaviour: float | None = None
    alike: float | None = None
    hidden: bool = False
    not_compared: str = ""
    look_by: tuple[str, ...] = ()

    @property
    def flagged(self) -> bool:
        return bool(self.flagged_by)

    def as_dict(self) -> dict[str, object]:
        return {
            "closest": self.closest,
            "score": _rounded(self.score),
            "flagged": self.flagged,
            "flagged_by": list(self.flagged_by),
            "worth_a_look": list(self.look_by),
            "sentences": self.sentences,
            "behaviour": _rounded(self.behaviour),
            "alike": _rounded(self.alike),
            "hidden": self.hidden,
            "not_compared": self.not_compared,
        }

    def csv_cells(self) -> dict[str, object]:
        if self.score is None:  # not compared: empty cells and the reason
            return {**dict.fromkeys(CSV_COLUMNS, ""), CSV_COLUMNS[-1]: self.not_compared}
        cells = self.as_dict()
        values = [self.closest or "", cells["score"], self.flagged, " ".join(self.flagged_by)]
        values += [" ".join(self.look_by)]
        values += [self.sentences]
        values += ["" if cells[k] is None else cells[k] for k in ("behaviour", "alike")]
        return dict(zip(CSV_COLUMNS, [*values, self.hidden, ""], strict=True))


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def not_compared(reason: str) -> Similarity:
    return Similarity(None, None, not_compared=reason)


@dataclass(frozen=True)
class _Class:
    """The class's fingerprints with the template's removed, and the references'."""

    prints: Mapping[str, frozenset[int]]
    refs: tuple[frozenset[int], ...]
    floor: float


def _classmate(
    name: str, known: _Class, probed: Mapping[str, Tokens | None]
) -> tuple[str | None, float, str | None, float, str]:
    """The closest code (name, score) and the closest that flags (name, score, sign)."""
    mine = known.prints[name]
    closest, score = None, 0.0
    held, held_score, sign = None, 0.0, ""
    others = [(REFERENCE, r) for r in known.refs]
    others += [(n, known.prints[n]) for n in sorted(known.prints) if n != name]
    for other, theirs in others:
        value = overlap(mine, theirs, known.floor)
        if value > score:
            closest, score = other, value
        if value < THRESHOLD or value <= held_score:
            continue
        if other == REFERENCE or value >= CONFIRMED_ABOVE:
            held, held_score, sign = other, value, "code"
        elif (alike(probed.get(name) or {}, probed.get(other) or {}) or 0.0) >= BEHAVES_AT:
            held, held_score, sign = other, value, "code+behaviour"
    return closest, score, held, held_score, sign


def _hidden(signs: FileSigns, tokens: Tokens | None, loaded: bool) -> bool:
    """Its code cannot all be compared: it reaches what runs built code, gives the probes
    a function it names nowhere, or it loaded in the grader's child but cannot be read
    here (a parse window must not blind this)."""
    gives = provided(tokens) if tokens else frozenset()
    return signs.runs or bool(gives - signs.named) or (loaded and not signs.parsed)


def verdict(
    name: str,
    signs: FileSigns,
    known: _Class,
    probed: Mapping[str, Tokens | None],
    loaded: bool,
) -> Similarity:
    """One file's verdict from its signs and the class's (the table above)."""
    closest, score, held, held_score, sign = _classmate(name, known, probed)
    flagged_by = [sign] if held is not None else []
    if held is not None:
        closest, score = held, held_score
    shared = max(len(signs.said & theirs) for theirs in reference_sentences())
    tokens = probed.get(name)
    acts = behaviour(tokens) if tokens else None
    said = shared >= MIN_SHARED_SENTENCES
    acted = acts is not None and acts >= BEHAVES_AT
    if (said or acted) and held in (None, REFERENCE):
        closest = REFERENCE
        score = max(overlap(known.prints[name], r, known.floor) for r in known.refs)
    # Behaviour confirms the text signs against a reference; alone it is worth a look.
    text = said or held == REFERENCE
    flagged_by += [*(["sentences"] if said else []), *(["behaviour"] if acted and text else [])]
    look_by = [] if flagged_by else _looked(score, acted)
    hidden = _hidden(signs, tokens, loaded)
    flagged_by += ["hidden"] if hidden else []
    both = None
    if closest not in (None, REFERENCE):
        both = alike(tokens or {}, probed.get(str(closest)) or {})
    return Similarity(
        closest, score, tuple(flagged_by), shared, acts, both, hidden, look_by=tuple(look_by)
    )


def _looked(score: float, acted: bool) -> list[str]:
    """The signs that make an unflagged file worth a look (the table above)."""
    near = score >= THRESHOLD - LOOK_BELOW
    return [*(["code"] if near else []), *(["behaviour"] if acted else [])]


def compare_signs(
    signs: Mapping[str, FileSigns | str],
    probed: Mapping[str, Tokens | None] | None = None,
    loaded: Mapping[str, bool] | None = None,
) -> dict[str, Similarity]:
    """Each file's verdict; a file given a reason instead of signs is "not compared" with
    it.  ``probed``: behaviour tokens (missing or None: not probed); ``loaded``: whether
    the grader's child loaded it (missing: False)."""
    probed = probed or {}
    base = base_fingerprints()
    read = {n: s for n, s in signs.items() if isinstance(s, FileSigns)}
    refs = tuple(r - base for r in reference_fingerprints())
    known = _Class({n: s.prints - base for n, s in read.items()}, refs, max(map(len, refs)) / 2)
    out = {}
    for name, found in signs.items():
        if isinstance(found, str):
            out[name] = not_compared(found)
        else:
            out[name] = verdict(name, found, known, probed, (loaded or {}).get(name, False))
    return out
