"""Which submissions are near copies of the chapter's reference or of each other (instructor-only).

The method is winnowing (Schleimer, Wilkerson and Aiken, "Winnowing: local algorithms for
document fingerprinting", SIGMOD 2003), the algorithm behind MOSS and the ``copydetect``
package, over Python's own tokens of a canonical form of the code (similarity_canonical.py
undoes statement-level disguises): identifiers become ``V``, string literals ``S`` and
numbers ``N`` (keywords, operators, builtins and attribute names stay), comments vanish, and
each statement of a function's body is fingerprinted on its own so the order of functions
and statements does not matter.  Fingerprints the untouched template also has are removed
first (MOSS's "base file"), so code every learner starts from never counts.
``copydetect`` itself is not used: it needs numpy, matplotlib, jinja2 and tqdm, too heavy for
the offline grading kits, and it neither drops a base file's statements by structure nor
sorts functions.  Calibration and what a score does not prove: docs/similarity.md.

Nothing here changes a score.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import io
import keyword
import tokenize
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_rlsys.escaping import say
from pytest_rlsys.resources import exercise_path, solution_path
from pytest_rlsys.safe_read import UnsafeFile, read_regular_file
from pytest_rlsys.similarity_canonical import canonical

# A k-gram of 12 normalised tokens is half a line of code; windows of 5 k-grams mean any
# match of 16 tokens or more is always seen (the winnowing guarantee t = w + k - 1).  With
# each statement fingerprinted alone, K = 12 kept the clean-room copies' lowest score highest
# above independent work's; both and the threshold (midway between the two) were set on
# tests/corpora/similarity/, the clean-room set included (docs/similarity.md).
K = 12
WINDOW = 5
THRESHOLD = 0.51
# Fewer fingerprints than this on the smaller side (the untouched template, a one-liner) is
# too little code to call anything a copy.
MIN_FINGERPRINTS = 12
# The exercise is about 10 kB; a file over 256 kB is compared with nothing, so one hostile
# upload cannot make the class's comparison slow.
MAX_BYTES = 256 * 1024
CSV_COLUMNS = ("similar_to", "similarity", "similarity_flagged")

REFERENCE = "reference"
_KEPT_NAMES = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)
_FSTRING_START = getattr(tokenize, "FSTRING_START", -1)
_FSTRING_END = getattr(tokenize, "FSTRING_END", -1)
_DROPPED = frozenset(
    {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER, tokenize.TYPE_COMMENT}
)


@dataclass(frozen=True)
class Similarity:
    """One submission's closest match: ``closest`` is "reference" or a classmate's name."""

    closest: str | None
    score: float
    flagged: bool

    def as_dict(self) -> dict[str, object]:
        return {"closest": self.closest, "score": round(self.score, 3), "flagged": self.flagged}

    def csv_cells(self) -> dict[str, object]:
        return dict(
            zip(CSV_COLUMNS, (self.closest or "", round(self.score, 3), self.flagged), strict=True)
        )


UNREAD = Similarity(None, 0.0, False)


def _normalised(source: str) -> list[str]:
    """The tokens of ``source`` with names and literals made anonymous ([] if it does not
    tokenize)."""
    out: list[str] = []
    after_dot = False
    inside_fstring = 0  # Python 3.12+ splits f-strings into tokens; older ones keep one
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == _FSTRING_START:
                if not inside_fstring:
                    out.append("S")
                inside_fstring += 1
            elif tok.type == _FSTRING_END:
                inside_fstring -= 1
            elif inside_fstring or tok.type in _DROPPED:
                continue
            elif tok.type == tokenize.NAME:
                out.append(tok.string if after_dot or tok.string in _KEPT_NAMES else "V")
            elif tok.type == tokenize.STRING:
                out.append("S")
            elif tok.type == tokenize.NUMBER:
                out.append("N")
            else:
                out.append(tok.string if tok.type == tokenize.OP else tokenize.tok_name[tok.type])
            after_dot = tok.string == "."
    except (tokenize.TokenError, SyntaxError, ValueError):
        return []
    return out


class _Plain(ast.NodeTransformer):
    """Drops what does not run: docstrings and type annotations (adding them hides nothing)."""

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.annotation = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.returns = None
        if len(node.body) > 1 and _is_docstring(node.body[0]):
            node.body = node.body[1:]
        self.generic_visit(node)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.stmt | None:
        if node.value is None:
            return None
        return ast.Assign(targets=[node.target], value=node.value, lineno=node.lineno)


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def _statements(source: str) -> list[str]:
    """Each statement of each function's body and each other top-level statement, in
    canonical form (similarity_canonical.py) and printed back from its syntax tree without
    docstrings or annotations, so layout, quoting and the order of functions and of a body's
    statements do not matter; the whole text as one piece if it does not parse."""
    try:
        tree = canonical(_Plain().visit(ast.parse(source)))
        return [ast.unparse(node) for node in _flat(tree.body) if not _is_docstring(node)]
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [source]


def _flat(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of ``body`` with each function's and class's own statements in place
    of it (nested ones too), so a function moved into a class or another function counts
    the same."""
    out: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out += _flat(node.body)
        else:
            out.append(node)
    return out


