"""Strict loading of a pt-verl-closure result file.

Reading goes: open without following a symbolic link and without blocking
(a FIFO or device is refused, never read), a regular-file check on the open
descriptor, a read bounded by the size cap, the sha256 of exactly those bytes,
then UTF-8, strict JSON (no NaN/Infinity, no number a double cannot hold, no
duplicate keys, no unpaired surrogate, an object at the top), then the schema
picked by ``schema_version``. The file is read once: the digest, the parse and
the grade all use the same bytes.

Validity is decided by one compiled validator (jsonschema-rs), which also lists
every error of a document it rejects with its JSON path. Bad input never raises:
each problem comes back as a ``Problem(path, message)`` record (``path`` is a JSON path such as
``$.groups.retain``); renderers (``rlsys validate`` text or JSON) format them.
"""

from __future__ import annotations

import gc
import hashlib
import json
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Literal

from pytest_rlsys.resultfile import schemas as schema_registry
from pytest_rlsys.safe_read import UnsafeFile, read_regular_file

__all__ = [
    "DEFAULT_FAMILY",
    "DEFAULT_MAX_BYTES",
    "LoadedResult",
    "Problem",
    "Stage",
    "StrictJSONError",
    "known_versions",
    "load_result_file",
    "loads_strict",
    "validate_document",
]

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_FAMILY = "pt-verl-closure"

Stage = Literal["read", "parse", "version", "schema", "ok"]

# A decimal literal with more digits than this may exceed the largest double.
_FLOAT_DIGITS = len(str(int(2.0**1023))) - 1
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class StrictJSONError(ValueError):
    """The text is not strict JSON; the message says why, ``path`` where (a JSON path)."""

    def __init__(self, message: str, path: str = "$") -> None:
        super().__init__(message)
        self.path = path


@dataclass(frozen=True)
class Problem:
    """One loading or validation problem: where (a JSON path) and what."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


@dataclass(frozen=True)
class LoadedResult:
    """A result file after loading and validation.

    ``doc`` is the parsed document when it is valid, else None. ``stage`` is
    where loading stopped: ``read``, ``parse``, ``version``, ``schema``, or
    ``ok``. ``problems`` are sorted by JSON path. ``sha256`` is the digest of
    the bytes that were parsed (None when nothing could be read).
    """

    path: str
    doc: dict[str, Any] | None
    schema_version: str | None
    schema_id: str | None
    stage: Stage
    problems: tuple[Problem, ...]
    sha256: str | None = None

    @property
    def ok(self) -> bool:
        return self.stage == "ok"

    @property
    def errors(self) -> tuple[str, ...]:
        """The problems as ``"$.json.path: message"`` lines."""
        return tuple(str(problem) for problem in self.problems)


class _Refused(StrictJSONError):
    """Raised by a parse hook, which cannot know where it is; ``_locate`` finds out."""

    kind = "number"


class _Duplicate(_Refused):
    kind = "duplicate"


def _reject_constant(name: str) -> Any:
    raise _Refused(
        f"{name} is not valid JSON (numbers must be finite); write null for a missing value"
    )


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        # 1e999 parses to inf in Python; JSON consumers elsewhere would choke.
        raise _Refused(f"number {text} is out of range (not a finite number)")
    return value


def _float_sized_int(text: str) -> int:
    digits = len(text) - text.startswith("-")
    # Only a long literal can be too large, so the common case costs one len().
    if digits > _FLOAT_DIGITS and math.isinf(float(text)):
        shown = text if len(text) <= 24 else f"{text[:12]}...{text[-6:]}"
        raise _Refused(
            f"integer {shown} ({digits} digits) is too large: numbers must fit a "
            "double-precision float (at most about 1.8e308)"
        )
    return int(text)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        # Python would silently keep the last value; the other reader of the
        # file may keep the first. Refuse the ambiguity.
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Duplicate(f"duplicate key {key!r} in an object")
            seen.add(key)
    return out


def _find_unpaired_surrogate(doc: Any) -> str | None:
    """The JSON path of the first string (key or value) that is not encodable Unicode."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(doc, ())]
    while stack:
        node, where = stack.pop()
        if isinstance(node, str):
            items: list[tuple[str, tuple[str | int, ...]]] = [(node, where)]
        elif isinstance(node, dict):
            items = [(key, where) for key in node]
            stack.extend((value, (*where, key)) for key, value in node.items())
        elif isinstance(node, list):
            items = []
            stack.extend((value, (*where, i)) for i, value in enumerate(node))
        else:
            continue
        for text, at in items:
            if not _encodable(text):
                return schema_registry.json_path(at)
    return None


