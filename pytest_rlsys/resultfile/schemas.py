"""One registry over every JSON Schema shipped in ``schemas/``; a fast and a reference validator.

Schemas refer to each other with sibling-file relative refs
(``"rlsys-common.v1.json#/$defs/sha256"``), resolved against each file's ``$id``.
Nothing is ever fetched over the network: neither registry can retrieve, so an
unknown reference fails instead.

Two validators read the same schema files:

- ``fast_validator`` (jsonschema-rs, compiled) decides validity at the speed of
  parsing; it is ``None`` when jsonschema-rs is not installed.
- ``validator`` (jsonschema with ``referencing``) is the reference and the
  producer of path-precise error messages; it is imported only when needed, so
  a valid file never pays for ``import jsonschema``.

Both check the same formats with the same functions (``FORMAT_CHECKS``, only
the formats the schemas use), and both read ``pattern`` the JSON Schema way
(ECMA-262: ``$`` is the end of the string, not "before a final newline" as in
Python's ``re``). ``tests/unit/test_schema_agreement.py`` proves they agree.

Public API::

    registry() -> referencing.Registry           # cached, built once
    schema_ids() -> tuple[str, ...]
    schema(id_or_filename) -> dict
    validator(schema_id_or_filename) -> jsonschema validator   # the reference
    fast_validator(schema_id_or_filename) -> jsonschema_rs.Validator | None
    FORMAT_CHECKS: Mapping[str, Callable[[str], bool]]
    formats_used(schema) -> set[str]
    ecma_regex(pattern) -> str                    # a JSON Schema pattern in Python syntax
    error_pairs(validator, instance, max_message=300) -> list[tuple[str, str]]
    error_lines(validator, instance, max_message=300) -> list[str]
    schemas_by_version() -> dict[str, str]        # schema_version const -> $id
    clear_cache() -> None                         # re-read the folder next time
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_rlsys.resources import schema_dir

if TYPE_CHECKING:  # imported lazily at run time: jsonschema costs ~0.1-3 s to import
    from jsonschema_rs import Validator as FastValidator
    from referencing import Registry

__all__ = [
    "FORMAT_CHECKS",
    "SchemaNotFoundError",
    "clear_cache",
    "ecma_regex",
    "error_lines",
    "error_pairs",
    "fast_validator",
    "formats_used",
    "registry",
    "schema",
    "schema_ids",
    "schemas_by_version",
    "validator",
]

# Files without an ``$id`` (a placeholder, say) still get registered, under this
# base plus their file name, so every shipped file can be looked up.
_FALLBACK_BASE = "https://rlsys.invalid/schemas/"


class SchemaNotFoundError(LookupError):
    """No shipped schema has that ``$id`` or file name."""


def _is_date_time(value: str) -> bool:
    # The check jsonschema[format-nongpl] ran, without importing the other
    # checkers that extra pulls in (rfc3987-syntax alone compiles a grammar for
    # ~3 s at import). Upper-cased because RFC 3339 allows "t" and "z"; a final
    # newline refused because the checker's regex ends in "$", which allows one.
    from rfc3339_validator import validate_rfc3339  # type: ignore[import-untyped,unused-ignore]

    return not value.endswith("\n") and bool(validate_rfc3339(value.upper()))


# Only the formats the shipped schemas use; ``_check_formats`` refuses a schema
# that uses any other, so neither validator silently skips a format.
FORMAT_CHECKS: Mapping[str, Callable[[str], bool]] = MappingProxyType({"date-time": _is_date_time})


@cache
def _load() -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
    """Read every ``*.json`` directly in the schemas folder (not ``examples/``)."""
    by_filename: dict[str, str] = {}
    contents: dict[str, dict[str, Any]] = {}
    for path in sorted(Path(schema_dir()).glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(doc, dict):
            raise ValueError(f"schema file {path.name} does not hold a JSON object")
        schema_id = doc.get("$id")
        if not isinstance(schema_id, str) or not schema_id:
            schema_id = _FALLBACK_BASE + path.name
        by_filename[path.name] = schema_id
        contents[schema_id] = doc
    return by_filename, contents


@cache
def registry() -> Registry:
    """The ``referencing`` registry holding every shipped schema, keyed by ``$id``."""
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    # Files that do not name a dialect are read as Draft 2020-12, the project's one dialect.
    resources = [
        (schema_id, Resource.from_contents(doc, default_specification=DRAFT202012))
        for schema_id, doc in _load()[1].items()
    ]
    reg: Registry = Registry().with_resources(resources).crawl()
    return reg


def schema_ids() -> tuple[str, ...]:
    """The ``$id`` of every shipped schema, sorted."""
    return tuple(sorted(_load()[1]))


def _resolve_id(id_or_filename: str) -> str:
    by_filename, contents = _load()
    if id_or_filename in contents:
        return id_or_filename
    name = id_or_filename.rsplit("/", 1)[-1]
    if name in by_filename:
        return by_filename[name]
    known = ", ".join(sorted(by_filename))
    raise SchemaNotFoundError(f"no shipped schema {id_or_filename!r}; shipped: {known}")


def schema(id_or_filename: str) -> dict[str, Any]:
    """The schema with this ``$id`` or file name (e.g. ``"pt-verl-closure.v1.json"``).

    The returned dict is shared: do not modify it.
    """
    return _load()[1][_resolve_id(id_or_filename)]


def formats_used(node: Any) -> set[str]:
    """Every ``format`` value named anywhere in a schema document."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            value = item.get("format")
            if isinstance(value, str):
                found.add(value)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _check_formats() -> None:
    unknown = set().union(*(formats_used(doc) for doc in _load()[1].values())) - set(FORMAT_CHECKS)
    if unknown:
        # Both validators must check the same formats the same way; a format
        # with no checker here would be enforced by one and ignored by the other.
        raise ValueError(
            f"the shipped schemas use format(s) {sorted(unknown)} that "
            "pytest_rlsys.resultfile.schemas.FORMAT_CHECKS has no checker for"
        )