def _winnow(tokens: list[str]) -> set[int]:
    """The winnowed fingerprints of one token sequence: in every window of WINDOW k-gram
    hashes, the minimum (a set, so which of equal minima is kept does not matter)."""
    if len(tokens) < K:
        return set()
    hashes = [
        int.from_bytes(
            hashlib.blake2b(" ".join(tokens[i : i + K]).encode(), digest_size=8).digest(), "big"
        )
        for i in range(len(tokens) - K + 1)
    ]
    windows = range(max(1, len(hashes) - WINDOW + 1))
    return {min(hashes[start : start + WINDOW]) for start in windows}


def fingerprints(source: str) -> frozenset[int]:
    """The fingerprints of one Python source text."""
    found: set[int] = set()
    for piece in _statements(source):
        found |= _winnow(_normalised(piece))
    return frozenset(found)


def _fingerprints_or_empty(source: str) -> frozenset[int]:
    # The batch writes its grades after this report: no file may take them down with it
    # (310 fuzzed sources raised nothing; this is for the one no fuzzer found).
    try:
        return fingerprints(source)
    except Exception:
        return frozenset()


def overlap(a: frozenset[int], b: frozenset[int], floor: float = 0.0) -> float:
    """The share of the smaller side's fingerprints the other also has (0 when either side is
    too small to judge): dead code added to a copy does not hide it.  The smaller side counts
    as at least half the larger, so one TODO written alone (a third of the code, mostly what
    every correct answer shares) is not judged as if it were the whole file; ``floor`` (half a
    reference's count, from ``compare_class``) does the same when both sides are partial."""
    small = min(len(a), len(b))
    if small < MIN_FINGERPRINTS:
        return 0.0
    return len(a & b) / max(small, max(len(a), len(b)) / 2, floor)


def _read(path: Path) -> str:
    """The text of a regular file (never a link, a FIFO or a device); "" if it is none."""
    try:
        with path.open("rb") as handle:  # bundled files: ours, not the learner's
            return handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _read_submission(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return read_regular_file(path, MAX_BYTES).decode("utf-8", errors="replace")
    except UnsafeFile:
        return None


CHAPTER_FILE = Path(__file__).with_name("similarity_chapter.txt")


def reference_fingerprints() -> tuple[frozenset[int], ...]:
    """The fingerprints of each reference: the project's solutions/ and the chapter's printed
    reference (shipped as fingerprints only, one hexadecimal number a line, not as code)."""
    chapter = frozenset(int(word, 16) for word in _read(CHAPTER_FILE).split())
    return fingerprints(_read(solution_path())), chapter


def template_fingerprints() -> frozenset[int]:
    """The fingerprints every learner starts with (the untouched exercise template)."""
    return fingerprints(_read(exercise_path()))


def compare_class(
    sources: Mapping[str, str],
    references: tuple[frozenset[int], ...] | None = None,
    base: frozenset[int] | None = None,
) -> dict[str, Similarity]:
    """For each named source, its closest match among the references and the others."""
    base = template_fingerprints() if base is None else base
    refs = [(REFERENCE, r - base) for r in (references or reference_fingerprints())]
    prints = {name: _fingerprints_or_empty(text) - base for name, text in sources.items()}
    floor = max(len(r) for _, r in refs) / 2
    out: dict[str, Similarity] = {}
    for name, mine in prints.items():
        closest, score = None, 0.0
        for other, theirs in [*refs, *((n, p) for n, p in prints.items() if n != name)]:
            value = overlap(mine, theirs, floor)
            if value > score:
                closest, score = other, value
        out[name] = Similarity(closest, score, score >= THRESHOLD)
    return out


def compare_files(files: Mapping[str, Path | None]) -> dict[str, Similarity]:
    """``compare_class`` over the named submission files; one that is not a readable
    regular file (a link, a folder, missing) is compared with nothing."""
    texts = {name: _read_submission(path) for name, path in files.items()}
    found = compare_class({name: text for name, text in texts.items() if text is not None})
    return {name: found.get(name, UNREAD) for name in files}


def instructor_note(path: Path) -> str:
    """One line for a platform's instructor-only log: this file against the references."""
    found = compare_files({"submission": path})["submission"]
    if found.closest is None:
        return "rlsys similarity (instructors only): not compared (no readable code)"
    verdict = "a near copy, read it" if found.flagged else "not flagged"
    return (
        f"rlsys similarity (instructors only): shares {found.score:.2f} of its code with the "
        f"reference ({verdict}; flagged at {THRESHOLD:.2f}; it changes no score)"
    )


if __name__ == "__main__":  # python -m pytest_rlsys.similarity FILE (the Gradescope kit)
    import sys

    if sys.argv[1:2] == ["--chapter"]:  # regenerates the shipped fingerprints (a maintainer's)
        found = fingerprints(Path(sys.argv[2]).read_text("utf-8"))
        CHAPTER_FILE.write_text("".join(f"{value:016x}\n" for value in sorted(found)))
        sys.exit(0)
    for name in sys.argv[1:]:
        say(instructor_note(Path(name)))
