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
import copy
import functools
import hashlib
import io
import keyword
import tokenize
from pathlib import Path

from pytest_rlsys.resources import exercise_path, solution_path
from pytest_rlsys.similarity.canonical import canonical, is_docstring

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
# A reference's sentence: a whole string literal (no docstring, no f-string piece) of at least
# this many characters that the template does not contain.  Three shared is the flag: no
# independent solution of either calibration set shares even one with the chapter's reference
# (docs/similarity.md); one or two could be a phrase the docstrings suggest.
MIN_SENTENCE_CHARS = 12
# A file with more lines of code than this (15 times the exercise's) is fingerprinted from its
# raw tokens, without the canonical form and the split into statements: those cost about 2 ms
# a line, and a class of hostile 2 MiB files must not take hours.  Padding a copy past it
# with dead code keeps the copy's own tokens, which still match (a test pads one).
MAX_CANONICAL_LINES = 3000
# A string literal holding code (``exec(SOURCE)``) is read as code, this many levels deep.
EMBEDDED_DEPTH = 3
# The most lines blanked to make a file that does not parse parse (``repaired``), in a file
# of at most this many characters (the exercise is about 15,000).
REPAIRS = 20
REPAIRED_BYTES = 256 * 1024

_KEPT_NAMES = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)
_FSTRING_START = getattr(tokenize, "FSTRING_START", -1)
_FSTRING_END = getattr(tokenize, "FSTRING_END", -1)
_DROPPED = frozenset(
    {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER, tokenize.TYPE_COMMENT}
)


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
        if len(node.body) > 1 and is_docstring(node.body[0]):
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


def spelled(source: str) -> tuple[frozenset[str], frozenset[str], bool] | None:
    """What ``source``'s code spells: its names (definitions, uses, parameters, attributes,
    imports), its string literals, and whether it reaches RUNS_BUILT_CODE; None if it does
    not parse (what it runs cannot be read)."""
    tree = _parsed(source)
    if tree is None:
        return None
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


def _statements(source: str) -> list[str]:
    """Each statement of each function's body and each other top-level statement, in
    canonical form (canonical.py) and printed back from its syntax tree without docstrings
    or annotations, so layout, quoting and the order of functions and of a body's
    statements do not matter; the whole text as one piece if it does not parse or is too
    big for the canonical form.  A statement the rewrite cannot take (nested past the
    recursion limit) is left out of the rewrite and fingerprinted from its own tokens: one
    dead line must not send the whole file to raw tokens (a copy's 1.00 became 0.46)."""
    code_lines = sum(1 for line in source.splitlines() if line.strip()[:1] not in ("", "#"))
    tree = _parsed(source) if code_lines <= MAX_CANONICAL_LINES else None
    if tree is None:
        return [source]
    try:
        return _printed(tree)
    except (ValueError, RecursionError, MemoryError):
        pass
    try:
        tree = _parsed(source)  # the failed rewrite may have changed it part way
        kept, raw = _rewritable(tree.body if tree else [], source)
    except (ValueError, RecursionError, MemoryError):
        return [source]
    try:  # the rest together again, so that a helper is still inlined where it is used
        return [*_printed(ast.Module(kept, type_ignores=[])), *raw]
    except (ValueError, RecursionError, MemoryError):
        return [*raw, *(ast.get_source_segment(source, node) or "" for node in kept)]


def _rewritable(body: list[ast.stmt], source: str) -> tuple[list[ast.stmt], list[str]]:
    """The statements of ``body`` the rewrite takes, and the source text of those it does
    not (a function or class it does not take is split into its own statements first)."""
    kept: list[ast.stmt] = []
    raw: list[str] = []
    for node in body:
        try:
            _printed(ast.Module([copy.deepcopy(node)], type_ignores=[]))
            kept.append(node)
        except (ValueError, RecursionError, MemoryError):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inner = _rewritable(node.body, source)
                kept += inner[0]
                raw += inner[1]
            else:
                raw.append(ast.get_source_segment(source, node) or "")
    return kept, raw


def _printed(tree: ast.Module) -> list[str]:
    done = canonical(_Plain().visit(tree))
    return [ast.unparse(node) for node in _flat(done.body) if not is_docstring(node)]


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
        if isinstance(body, list) and body and is_docstring(body[0]):
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
    """The text of one of this package's own files ("" if it cannot be read)."""
    try:
        with path.open("rb") as handle:  # bundled files: ours, not the learner's
            return handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


CHAPTER_FILE = Path(__file__).with_name("chapter.txt")


def _chapter() -> tuple[frozenset[int], frozenset[int]]:
    """The chapter's printed reference, shipped as hashes only (not as code): its code
    fingerprints, one hexadecimal number a line, and its sentences, each line "s HASH"."""
    lines = [line.split() for line in _read(CHAPTER_FILE).splitlines()]
    code = frozenset(int(words[0], 16) for words in lines if len(words) == 1)
    said = frozenset(int(words[1], 16) for words in lines if len(words) == 2 and words[0] == "s")
    return code, said


@functools.lru_cache(maxsize=1)
def template_text() -> str:
    return _read(exercise_path())


@functools.lru_cache(maxsize=1)
def base_fingerprints() -> frozenset[int]:
    """The fingerprints every learner starts with (the untouched exercise template)."""
    return fingerprints(template_text())


@functools.lru_cache(maxsize=1)
def reference_fingerprints() -> tuple[frozenset[int], ...]:
    """The fingerprints of each reference: the project's solutions/ and the chapter's."""
    return fingerprints(_read(solution_path())), _chapter()[0]


@functools.lru_cache(maxsize=1)
def reference_sentences() -> tuple[frozenset[int], ...]:
    """The sentences of each reference, in the order of ``reference_fingerprints``."""
    return sentences(_read(solution_path()), template_text()), _chapter()[1]