class _Spot:
    """Stands, in a lenient parse, for a value the strict parse refused."""

    def __init__(self, kind: str) -> None:
        self.kind = kind


def _lenient_number(text: str) -> Any:
    value = float(text)
    return _Spot("number") if math.isinf(value) else 0


def _lenient_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        out[key] = _Spot("duplicate") if key in out else value
    return out


def _locate(text: str, kind: str) -> str:
    """The JSON path of the first value of this kind that the strict parse refuses.

    Run only after a refusal: a second, lenient parse marks each refused value
    (out-of-range number, NaN/Infinity, a repeated key) and a walk in document
    order names the first. "$" when the text does not parse even leniently.
    """
    try:
        doc = json.loads(
            text,
            object_pairs_hook=_lenient_pairs,
            parse_constant=lambda _: _Spot("number"),
            parse_float=_lenient_number,
            parse_int=_lenient_number,
        )
    except (ValueError, RecursionError):
        return "$"
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(doc, ())]
    while stack:
        node, where = stack.pop()
        if isinstance(node, _Spot) and node.kind == kind:
            return schema_registry.json_path(where)
        if isinstance(node, dict):
            stack.extend(reversed([(v, (*where, k)) for k, v in node.items()]))
        elif isinstance(node, list):
            stack.extend(reversed([(v, (*where, i)) for i, v in enumerate(node)]))
    return "$"


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_UTF16_BOMS = {b"\xff\xfe": "UTF-16 LE", b"\xfe\xff": "UTF-16 BE"}
_UTF32_BOMS = {b"\xff\xfe\x00\x00": "UTF-32 LE", b"\x00\x00\xfe\xff": "UTF-32 BE"}


def _wide_encoding(data: bytes) -> str | None:
    """The UTF-16/32 encoding a file is in, when its bytes say so (a BOM, or the NUL
    bytes JSON's ASCII punctuation leaves in every other or every fourth byte)."""
    for bom, name in (*_UTF32_BOMS.items(), *_UTF16_BOMS.items()):
        if data.startswith(bom):
            return f"{name} (it starts with that byte order mark)"
    head = data[:512]
    if len(head) >= 4 and head.count(0) * 2 >= len(head) - 1:
        if head[1::4].count(0) == len(head[1::4]) and head[2::4].count(0) == len(head[2::4]):
            return "UTF-32 without a byte order mark"
        if head[1::2].count(0) == len(head[1::2]):
            return "UTF-16 LE without a byte order mark"
        if head[0::2].count(0) == len(head[0::2]):
            return "UTF-16 BE without a byte order mark"
    return None


