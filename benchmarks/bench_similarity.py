"""What the similarity report adds to `rlsys batch`: comparing a class of N files (every pair,
plus the references) against grading one submission, and against the same comparison without
the canonical form (pytest_rlsys/similarity/canonical.py), or without reading code out of
string literals and looking for code built at run time (``with_embedded``, ``spelled``),
in the same run (ratios, so the machine's load cancels out).

Run: .venv/bin/python benchmarks/bench_similarity.py [--count 200]
The class: the calibration set (tests/corpora/similarity/) cycled to --count files, each
made distinct by a renamed identifier so no two are byte-identical.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pytest_rlsys import similarity  # noqa: E402
from pytest_rlsys.grading.grader import grade_file  # noqa: E402
from pytest_rlsys.resources import solution_path  # noqa: E402
from pytest_rlsys.similarity import winnow  # noqa: E402

CORPUS = HERE.parent / "tests" / "corpora" / "similarity"


def in_process(sources: dict[str, str]) -> dict[str, similarity.Similarity]:
    """The comparison with each file read in this process (the method's own cost)."""
    return similarity.compare_signs({n: similarity.signs_in(t) for n, t in sources.items()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    count = parser.parse_args().count
    texts = [p.read_text("utf-8") for p in sorted(CORPUS.rglob("*.py"))]
    sources = {
        f"s{i}.py": texts[i % len(texts)].replace("def ", f"def _u{i}(): pass\ndef ", 1)
        for i in range(count)
    }
    began = time.perf_counter()
    grade_file(solution_path(), seed=1)
    one_grading = time.perf_counter() - began
    canonical = winnow.canonical
    winnow.canonical = lambda tree: tree  # the method before the canonical form
    began = time.perf_counter()
    in_process(sources)
    plain = time.perf_counter() - began
    winnow.canonical = canonical
    embedded, spelled = winnow.with_embedded, winnow.spelled
    winnow.with_embedded = lambda text: text
    winnow.spelled = lambda text: (frozenset(), frozenset(), False)
    began = time.perf_counter()
    in_process(sources)
    unhidden = time.perf_counter() - began
    winnow.with_embedded, winnow.spelled = embedded, spelled
    began = time.perf_counter()
    found = in_process(sources)
    compare = time.perf_counter() - began
    began = time.perf_counter()
    analysis = similarity.Analysis()  # as rlsys batch reads them: one bounded child
    bounded = similarity.compare_signs({n: analysis.run(t.encode()) for n, t in sources.items()})
    analysis.close()
    in_child = time.perf_counter() - began
    assert bounded == found
    flagged = sum(f.flagged for f in found.values())
    print(f"one grading (baseline): {one_grading:.2f} s")
    print(f"similarity, {count} files: {compare:.2f} s = {compare / one_grading:.2f} gradings")
    print(f"without the canonical form: {plain:.2f} s (with it: x{compare / plain:.2f})")
    print(
        f"without string code and hidden code: {unhidden:.2f} s (with: x{compare / unhidden:.2f})"
    )
    print(f"the same in the bounded child rlsys batch uses: {in_child:.2f} s")
    print(f"flagged: {flagged} of {count} (the set repeats, so most are copies of each other)")


if __name__ == "__main__":
    main()
