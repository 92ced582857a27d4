"""The behaviour sign's calibration (docs/similarity.md, "The behaviour sign"): every
candidate probe on the references and on every file of tests/corpora/similarity/ and the
learner corpus's correct solutions, through the grader's fenced child.

Each probe's weight for a reference is the share of independent correct solutions whose
token differs from the reference's (0: a trait every solution shares, left out).  Prints
the probes, then each file's agreement and each set's figures with the threshold.

Run: .venv/bin/python benchmarks/birthmark_calibration.py [--write]
(``--write`` regenerates pytest_rlsys/similarity/birthmark_references.txt and
birthmark_independent.txt
after any change to the probes, the references or the independent set: tokens, weights and
counts only, never the chapter's code.)
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pytest_rlsys.outputs.files import write_atomic  # noqa: E402
from pytest_rlsys.resources import solution_path  # noqa: E402
from pytest_rlsys.similarity import birthmark  # noqa: E402
from pytest_rlsys.similarity.probes import run_file  # noqa: E402

CORPORA = HERE.parent / "tests" / "corpora"
SET = CORPORA / "similarity"
LEARNER = CORPORA / "learner_corpus"
CHAPTER = LEARNER / "ok_chapter_reference.py"
EXAMPLE_BUG = "busiest = [max(fabrics, key=fabrics.get)] if fabrics else []"
EXAMPLE_FIX = "busiest = sorted(f for f, v in fabrics.items() if v == critical)"


# -- the shipped files' text (read back by birthmark.reference_tokens / independent_tally)


def references_text(ours: birthmark.Reference, chapter: birthmark.Reference) -> str:
    """The text of ``birthmark_references.txt`` (``reference_tokens`` reads it back)."""
    lines = [
        f"{name} {ours[name][0]} {ours[name][1]:.4f} {chapter[name][0]} {chapter[name][1]:.4f}\n"
        for name in sorted(ours)
    ]
    header = (
        "# probe, then solutions/'s token and weight, the chapter's (similarity/birthmark.py)\n"
    )
    return header + "".join(lines)


def tally(independent: Sequence[Mapping[str, str]]) -> birthmark.Tally:
    """``independent``'s tokens counted, probe by probe."""
    counts: dict[str, dict[str, int]] = {}
    for tokens in independent:
        for name, mine in tokens.items():
            counts.setdefault(name, {})[mine] = counts.get(name, {}).get(mine, 0) + 1
    return len(independent), counts


def weigh(
    tokens: Mapping[str, str], independent: Sequence[Mapping[str, str]]
) -> birthmark.Reference:
    """A reference's tokens with each probe's weight: the share of ``independent`` (correct
    solutions written without the reference) whose token differs from the reference's."""
    return birthmark.weighed(tokens, tally(independent))


def independent_text(counts: birthmark.Tally) -> str:
    """The text of ``birthmark_independent.txt`` (``independent_tally`` reads it back)."""
    total, seen = counts
    lines = [
        f"{name} {count} {mine}\n"
        for name in sorted(seen)
        for mine, count in sorted(seen[name].items())
    ]
    header = f"# independent correct solutions {total}; then probe, count, token (birthmark.py)\n"
    return header + "".join(lines)


def example_fixed(folder: Path) -> Path:
    """examples/learner_example.py with its one planted bug (ties lost) fixed."""
    text = (HERE.parent / "examples" / "learner_example.py").read_text("utf-8")
    assert EXAMPLE_BUG in text, "the example's bug moved: update EXAMPLE_BUG"
    path = folder / "learner_example.py"
    path.write_text(text.replace(EXAMPLE_BUG, EXAMPLE_FIX), "utf-8")
    return path


def independent(folder: Path) -> list[Path]:
    """Correct solutions written without the references' code (the learner corpus's
    alternatives each take one trait of the chapter's on purpose: kept, as a learner may)."""
    return [
        *sorted((SET / "independent").glob("*.py")),
        *sorted(SET.glob("cleanroom*/independent/*.py")),
        LEARNER / "correct.py",
        *sorted(p for p in LEARNER.glob("ok_*.py") if p != CHAPTER),
        example_fixed(folder),
    ]


def copies() -> list[Path]:
    return [*sorted((SET / "copies").glob("*.py")), *sorted(SET.glob("cleanroom*/copies/*.py"))]


def partial() -> list[Path]:
    return sorted(SET.glob("cleanroom*/partial/*.py"))


def key(path: Path) -> str:
    """The file's set and name (two sets hold files of the same name)."""
    return f"{path.parent.parent.name}/{path.parent.name}/{path.name}"


def measure(
    paths: list[Path], chosen: tuple[birthmark.Probe, ...] = birthmark.CANDIDATES
) -> dict[str, dict[str, str]]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        found = list(pool.map(lambda p: run_file(p, chosen=chosen), paths))
    return {key(p): tokens or {} for p, tokens in zip(paths, found, strict=True)}


def references(
    folder: Path,
) -> tuple[tuple[birthmark.Reference, ...], dict[str, dict[str, str]]]:
    """Both references weighed on the independent solutions, and those solutions' tokens."""
    ours, chapter = measure([solution_path(), CHAPTER]).values()
    ind = measure(independent(folder))
    others = list(ind.values())
    return (weigh(ours, others), weigh(chapter, others)), ind


def report(
    label: str, group: dict[str, dict[str, str]], refs: tuple[birthmark.Reference, ...]
) -> None:
    print(f"\n{label}:")
    shares = {name: birthmark.behaviour(tokens, refs) for name, tokens in sorted(group.items())}
    for name, share in shares.items():
        flag = "FLAG" if share is not None and share >= birthmark.THRESHOLD else ""
        print(f"  {name:58} {'-' if share is None else f'{share:.3f}':6} {flag}")
    values = [s for s in shares.values() if s is not None]
    flagged = sum(s >= birthmark.THRESHOLD for s in values)
    print(f"  -> {flagged}/{len(shares)} flagged, {min(values):.3f} - {max(values):.3f}")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        refs, ind = references(Path(tmp))
    ours, chapter = refs
    print("probe: weight for solutions/, for the chapter (0 and 0: left out)")
    for probe in birthmark.CANDIDATES:
        print(f"  {probe.name:42} {ours[probe.name][1]:.3f} {chapter[probe.name][1]:.3f}")
    if "--write" in sys.argv:
        write_atomic(birthmark.REFERENCES_FILE, references_text(ours, chapter))
        counts = tally(list(ind.values()))
        write_atomic(birthmark.INDEPENDENT_FILE, independent_text(counts))
    report("independent", ind, refs)
    # Each independent file with the weights measured without it (its own disagreements
    # raise the weights of the probes it misses, so the shipped weights flatter it a little).
    print("\nindependent, leave-one-out weights (the highest five):")
    tokens = [{name: token for name, (token, _) in ref.items()} for ref in refs]
    loo = {}
    for name, mine in ind.items():
        others = [theirs for other, theirs in ind.items() if other != name]
        weighed = tuple(weigh(ref, others) for ref in tokens)
        loo[name] = birthmark.behaviour(mine, weighed) or 0.0
    for name in sorted(loo, key=loo.__getitem__)[-5:]:
        print(f"  {name:58} {loo[name]:.3f}")
    report("copies", measure(copies()), refs)
    report("partial", measure(partial()), refs)


if __name__ == "__main__":
    main()