def _decode(data: bytes) -> str:
    wide = _wide_encoding(data)
    if wide is not None:
        raise StrictJSONError(
            f"not UTF-8: the file is {wide}; a result file is UTF-8 (re-save it as UTF-8, "
            "e.g. iconv -f UTF-16 -t UTF-8)"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StrictJSONError(
            f"not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start}"
        ) from None


def loads_strict(data: bytes | str) -> Any:
    """Parse strict JSON: UTF-8, finite double-sized numbers, no duplicate keys.

    A leading UTF-8 byte order mark is tolerated. Raises ``StrictJSONError``
    with a message naming the line and column where the parser can tell.
    """
    if isinstance(data, bytes):
        # Text decoded from UTF-8 holds no surrogate; a str may.
        return _parse(_decode(data), raw_surrogates=False)
    return _parse(data, raw_surrogates=not _encodable(data))


_SLOW = object()
# Digits all read as 0 (a run of them is one search); whitespace and ASCII letters dropped:
# a key's closing quote then meets its colon, and the counting runs over half the bytes.
# Dropping letters only ever adds a ``":`` (inside a string) or lengthens a digit run (an
# integer literal holds no letter): either sends the text to the hooked parse, never past
# it. What ``_fast_parse`` counts and looks for.
_MARKS = bytes.maketrans(b"123456789", b"000000000")
_DROPPED = b" \t\n\r" + bytes(range(ord("a"), ord("z") + 1)) + bytes(range(ord("A"), ord("Z") + 1))
_CONTAINERS = frozenset((dict, list))
_INFINITIES = frozenset((math.inf, -math.inf))


def _values(node: Any) -> tuple[Sequence[Any], int]:
    """A container's values and how many keys it holds; a list of objects (the samples)
    as one run of all their values, gathered in one C-speed pass over the objects."""
    if type(node) is dict:
        return list(node.values()), len(node)
    try:
        values = list(chain.from_iterable(map(dict.values, node)))
    except TypeError:  # an item that is not an object: the list's own items
        return node, 0
    return values, len(values)


def _unhooked_keys(doc: Any) -> int | None:
    """How many keys the document's objects hold, all levels together; None where it holds
    an infinity (a float literal too large for a double, which ``_finite_float`` refuses)."""
    keys = 0
    stack: list[Any] = [[doc]]  # a top-level number is searched like any other
    while stack:
        values, held = _values(stack.pop())
        keys += held
        try:
            # One hashing pass, which only an object or array (unhashable) stops.
            if not _INFINITIES.isdisjoint(values):
                return None
            continue
        except TypeError:
            pass
        if math.inf in values or -math.inf in values:
            return None
        stack += [v for v in values if type(v) in _CONTAINERS]
    return keys


def _fast_parse(text: str) -> Any:
    """The document parsed by the C scanner without the per-number and per-object
    hooks, or ``_SLOW`` where the text may hold what only those hooks refuse, or fails
    (issue 40: the hooks were most of the parse). The same document or refusal either way:

    * an integer literal overflows a double only with more than ``_FLOAT_DIGITS`` digits
      (the bound ``_float_sized_int`` applies): no digit run that long, no such integer;
    * each key written ends in a closing quote then (past whitespace) its colon, so the
      text holds at least as many ``":`` as keys written; a repeated key leaves the parsed
      objects with fewer. Equal counts: no key repeats;
    * a float literal beyond a double parses to an infinity, which the document then holds
      (NaN and Infinity themselves still meet ``parse_constant``);
    * a text this parse refuses goes to the hooked parse, which tells the first problem.
    """
    marks = text.encode("utf-8", "surrogatepass").translate(_MARKS, _DROPPED)
    if b"0" * (_FLOAT_DIGITS + 1) in marks:
        return _SLOW
    written = marks.count(b'":')
    del marks
    try:
        doc = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        # A refusal is told by the hooked parse, which meets the problems in text order.
        return _SLOW
    return doc if _unhooked_keys(doc) == written else _SLOW


def _parse(text: str, *, raw_surrogates: bool) -> Any:
    text = text.removeprefix("\ufeff")
    # isspace() rather than strip(): no copy of a 64 MiB text.
    if not text or text.isspace():
        raise StrictJSONError("the file is empty")
    # The parse makes a container per sample and no reference cycle: the cyclic
    # collector would only walk them again and again while they are made (measured: the
    # parse of a one-hour file takes 0.10 s with it, 0.06 s without).
    collecting = gc.isenabled()
    gc.disable()
    try:
        doc = _fast_parse(text)
        if doc is _SLOW:
            doc = json.loads(
                text,
                object_pairs_hook=_no_duplicates,
                parse_constant=_reject_constant,
                parse_float=_finite_float,
                parse_int=_float_sized_int,
            )
    except _Refused as exc:
        raise StrictJSONError(str(exc), _locate(text, exc.kind)) from None
    except StrictJSONError:
        raise
    except json.JSONDecodeError as exc:
        hint = " (the file looks truncated)" if exc.pos >= len(text.rstrip()) else ""
        raise StrictJSONError(
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}{hint}"
        ) from None
    except RecursionError:
        raise StrictJSONError("invalid JSON: nested too deeply") from None
    except ValueError as exc:
        raise StrictJSONError(f"invalid JSON: {exc}") from None
    finally:
        if collecting:
            gc.enable()
    # "\ud800" is valid JSON syntax but no Unicode text: every writer that
    # encodes it (a report, the terminal) would fail later. Only a file holding
    # such an escape pays for the walk.
    if raw_surrogates or _SURROGATE_ESCAPE.search(text):
        where = _find_unpaired_surrogate(doc)
        if where is not None:
            raise StrictJSONError(
                "a string (or key) here holds an unpaired UTF-16 surrogate escape (\\ud800-"
                "\\udfff), which is not Unicode text; write the character itself",
                where,
            )
    return doc


def known_versions(family: str | None = DEFAULT_FAMILY) -> tuple[str, ...]:
    """The ``schema_version`` values the shipped schemas accept (of one family)."""
    versions = schema_registry.schemas_by_version()
    if family is None:
        return tuple(versions)
    return tuple(v for v in versions if v.split("/", 1)[0] == family)


def _failed(path: str, stage: Stage, problem: Problem, sha256: str | None = None) -> LoadedResult:
    return LoadedResult(path, None, None, None, stage, (problem,), sha256)


def _schema_problems(schema_id: str, doc: dict[str, Any]) -> list[Problem]:
    """Nothing when the document is valid, else every error with its JSON path."""
    checker = schema_registry.validator(schema_id)
    try:
        if checker.is_valid(doc):
            return []
        pairs = schema_registry.error_pairs(checker, doc)
    except (ValueError, OverflowError) as exc:  # a value it cannot convert: fail closed
        return [Problem("$", f"cannot be validated: {exc}")]
    return [Problem(where, message) for where, message in pairs]