# ------------------------------------------------------------------ ECMA-262 patterns


def ecma_regex(pattern: str) -> str:
    """Translate a JSON Schema (ECMA-262) pattern to Python ``re`` syntax.

    The one difference that matters for the project's patterns: ECMA's ``$``
    (no multiline flag) matches only at the very end, Python's also before a
    final newline, so ``"<64 hex digits>\\n"`` would pass ``^[0-9a-f]{64}$``.
    Each ``$`` outside a character class becomes ``\\Z``.
    """
    out: list[str] = []
    in_class = escaped = False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "$":
            out.append(r"\Z")
            continue
        out.append(char)
    return "".join(out)


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(ecma_regex(pattern))


def _reference_class() -> Any:
    """Draft 2020-12 from jsonschema, with ``pattern`` read the ECMA-262 way."""
    from jsonschema import (  # type: ignore[import-untyped,unused-ignore]
        Draft202012Validator,
        ValidationError,
        validators,
    )

    def pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, "string") and not _compiled(patrn).search(instance):
            yield ValidationError(f"{instance!r} does not match {patrn!r}")

    def pattern_properties(
        validator: Any, patterns: dict[str, Any], instance: Any, schema: Any
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in patterns.items():
            for key, value in instance.items():
                if _compiled(patrn).search(key):
                    yield from validator.descend(value, subschema, path=key, schema_path=patrn)

    def unique_items(validator: Any, unique: bool, instance: Any, schema: Any) -> Iterator[Any]:
        # jsonschema falls back to comparing every pair when the items do not sort
        # (mixed int/str: 20k items took over 2 minutes); hashing is linear.
        if unique and validator.is_type(instance, "array") and not _all_unique(instance):
            yield ValidationError(f"{_short(instance)} has non-unique elements")

    return validators.extend(
        Draft202012Validator,
        validators={
            "pattern": pattern,
            "patternProperties": pattern_properties,
            "uniqueItems": unique_items,
        },
    )


def _key(value: Any, depth: int = 0) -> Any:
    """A hashable key equal for two values exactly when JSON Schema calls them equal
    (1 == 1.0, but true != 1; objects by their members, arrays in order)."""
    if depth > 200:
        return ("deep", id(value))  # never equal to another: at worst a duplicate is missed
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int | float):
        if isinstance(value, float) and value.is_integer():
            return ("n", int(value))
        return ("n", value)
    if isinstance(value, str) or value is None:
        return ("s", value)
    if isinstance(value, list):
        return ("l", tuple(_key(v, depth + 1) for v in value))
    if isinstance(value, dict):
        return ("d", frozenset((k, _key(v, depth + 1)) for k, v in value.items()))
    return ("o", id(value))


def _all_unique(items: list[Any]) -> bool:
    seen: set[Any] = set()
    for item in items:
        key = _key(item)
        if key in seen:
            return False
        seen.add(key)
    return True


def _short(instance: Any) -> str:
    text = repr(instance)
    return text if len(text) <= 200 else text[:199] + "…"


