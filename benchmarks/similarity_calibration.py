"""The similarity report's calibration figures per subset of tests/corpora/similarity/ (the
numbers docs/similarity.md's table gives): the lowest score of each set of copies, the
highest of independent work, whole and one TODO alone.

Run: .venv/bin/python benchmarks/similarity_calibration.py
(``--chapter FILE`` regenerates pytest_rlsys/similarity/chapter.txt, the chapter's printed
reference as hashes only, after a change of method.)
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pytest_rlsys import similarity  # noqa: E402
from pytest_rlsys.outputs.files import write_atomic  # noqa: E402
from pytest_rlsys.resources import FUNCTIONS  # noqa: E402
from pytest_rlsys.similarity import winnow  # noqa: E402

CORPORA = HERE.parent / "tests" / "corpora"
SET = CORPORA / "similarity"
INDEPENDENT = [
    *sorted((SET / "independent").glob("*.py")),
    *sorted(SET.glob("cleanroom*/independent/*.py")),
    CORPORA / "learner_corpus" / "correct.py",
    CORPORA / "learner_corpus" / "ok_two_pass_fsum.py",
    HERE.parent / "examples" / "learner_example.py",
]


def _key(path: Path) -> str:
    """A file's name with its set's folder: two sets hold files of the same name."""
    return f"{path.parent.parent.name}/{path.name}"


def one_todo(path: Path, todo: str) -> str:
    """``path`` with only ``todo`` written (as tests/corpora/test_similarity.py does)."""
    source = path.read_text("utf-8")
    keep = [
        ast.get_source_segment(source, node)
        for node in ast.parse(source).body
        if not isinstance(node, ast.FunctionDef) or node.name not in FUNCTIONS or node.name == todo
    ]
    return "\n".join(text for text in keep if text)


def alone(paths: list[Path]) -> dict[str, similarity.Similarity]:
    """Each file against the references only."""
    return {p.name: similarity.compare_class({p.name: p.read_text("utf-8")})[p.name] for p in paths}


def line(label: str, found: dict[str, similarity.Similarity]) -> None:
    if not found:  # a set without this subset (cleanroom3 has no partial copies)
        return
    scores = {name: f.score or 0.0 for name, f in found.items()}
    flagged = sum(f.flagged for f in found.values())
    said = sum(f.flagged and scores[n] < similarity.THRESHOLD for n, f in found.items())
    low, high = min(scores, key=scores.__getitem__), max(scores, key=scores.__getitem__)
    print(
        f"{label:34} {flagged:2}/{len(scores):2} flagged ({said} by sentences alone)  "
        f"min {scores[low]:.2f} ({low})  max {scores[high]:.2f} ({high})"
    )


def main() -> None:
    line("own copies", alone(sorted((SET / "copies").glob("*.py"))))
    for room in sorted(SET.glob("cleanroom*")):
        line(f"{room.name} copies", alone(sorted((room / "copies").glob("*.py"))))
        line(f"{room.name} partial", alone(sorted((room / "partial").glob("*.py"))))
        line(f"{room.name} independent", alone(sorted((room / "independent").glob("*.py"))))
    line(
        "independent (class)",
        similarity.compare_class({_key(p): p.read_text("utf-8") for p in INDEPENDENT}),
    )
    for todo in FUNCTIONS:
        line(
            f"independent, {todo} only",
            similarity.compare_class({_key(p): one_todo(p, todo) for p in INDEPENDENT}),
        )
    solutions, chapter = winnow.reference_fingerprints()
    base = winnow.base_fingerprints()
    print(f"the two references: {similarity.overlap(solutions - base, chapter - base):.2f}")


def write_chapter(path: Path) -> None:
    """The chapter's reference as shipped: its code fingerprints, then its sentences."""
    code = path.read_text("utf-8")
    said = similarity.sentences(code, winnow.template_text())
    write_atomic(
        winnow.CHAPTER_FILE,
        "".join(f"{value:016x}\n" for value in sorted(similarity.fingerprints(code)))
        + "".join(f"s {value:016x}\n" for value in sorted(said)),
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--chapter"]:
        write_chapter(Path(sys.argv[2]))
    else:
        main()
