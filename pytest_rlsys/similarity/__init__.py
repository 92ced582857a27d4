"""Which submissions are near copies of the chapter's reference or of each other (instructor-only).

The method is winnowing (Schleimer, Wilkerson and Aiken, SIGMOD 2003), the algorithm behind
MOSS and ``copydetect``, over Python's own tokens of a canonical form of the code
(``winnow.py``, ``canonical.py``); a reference's own sentences; and the file's behaviour on
inputs the template leaves open (``birthmark.py``, made in the graded child by
``probes.py``).  Each file's code is read in a bounded child of its own (``analyse.py``),
never in the grader's process; ``decide.py`` turns the signs into one verdict per file
and names the sign that flagged.  Calibration and what a score does not prove:
docs/similarity.md.  Nothing here changes a score.
"""

from __future__ import annotations

from collections.abc import Mapping

from pytest_rlsys.similarity.analyse import Analysis, FileSigns, signs_in, signs_of
from pytest_rlsys.similarity.decide import (
    CONFIRMED_ABOVE,
    CSV_COLUMNS,
    MIN_SHARED_SENTENCES,
    REFERENCE,
    Similarity,
    Tokens,
    compare_signs,
    not_compared,
)
from pytest_rlsys.similarity.winnow import THRESHOLD, fingerprints, overlap, sentences

__all__ = [
    "CONFIRMED_ABOVE",
    "CSV_COLUMNS",
    "MIN_SHARED_SENTENCES",
    "REFERENCE",
    "THRESHOLD",
    "Analysis",
    "FileSigns",
    "Similarity",
    "compare_class",
    "compare_signs",
    "fingerprints",
    "not_compared",
    "overlap",
    "sentences",
    "signs_in",
    "signs_of",
]


def compare_class(
    sources: Mapping[str, str | bytes], probed: Mapping[str, Tokens | None] | None = None
) -> dict[str, Similarity]:
    """Each named source against the references and the others, each read in its own
    bounded child (``signs_of``); a source with probe tokens counts as loaded."""
    probed = probed or {}
    signs = {
        name: signs_of(text.encode("utf-8") if isinstance(text, str) else text)
        for name, text in sources.items()
    }
    loaded = {name: bool(probed.get(name)) for name in sources}
    return compare_signs(signs, probed, loaded)