@cache
def validator(schema_id: str) -> Any:
    """The reference validator (jsonschema, Draft 2020-12) for one shipped schema.

    Formats are checked with ``FORMAT_CHECKS`` (a schema using any other format
    is refused with ``ValueError``).
    """
    from jsonschema import FormatChecker  # type: ignore[import-untyped,unused-ignore]

    resolved = _resolve_id(schema_id)
    _check_formats()
    checker = FormatChecker(formats=())
    for name, func in FORMAT_CHECKS.items():
        # jsonschema hands every instance to a format checker; formats only
        # constrain strings.
        checker.checks(name)(lambda value, func=func: not isinstance(value, str) or func(value))
    return _reference_class()(schema(resolved), registry=registry(), format_checker=checker)


@cache
def fast_validator(schema_id: str) -> FastValidator | None:
    """A compiled jsonschema-rs validator for one shipped schema, or ``None`` without it.

    It decides validity only; error reports come from ``validator``.
    """
    resolved = _resolve_id(schema_id)
    _check_formats()
    try:
        import jsonschema_rs
    except ImportError:
        return None
    reg = jsonschema_rs.Registry(list(_load()[1].items()))
    return jsonschema_rs.validator_for(
        schema(resolved),
        registry=reg,
        formats=dict(FORMAT_CHECKS),
        validate_formats=True,
        ignore_unknown_formats=False,
        offline=True,
    )


def schemas_by_version() -> dict[str, str]:
    """Map each ``schema_version`` constant declared by a shipped schema to its ``$id``.

    Discovered from the files, so adding ``pt-verl-closure.v2.json`` makes
    ``"pt-verl-closure/2"`` known without code changes.
    """
    found: dict[str, str] = {}
    for schema_id, doc in _load()[1].items():
        props = doc.get("properties")
        if not isinstance(props, dict):
            continue
        version = props.get("schema_version")
        if isinstance(version, dict) and isinstance(version.get("const"), str):
            found[version["const"]] = schema_id
    return dict(sorted(found.items()))


def _shorten(text: str, limit: int) -> str:
    # Messages quote the offending instance; for a whole sample list that could
    # be megabytes, so keep one readable line.
    text = " ".join(text.split())
    if limit > 0 and len(text) > limit:
        return text[: limit - 3] + "..."
    return text


def clear_cache() -> None:
    """Forget the loaded schemas and validators (tests, or after adding a file)."""
    _load.cache_clear()
    registry.cache_clear()
    validator.cache_clear()
    fast_validator.cache_clear()


def _path_key(error: Any) -> tuple[tuple[int, int | str], ...]:
    # Paths mix ints and strings; tag them so sorting never compares the two.
    return tuple((0, p) if isinstance(p, int) else (1, str(p)) for p in error.absolute_path)


def _describe(error: Any, limit: int) -> tuple[str, str]:
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped,unused-ignore]

    message = _shorten(error.message, limit)
    if error.validator == "not" and error.validator_value in ({}, True):
        # {"not": {}} forbids a key; jsonschema's text ("... should not be
        # valid under {}") says nothing useful to a reader.
        message = "not allowed here"
    if error.context:
        # anyOf/oneOf: the top message only says "not valid under any"; the
        # best-matching sub-error says what to change.
        best = best_match(error.context)
        if best is not None:
            sub = _shorten(best.message, limit)
            where = best.json_path
            message = (
                f"{message} (closest: {where}: {sub})"
                if where != error.json_path
                else (f"{message} (closest: {sub})")
            )
    return str(error.json_path), message


# A file up to the size cap can hold hundreds of thousands of errors (one per item of a
# long array): listing them all took a minute and 3 GB for a 14 MB file.  The first
# MAX_ERRORS found (jsonschema yields them lazily, in a fixed order) are listed, then one
# line says there are more, so the time stays proportional to the file's size.
MAX_ERRORS = 1000


def error_pairs(validator: Any, instance: Any, max_message: int = 300) -> list[tuple[str, str]]:
    """The validation errors as ``(json_path, message)``, sorted by path: all of them,
    or the first ``MAX_ERRORS`` found and a last pair saying that more were left out.

    ``max_message`` caps each message (0 = no cap).
    """
    found = list(itertools.islice(validator.iter_errors(instance), MAX_ERRORS + 1))
    more = len(found) > MAX_ERRORS
    errors = sorted(found[:MAX_ERRORS], key=lambda e: (_path_key(e), e.message))
    pairs = [_describe(e, max_message) for e in errors]
    if more:
        pairs.append(("$", f"more errors not listed (the first {MAX_ERRORS} are above)"))
    return pairs


def error_lines(validator: Any, instance: Any, max_message: int = 300) -> list[str]:
    """Every validation error as ``"$.json.path: message"``, sorted by path."""
    return [f"{path}: {message}" for path, message in error_pairs(validator, instance, max_message)]