_NAMED_SCHEMA = re.compile(r"pt-verl-closure[._/-]?v?(\d+)(?:\.json)?", re.IGNORECASE)


def _pointer_problems(pointer: object, schema_id: str, version: str) -> list[Problem]:
    """``$schema`` is optional; when it names a pt-verl-closure schema, it must be the one
    ``schema_version`` selects (a v2 pointer in a v1 file says the writer meant another
    format)."""
    if not isinstance(pointer, str):
        return []
    named = _NAMED_SCHEMA.search(pointer)
    chosen = _NAMED_SCHEMA.search(schema_id)
    if named is None or chosen is None or named.group(1) == chosen.group(1):
        return []
    return [
        Problem(
            "$.$schema",
            f"names schema version {named.group(1)} ({pointer[:200]!r}) but schema_version is "
            f"{version!r}; point $schema at {schema_id} or drop it",
        )
    ]


def validate_document(
    doc: Any,
    *,
    path: str = "<document>",
    family: str | None = DEFAULT_FAMILY,
    sha256: str | None = None,
) -> LoadedResult:
    """Pick the schema by ``schema_version`` and validate an already parsed document."""
    if not isinstance(doc, dict):
        kind = type(doc).__name__ if doc is not None else "null"
        kind = {"list": "array", "str": "string", "int": "number", "float": "number"}.get(
            kind, kind
        )
        problem = Problem("$", f"the top level must be a JSON object, not {kind}")
        return _failed(path, "parse", problem, sha256)
    known = known_versions(family)
    listing = ", ".join(known) if known else "(none shipped)"
    version = doc.get("schema_version")
    if "schema_version" not in doc:
        problem = Problem("$", f"no schema_version; expected one of: {listing}")
        return _failed(path, "version", problem, sha256)
    if not isinstance(version, str) or version not in known:
        shown = json.dumps(version, ensure_ascii=False)[:100]
        problem = Problem(
            "$.schema_version", f"unknown schema_version {shown}; known versions: {listing}"
        )
        return _failed(path, "version", problem, sha256)
    schema_id = schema_registry.schemas_by_version()[version]
    problems = _schema_problems(schema_id, doc)
    problems += _pointer_problems(doc.get("$schema"), schema_id, version)
    if problems:
        return LoadedResult(path, None, version, schema_id, "schema", tuple(problems), sha256)
    return LoadedResult(path, doc, version, schema_id, "ok", (), sha256)


def _read_bounded(name: str, max_bytes: int, limit_option: str | None = None) -> bytes | Problem:
    """The file's bytes, or the problem that stopped the read (``safe_read``: read once,
    no link followed, nothing that could block).  ``limit_option``: the calling command's
    option that raises the limit, named when the file is over it (None: it has none)."""
    raise_it = f", or raise the limit with {limit_option}" if limit_option else ""
    try:
        return read_regular_file(name, max_bytes)
    except UnsafeFile as exc:
        return Problem(
            "$",
            {
                "missing": "no such file",
                "bad_name": "not a usable file name (it contains a NUL character)",
                "special": "not a regular file",
                "link": "is a symbolic link, which is not followed; give the path of the file "
                "itself (e.g. the output of `realpath FILE`)",
                "directory": "is a directory, not a result file",
                "too_big": f"the file is over the size limit of {max_bytes} bytes; a one-hour run "
                f"is a few MiB, so check it is the right file{raise_it}",
                "unreadable": f"cannot read the file: {exc.detail}",
            }[exc.kind],
        )


def load_result_file(
    path: str | os.PathLike[str],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    family: str | None = DEFAULT_FAMILY,
    limit_option: str | None = None,
) -> LoadedResult:
    """Read (once), hash, parse and validate one result file; never raises for bad input.
    ``limit_option``: the caller's option that raises ``max_bytes`` (e.g. ``--max-mib``),
    named in the size-limit message; None where the caller has none."""
    name = os.fspath(path)
    data = _read_bounded(name, max_bytes, limit_option)
    if isinstance(data, Problem):
        return _failed(name, "read", data)
    digest = hashlib.sha256(data).hexdigest()
    try:
        text = _decode(data)
        # The bytes are no longer needed: at the 64 MiB cap, not holding them
        # beside the text and the parsed document lowers the peak by as much.
        del data
        doc = _parse(text, raw_surrogates=False)
    except StrictJSONError as exc:
        return _failed(name, "parse", Problem(exc.path, str(exc)), digest)
    del text
    return validate_document(doc, path=name, family=family, sha256=digest)
