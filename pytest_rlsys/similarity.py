"""Which submissions are near copies of the chapter's reference or of each other (instructor-only).

The method is winnowing (Schleimer, Wilkerson and Aiken, "Winnowing: local algorithms for
document fingerprinting", SIGMOD 2003), the algorithm behind MOSS and the ``copydetect``
package, over Python's own tokens of a canonical form of the code (similarity_canonical.py
undoes statement-level disguises): identifiers become ``V``, string literals ``S`` and
numbers ``N`` (keywords, operators, builtins and attribute names stay), comments vanish, and
each statement of a function's body is fingerprinted on its own so the order of functions
and statements does not matter.  Fingerprints the untouched template also has are removed
first (MOSS's "base file"), so code every learner starts from never counts.
A second, independent sign is the reference's own sentences: a file that holds three or more
of its string literals word for word (its error messages, which no docstring dictates) is
flagged whatever its code score; a rewrite of the code rarely rewrites them too.  A third,
the file's behaviour on inputs the template leaves open (birthmark.py), is measured by the
caller in the grader's child and passed in as tokens (``probed``): against the references it
flags a copy whatever its code; between classmates it confirms the code's sign (two files
whose code is shared but which behave differently on the probes are not one program twice).
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from pytest_rlsys.birthmark import THRESHOLD as BEHAVES_AT
from pytest_rlsys.birthmark import alike, behaviour, provided
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
# Every file the grader reads is compared (grading/grader.py's MAX_SUBMISSION_BYTES, a test
# keeps the two equal): a smaller limit let a copy padded with comments past it go unseen.
# Comments and blank lines cost nothing here (the syntax tree drops them); 2 MiB of code
# costs a few seconds, once per file.
MAX_BYTES = 2 * 1024 * 1024
CSV_COLUMNS = (
    "similar_to",
    "similarity",
    "similarity_flagged",
    "similarity_sentences",
    "similarity_behaviour",
    "similarity_alike",
    "similarity_hidden",
)
# A reference's sentence: a whole string literal (no docstring, no f-string piece) of at least
# this many characters that the template does not contain.  Three shared is the flag: no
# independent solution of either calibration set shares even one with the chapter's reference
# (docs/similarity.md); one or two could be a phrase the docstrings suggest.
MIN_SENTENCE_CHARS = 12
MIN_SHARED_SENTENCES = 3
# A file with more lines of code than this (15 times the exercise's) is fingerprinted from its
# raw tokens, without the canonical form and the split into statements: those cost about 2 ms
# a line, and a class of hostile 2 MiB files must not take hours.  Padding a copy past it
# with dead code keeps the copy's own tokens, which still match (a test pads one).
MAX_CANONICAL_LINES = 3000
# A classmate's code shared at THRESHOLD or more but below this is flagged only if the two
# also behave alike (birthmark.alike): two same-style independent files reached 0.62, and
# one changed line can change a copy's answers on a whole family of probes (a fabric id's
# handling), so clear code evidence stands on its own.
CONFIRMED_ABOVE = 0.75
# A string literal holding code (``exec(SOURCE)``) is read as code, this many levels deep.
EMBEDDED_DEPTH = 3
# The most lines blanked to make a file that does not parse parse (``repaired``), in a file
# of at most this many characters (the exercise is about 15,000).
REPAIRS = 20
REPAIRED_BYTES = 256 * 1024

REFERENCE = "reference"
_KEPT_NAMES = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)
_FSTRING_START = getattr(tokenize, "FSTRING_START", -1)
_FSTRING_END = getattr(tokenize, "FSTRING_END", -1)
_DROPPED = frozenset(
    {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER, tokenize.TYPE_COMMENT}
)


@dataclass(frozen=True)
class Similarity:
    """One submission's closest match: ``closest`` is "reference" or a classmate's name;
    ``score`` is None when the file was not compared (not read: a link, a folder, too big);
    ``sentences``: how many of a reference's own sentences it holds word for word;
    ``behaviour``: its agreement with a reference on the behaviour probes (birthmark.py),
    None when they were not run (the file did not load, or the batch was told not to);
    ``alike``: when ``closest`` is a classmate, how far the two behave alike on the probes
    (birthmark.alike), None otherwise or when either was not probed;
    ``hidden``: the file runs code built at run time (``hides_code``): it cannot all be
    compared, so it is flagged for reading."""

    closest: str | None
    score: float | None
    flagged: bool
    sentences: int = 0
    behaviour: float | None = None
    alike: float | None = None
    hidden: bool = False

    def as_dict(self) -> dict[str, object]:
        return {
            "closest": self.closest,
            "score": _rounded(self.score),
            "flagged": self.flagged,
            "sentences": self.sentences,
            "behaviour": _rounded(self.behaviour),
            "alike": _rounded(self.alike),
            "hidden": self.hidden,
        }

    def csv_cells(self) -> dict[str, object]:
        if self.score is None:  # not compared: empty cells, not a score of nothing
            return dict.fromkeys(CSV_COLUMNS, "")
        cells = self.as_dict()
        values = [self.closest or "", *(cells[k] for k in ("score", "flagged", "sentences"))]
        values += ["" if cells[k] is None else cells[k] for k in ("behaviour", "alike")]
        return dict(zip(CSV_COLUMNS, [*values, self.hidden], strict=True))


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


UNREAD = Similarity(None, None, False)


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

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        # A method's ``self.rates`` is the ``rates`` a function wrapped into a class had:
        # attributes of ``self`` print as plain names (only ``self``: a method moved into a
        # class as it was keeps its first parameter's attributes).
        for method in node.body:
            args = method.args.args if isinstance(method, ast.FunctionDef) else []
            if args and args[0].arg == "self":
                _SelfAsNames("self").visit(method)
        self.generic_visit(node)
        return node


class _SelfAsNames(ast.NodeTransformer):
    def __init__(self, name: str) -> None:
        self.name = name

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == self.name:
            return ast.Name(id=node.attr, ctx=node.ctx)
        return node


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def _parsed(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _code_in(tree: ast.AST) -> list[str]:
    """The string (or UTF-8 bytes) literals of ``tree`` that are Python code defining
    something (a function, a class, or two statements or more), as ``exec(SOURCE)`` runs."""
    found: list[str] = []
    for node in ast.walk(tree):
        value = node.value if isinstance(node, ast.Constant) else None
        if isinstance(value, bytes):
            value = value.decode("utf-8", errors="replace")
        if not isinstance(value, str) or "\n" not in value.strip():
            continue
        inner = _parsed(value)
        if inner is not None and (
            len(inner.body) > 1
            or any(isinstance(n, ast.FunctionDef | ast.ClassDef) for n in inner.body)
        ):
            found.append(value)
    return found


def repaired(source: str) -> str:
    """``source`` with the lines Python's parser stops at blanked, one at a time, until it
    parses (at most REPAIRS, and only for a file of at most MAX_CANONICAL_LINES lines and
    REPAIRED_BYTES characters: each try is a parse): a copy with a line broken on purpose
    is compared as the copy it still is.  ``source`` itself when it parses or cannot be
    repaired."""
    if _parsed(source) is not None or len(source) > REPAIRED_BYTES:
        return source
    # Python's own line ends, so the parser's line numbers index this list.
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if len(lines) > MAX_CANONICAL_LINES:
        return source
    for _ in range(REPAIRS):
        try:
            ast.parse("\n".join(lines))
            return "\n".join(lines)
        except SyntaxError as exc:
            where = (exc.lineno or 0) - 1
            if not 0 <= where < len(lines) or not lines[where].strip():
                break
            lines[where] = ""
        except (ValueError, RecursionError, MemoryError):
            break
    return source


def with_embedded(source: str) -> str:
    """``source`` followed by the code its string literals hold (EMBEDDED_DEPTH levels):
    code passed to ``exec`` as a string is compared as the code it is."""
    pieces, todo = [source], [source]
    for _ in range(EMBEDDED_DEPTH):
        found = [code for text in todo if (tree := _parsed(text)) for code in _code_in(tree)]
        pieces += found
        todo = found
    return "\n\n".join(pieces)


# What runs code built at run time, or reaches what does: a submission that hides its code
# in an encoded string must use one of these.  Bare names (``re.compile`` is not the
# builtin), attributes, and modules imported; any of them as a whole string too (``getattr``
# and ``sys.modules`` take strings), but "code", a common key.
_RUNNERS = frozenset({"exec", "eval", "compile", "__import__", "__builtins__"})
_ATTRIBUTES = frozenset(
    {"FunctionType", "CodeType", "LambdaType", "__code__", "__globals__", "__subclasses__"}
)
_MODULES = frozenset({"marshal", "pickle", "importlib", "runpy", "code", "builtins"})
RUNS_BUILT_CODE = _RUNNERS | _ATTRIBUTES | _MODULES


def spelled(source: str) -> tuple[frozenset[str], frozenset[str], bool]:
    """What ``source``'s code spells: its names (definitions, uses, parameters, attributes,
    imports), its string literals, and whether it reaches RUNS_BUILT_CODE; empty if it does
    not parse."""
    tree = _parsed(source)
    if tree is None:
        return frozenset(), frozenset(), False
    names: set[str] = set()
    texts: set[str] = set()
    runs = False
    for node in ast.walk(tree):
        for attr in ("id", "name", "arg", "attr", "asname"):
            value = getattr(node, attr, None)
            if isinstance(value, str):
                names.add(value)
        if isinstance(node, ast.Name):
            runs = runs or node.id in _RUNNERS
        elif isinstance(node, ast.Attribute):
            runs = runs or node.attr in _ATTRIBUTES
        elif isinstance(node, ast.alias):
            runs = runs or node.name.split(".")[0] in _MODULES
        elif isinstance(node, ast.ImportFrom):
            runs = runs or (node.module or "").split(".")[0] in _MODULES
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            texts.add(node.value)
            runs = runs or (node.value in RUNS_BUILT_CODE and node.value != "code")
    return frozenset(names), frozenset(texts), runs


def hides_code(source: str, gives: frozenset[str]) -> bool:
    """True when ``source`` runs code built at run time (it reaches RUNS_BUILT_CODE) or
    gives a function (``gives``: birthmark.provided) that none of its names or strings
    contains: its code cannot all be compared."""
    names, texts, runs = spelled(source)
    words = [*names, *texts]
    return runs or any(not any(func in word for word in words) for func in gives)


def _statements(source: str) -> list[str]:
    """Each statement of each function's body and each other top-level statement, in
    canonical form (similarity_canonical.py) and printed back from its syntax tree without
    docstrings or annotations, so layout, quoting and the order of functions and of a body's
    statements do not matter; the whole text as one piece if it does not parse or is too
    big for the canonical form."""
    code_lines = sum(1 for line in source.splitlines() if line.strip()[:1] not in ("", "#"))
    if code_lines > MAX_CANONICAL_LINES:
        return [source]
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
    hashes = [_hash(" ".join(tokens[i : i + K])) for i in range(len(tokens) - K + 1)]
    windows = range(max(1, len(hashes) - WINDOW + 1))
    return {min(hashes[start : start + WINDOW]) for start in windows}


def fingerprints(source: str) -> frozenset[int]:
    """The fingerprints of one Python source text."""
    found: set[int] = set()
    for piece in _statements(source):
        found |= _winnow(_normalised(piece))
    return frozenset(found)


def _or_empty(compute: Callable[[], frozenset[int]]) -> frozenset[int]:
    # The batch writes its grades after this report: no file may take them down with it
    # (310 fuzzed sources raised nothing; this is for the one no fuzzer found).
    try:
        return compute()
    except Exception:
        return frozenset()


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def sentences(source: str, template: str) -> frozenset[int]:
    """The hashes of the sentences of ``source``: its whole string literals of at least
    MIN_SENTENCE_CHARS characters (runs of white space as one space), neither a docstring,
    a piece of an f-string nor text the template holds."""
    tree = _parsed(source)
    if tree is None:
        return frozenset()
    # One walk: ast.walk yields a node before its children, so an f-string's pieces and a
    # body's docstring are marked before the walk reaches them.
    skipped: set[int] = set()
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            skipped.update(id(part) for part in node.values)
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and _is_docstring(body[0]):
            skipped.add(id(body[0].value))
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = " ".join(node.value.split())
            if id(node) not in skipped and len(text) >= MIN_SENTENCE_CHARS and text not in template:
                found.add(_hash(text))
    return frozenset(found)


def overlap(a: frozenset[int], b: frozenset[int], floor: float = 0.0) -> float:
    """The share of the smaller side's fingerprints the other also has (0 when either side is
    too small to judge): dead code added to a copy does not hide it.  The smaller side counts
    as at least half the larger, so one TODO written alone (a third of the code, mostly what
    every correct answer shares) is not judged as if it were the whole file; ``floor`` (half a
    reference's count, from ``compare_class``) does the same when both sides are partial."""
    small = min(len(a), len(b))
    if small < MIN_FINGERPRINTS:
        return 0.0
    if a == b:  # the same code: a copy, however little of it (the floor is for one TODO)
        return 1.0
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


def _chapter() -> tuple[frozenset[int], frozenset[int]]:
    """The chapter's printed reference, shipped as hashes only (not as code): its code
    fingerprints, one hexadecimal number a line, and its sentences, each line "s HASH"."""
    lines = [line.split() for line in _read(CHAPTER_FILE).splitlines()]
    code = frozenset(int(words[0], 16) for words in lines if len(words) == 1)
    said = frozenset(int(words[1], 16) for words in lines if len(words) == 2 and words[0] == "s")
    return code, said


def reference_fingerprints() -> tuple[frozenset[int], ...]:
    """The fingerprints of each reference: the project's solutions/ and the chapter's."""
    return fingerprints(_read(solution_path())), _chapter()[0]


def reference_sentences(template: str | None = None) -> tuple[frozenset[int], ...]:
    """The sentences of each reference, in the order of ``reference_fingerprints``
    (``template``: the exercise template's text, read here when not given)."""
    template = _read(exercise_path()) if template is None else template
    return sentences(_read(solution_path()), template), _chapter()[1]


def template_fingerprints() -> frozenset[int]:
    """The fingerprints every learner starts with (the untouched exercise template)."""
    return fingerprints(_read(exercise_path()))


def compare_class(
    sources: Mapping[str, str],
    references: tuple[frozenset[int], ...] | None = None,
    base: frozenset[int] | None = None,
    probed: Mapping[str, Mapping[str, str] | None] | None = None,
) -> dict[str, Similarity]:
    """For each named source, its closest match among the references and the others.
    ``probed``: each source's tokens on the behaviour probes (birthmark.py, measured by the
    caller; missing or None: not measured).  A source holding MIN_SHARED_SENTENCES of a
    reference's own sentences, or whose behaviour agrees with a reference's at
    birthmark.THRESHOLD or more, is that reference's copy unless a classmate's code is
    flagged closer.  A classmate's code is flagged at CONFIRMED_ABOVE or more; below, only if
    the two also behave alike (birthmark.alike at THRESHOLD or more) or either was not
    measured: where the template is silent a copy does what its original does, and
    independent work written in one style shares code but not every choice.  A source that
    runs code built at run time is flagged as ``hidden`` (calibration: docs/similarity.md)."""
    probed = probed or {}
    sources = {name: _readable_code(text) for name, text in sources.items()}
    template = _read(exercise_path())
    base = fingerprints(template) if base is None else base
    refs = [(REFERENCE, r - base) for r in (references or reference_fingerprints())]
    prints = {name: _or_empty(partial(fingerprints, text)) - base for name, text in sources.items()}
    ref_said = reference_sentences(template)
    floor = max(len(r) for _, r in refs) / 2

    def pair(name: str, other: str) -> float | None:
        return alike(probed.get(name) or {}, probed.get(other) or {})

    def behave_alike(name: str, other: str) -> bool:
        share = pair(name, other)
        return share is None or share >= BEHAVES_AT

    out: dict[str, Similarity] = {}
    for name, mine in prints.items():
        closest, score = None, 0.0  # the closest code, flagged or not
        held, held_score = None, 0.0  # the closest that is flagged
        for other, theirs in [*refs, *((n, p) for n, p in prints.items() if n != name)]:
            value = overlap(mine, theirs, floor)
            if value > score:
                closest, score = other, value
            flags = value >= THRESHOLD and value > held_score
            clear = other == REFERENCE or value >= CONFIRMED_ABOVE
            if flags and (clear or behave_alike(name, other)):
                held, held_score = other, value
        if held is not None:
            closest, score = held, held_score
        said = _or_empty(partial(sentences, sources[name], template))
        shared = max(len(said & theirs) for theirs in ref_said)
        tokens = probed.get(name)
        acts = behaviour(tokens) if tokens else None
        signs = shared >= MIN_SHARED_SENTENCES or (acts is not None and acts >= BEHAVES_AT)
        if signs and held in (None, REFERENCE):
            closest = REFERENCE
            score = max(overlap(mine, theirs, floor) for _, theirs in refs)
        try:  # as _or_empty: no file may take the batch's grades down with it
            hidden = hides_code(sources[name], provided(tokens) if tokens else frozenset())
        except Exception:
            hidden = False
        flagged = held is not None or (closest == REFERENCE and signs) or hidden
        classmate = closest not in (None, REFERENCE)
        both = pair(name, closest) if classmate and closest is not None else None
        out[name] = Similarity(closest, score, flagged, shared, acts, both, hidden)
    return out


def _readable_code(text: str) -> str:
    """``text`` repaired and with the code its strings hold (``text`` if that fails)."""
    try:
        return with_embedded(repaired(text))
    except Exception:
        return text


def compare_files(
    files: Mapping[str, Path | None],
    probed: Mapping[str, Mapping[str, str] | None] | None = None,
) -> dict[str, Similarity]:
    """``compare_class`` over the named submission files; one that is not a readable
    regular file (a link, a folder, missing) is compared with nothing."""
    texts = {name: _read_submission(path) for name, path in files.items()}
    readable = {name: text for name, text in texts.items() if text is not None}
    found = compare_class(readable, probed=probed)
    return {name: found.get(name, UNREAD) for name in files}


def instructor_note(path: Path) -> str:
    """One line for a platform's instructor-only log: this file against the references
    (its behaviour on the probes too: one more fenced child; under a second for a file
    that answers, at most 15 s and one call timeout for one that hangs)."""
    from pytest_rlsys.grading.probes import run_file

    try:  # the log line must come out whatever the probes meet
        tokens = run_file(path)
    except Exception:
        tokens = None
    found = compare_files({"submission": path}, {"submission": tokens})["submission"]
    acts = found.behaviour
    if found.hidden:
        return (
            "rlsys similarity (instructors only): it runs code built at run time (it reaches "
            "exec, eval, compile or the like, or a function it gives is named nowhere in it), "
            "so its code cannot all be compared: flagged, read it (it changes no score)"
        )
    if found.score is None:
        return "rlsys similarity (instructors only): not compared (the file could not be read)"
    if found.closest is None:
        return (
            "rlsys similarity (instructors only): nothing of its own to compare (empty, the "
            "template untouched, or too little code; it changes no score)"
        )
    verdict = "a near copy, read it" if found.flagged else "not flagged"
    said = (
        f" and holds {found.sentences} of its sentences word for word"
        if found.sentences >= MIN_SHARED_SENTENCES
        else ""
    )
    acted = "" if acts is None else f", behaves as it on {acts:.2f} of the probes"
    return (
        f"rlsys similarity (instructors only): shares {found.score:.2f} of its code with the "
        f"reference{said}{acted} ({verdict}; flagged at {THRESHOLD:.2f} or at "
        f"{MIN_SHARED_SENTENCES} sentences or at {BEHAVES_AT:.2f} behaviour; it changes no "
        "score)"
    )


if __name__ == "__main__":  # python -m pytest_rlsys.similarity FILE (the Gradescope kit)
    import sys

    if sys.argv[1:2] == ["--chapter"]:  # regenerates the shipped fingerprints (a maintainer's)
        code = Path(sys.argv[2]).read_text("utf-8")
        said = sentences(code, _read(exercise_path()))
        from pytest_rlsys.outputs.files import write_atomic

        write_atomic(
            CHAPTER_FILE,
            "".join(f"{value:016x}\n" for value in sorted(fingerprints(code)))
            + "".join(f"s {value:016x}\n" for value in sorted(said)),
        )
        sys.exit(0)
    for name in sys.argv[1:]:
        say(instructor_note(Path(name)))
