"""One ``referencing.Registry`` over every JSON Schema shipped in ``schemas/``.

Schemas refer to each other with sibling-file relative refs
(``"rlsys-common.v1.json#/$defs/sha256"``), resolved against each file's ``$id``.
Nothing is ever fetched over the network: the registry has no ``retrieve``
callback, so an unknown reference fails with ``Unresolvable`` instead.

Public API::

    registry() -> Registry                       # cached, built once
    schema_ids() -> tuple[str, ...]
    schema(id_or_filename) -> dict
    validator(schema_id_or_filename) -> Draft202012Validator   # formats checked
    error_lines(validator, instance, max_message=300) -> list[str]
    schemas_by_version() -> dict[str, str]        # schema_version const -> $id
    clear_cache() -> None                         # re-read the folder next time
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

# jsonschema ships no type stubs; the second code keeps this clean once
# types-jsonschema is installed.
from jsonschema import (  # type: ignore[import-untyped,unused-ignore]
    Draft202012Validator,
    ValidationError,
)
from jsonschema.exceptions import best_match  # type: ignore[import-untyped,unused-ignore]
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from pytest_rlsys.resources import schema_dir

# Files without an ``$id`` (a placeholder, say) still get registered, under this
# base plus their file name, so every shipped file can be looked up.
_FALLBACK_BASE = "https://rlsys.invalid/schemas/"


class SchemaNotFoundError(LookupError):
    """No shipped schema has that ``$id`` or file name."""


@cache
def _load() -> tuple[Registry, dict[str, str], dict[str, dict[str, Any]]]:
    """Read every ``*.json`` directly in the schemas folder (not ``examples/``)."""
    by_filename: dict[str, str] = {}
    contents: dict[str, dict[str, Any]] = {}
    resources: list[tuple[str, Resource[Any]]] = []
    for path in sorted(Path(schema_dir()).glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(doc, dict):
            raise ValueError(f"schema file {path.name} does not hold a JSON object")
        schema_id = doc.get("$id")
        if not isinstance(schema_id, str) or not schema_id:
            schema_id = _FALLBACK_BASE + path.name
        # Files that do not name a dialect are read as Draft 2020-12, the
        # project's one dialect.
        resource = Resource.from_contents(doc, default_specification=DRAFT202012)
        resources.append((schema_id, resource))
        by_filename[path.name] = schema_id
        contents[schema_id] = doc
    reg: Registry[Any] = Registry().with_resources(resources).crawl()
    return reg, by_filename, contents


def registry() -> Registry:
    """The registry holding every shipped schema, keyed by ``$id`` (built once)."""
    return _load()[0]


def schema_ids() -> tuple[str, ...]:
    """The ``$id`` of every shipped schema, sorted."""
    return tuple(sorted(_load()[2]))


def _resolve_id(id_or_filename: str) -> str:
    _, by_filename, contents = _load()
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
    return _load()[2][_resolve_id(id_or_filename)]


@cache
def validator(schema_id: str) -> Draft202012Validator:
    """A Draft 2020-12 validator for one shipped schema, with formats checked.

    ``FORMAT_CHECKER`` checks ``date-time`` and friends for real because the
    project depends on ``jsonschema[format-nongpl]``; without those packages
    jsonschema would silently accept any string.
    """
    resolved = _resolve_id(schema_id)
    return Draft202012Validator(
        schema(resolved),
        registry=registry(),
        format_checker=Draft202012Validator.FORMAT_CHECKER,
    )


def schemas_by_version() -> dict[str, str]:
    """Map each ``schema_version`` constant declared by a shipped schema to its ``$id``.

    Discovered from the files, so adding ``pt-verl-closure.v2.json`` makes
    ``"pt-verl-closure/2"`` known without code changes.
    """
    found: dict[str, str] = {}
    for schema_id, doc in _load()[2].items():
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


def _path_key(error: ValidationError) -> tuple[tuple[int, int | str], ...]:
    # Paths mix ints and strings; tag them so sorting never compares the two.
    return tuple((0, p) if isinstance(p, int) else (1, str(p)) for p in error.absolute_path)


def _describe(error: ValidationError, limit: int) -> str:
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
    return f"{error.json_path}: {message}"


def error_lines(
    validator: Draft202012Validator, instance: Any, max_message: int = 300
) -> list[str]:
    """Every validation error as ``"$.json.path: message"``, sorted by path.

    ``max_message`` caps each message part (0 = no cap).
    """
    errors = sorted(validator.iter_errors(instance), key=lambda e: (_path_key(e), e.message))
    return [_describe(e, max_message) for e in errors]
