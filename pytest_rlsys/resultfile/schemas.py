"""One registry over every JSON Schema shipped in ``schemas/``, and its one validator.

Schemas refer to each other with sibling-file relative refs
(``"rlsys-common.v1.json#/$defs/sha256"``), resolved against each file's ``$id``.
Nothing is ever fetched over the network: the registry cannot retrieve, so an
unknown reference fails instead.

The validator is jsonschema-rs (compiled): it decides validity at the speed of
parsing (the one-hour file's schema check: 0.015 s, where jsonschema took 2.4 s;
a whole load 0.13 s against 3.7 s; ``benchmarks/bench_result_validation.py``) and
reports each error with its instance path, so no second validator is kept in step
with it. It reads
``pattern`` the JSON Schema way (ECMA-262: ``$`` is the end of the string) and
checks the formats the schemas use with ``FORMAT_CHECKS``.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

import jsonschema_rs

from pytest_rlsys.resources import schema_dir

__all__ = [
    "FORMAT_CHECKS",
    "SchemaNotFoundError",
    "clear_cache",
    "error_lines",
    "error_pairs",
    "formats_used",
    "json_path",
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
# that uses any other, so the validator never silently skips a format.
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
        # A format with no checker here would fail every document that uses it.
        raise ValueError(
            f"the shipped schemas use format(s) {sorted(unknown)} that "
            "pytest_rlsys.resultfile.schemas.FORMAT_CHECKS has no checker for"
        )


@cache
def validator(schema_id: str) -> jsonschema_rs.Validator:
    """The compiled validator (Draft 2020-12) for one shipped schema.

    Formats are checked with ``FORMAT_CHECKS`` (a schema using any other format
    is refused with ``ValueError``).
    """
    resolved = _resolve_id(schema_id)
    _check_formats()
    return jsonschema_rs.validator_for(
        schema(resolved),
        registry=jsonschema_rs.Registry(list(_load()[1].items())),
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
    validator.cache_clear()


_PLAIN_KEY = re.compile(r"[a-zA-Z][a-zA-Z0-9_]*")


def json_path(parts: Sequence[str | int]) -> str:
    """``$.a.b[0]['odd key']``: how every problem of a file names its place."""
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN_KEY.fullmatch(part):
            out += f".{part}"
        else:
            quoted = part.replace("\\", "\\\\").replace("'", "\\'")
            out += f"['{quoted}']"
    return out


def _closest(error: Any) -> Any | None:
    """Of an anyOf/oneOf error's alternatives, the sub-error that says what to change:
    not a type mismatch (that alternative is for another type), the deepest, from the
    alternative with the fewest errors."""
    branches = getattr(error.kind, "context", None) or []
    ranked = [
        (type(sub.kind).__name__ == "Type", -len(sub.instance_path), len(branch), i, sub)
        for i, branch in enumerate(branches)
        for sub in branch
    ]
    return min(ranked, key=lambda r: r[:4])[4] if ranked else None


def _describe(error: Any, limit: int) -> tuple[str, str]:
    where = json_path(error.instance_path)
    message = _shorten(error.message, limit)
    if type(error.kind).__name__ == "Not":
        # {"not": {}} forbids a key; the validator's text ("{} is not allowed for ...")
        # says nothing useful to a reader.
        message = "not allowed here"
    best = _closest(error)
    if best is not None:
        sub, at = _shorten(best.message, limit), json_path(best.instance_path)
        message = f"{message} (closest: {at + ': ' if at != where else ''}{sub})"
    return where, message


# A file up to the size cap can hold hundreds of thousands of errors (one per item of a
# long array): listing them all took a minute and 3 GB for a 14 MB file.  The first
# MAX_ERRORS found (the validator yields them lazily, in a fixed order) are listed, then one
# line says there are more, so the time stays proportional to the file's size.
MAX_ERRORS = 1000


def error_pairs(validator: Any, instance: Any, max_message: int = 300) -> list[tuple[str, str]]:
    """The validation errors as ``(json_path, message)``, sorted by path: all of them,
    or the first ``MAX_ERRORS`` found and a last pair saying that more were left out.

    ``max_message`` caps each message (0 = no cap).
    """
    found = list(itertools.islice(validator.iter_errors(instance), MAX_ERRORS + 1))
    more = len(found) > MAX_ERRORS
    # Paths mix ints and strings; tag them so sorting never compares the two.
    errors = sorted(
        found[:MAX_ERRORS],
        key=lambda e: (
            [(0, p) if isinstance(p, int) else (1, p) for p in e.instance_path],
            e.message,
        ),
    )
    pairs = [_describe(e, max_message) for e in errors]
    if more:
        pairs.append(("$", f"more errors not listed (the first {MAX_ERRORS} are above)"))
    return pairs


def error_lines(validator: Any, instance: Any, max_message: int = 300) -> list[str]:
    """Every validation error as ``"$.json.path: message"``, sorted by path."""
    return [f"{path}: {message}" for path, message in error_pairs(validator, instance, max_message)]
