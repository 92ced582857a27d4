"""Strict loading of a pt-verl-closure result file.

Reading goes: size cap (checked before the whole file is read), UTF-8, strict
JSON (no NaN/Infinity, no out-of-range numbers, no duplicate keys, an object at
the top), then the schema picked by ``schema_version`` and validation. Bad input
never raises: every problem comes back as an error line ``"$.json.path: message"``.

Public API::

    DEFAULT_MAX_BYTES, DEFAULT_FAMILY
    LoadedResult(path, doc, schema_version, schema_id, stage, errors)   # .ok
    load_result_file(path, *, max_bytes=DEFAULT_MAX_BYTES, family=DEFAULT_FAMILY) -> LoadedResult
    validate_document(doc, *, path="<document>", family=DEFAULT_FAMILY) -> LoadedResult
    loads_strict(data: bytes | str) -> Any          # raises StrictJSONError
    known_versions(family=DEFAULT_FAMILY) -> tuple[str, ...]
"""

from __future__ import annotations

import json
import math
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pytest_rlsys.resultfile import schemas as schema_registry

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_FAMILY = "pt-verl-closure"

Stage = Literal["read", "parse", "version", "schema", "ok"]


class StrictJSONError(ValueError):
    """The text is not strict JSON; the message says where and why."""


@dataclass(frozen=True)
class LoadedResult:
    """A result file after loading and validation.

    ``doc`` is the parsed document when it is valid, else None. ``stage`` is
    where loading stopped: ``read``, ``parse``, ``version``, ``schema``, or
    ``ok``. ``errors`` are ``"$.json.path: message"`` lines, sorted by path.
    """

    path: str
    doc: dict[str, Any] | None
    schema_version: str | None
    schema_id: str | None
    stage: Stage
    errors: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return self.stage == "ok"


def _reject_constant(name: str) -> Any:
    raise StrictJSONError(
        f"{name} is not valid JSON (numbers must be finite); write null for a missing value"
    )


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        # 1e999 parses to inf in Python; JSON consumers elsewhere would choke.
        raise StrictJSONError(f"number {text} is out of range (not a finite number)")
    return value


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            # Python would silently keep the last value; the other reader of
            # the file may keep the first. Refuse the ambiguity.
            raise StrictJSONError(f"duplicate key {key!r} in an object")
        out[key] = value
    return out


def loads_strict(data: bytes | str) -> Any:
    """Parse strict JSON: UTF-8, finite numbers only, no duplicate keys.

    A leading UTF-8 byte order mark is tolerated. Raises ``StrictJSONError``
    with a message naming the line and column where the parser can tell.
    """
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StrictJSONError(
                f"not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start}"
            ) from None
    else:
        text = data
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise StrictJSONError("the file is empty")
    try:
        return json.loads(
            text,
            object_pairs_hook=_no_duplicates,
            parse_constant=_reject_constant,
            parse_float=_finite_float,
        )
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
        # e.g. an integer with more digits than Python converts by default.
        raise StrictJSONError(f"invalid JSON: {exc}") from None


def known_versions(family: str | None = DEFAULT_FAMILY) -> tuple[str, ...]:
    """The ``schema_version`` values the shipped schemas accept (of one family)."""
    versions = schema_registry.schemas_by_version()
    if family is None:
        return tuple(versions)
    return tuple(v for v in versions if v.split("/", 1)[0] == family)


def _failed(path: str, stage: Stage, errors: list[str], version: str | None = None) -> LoadedResult:
    return LoadedResult(path, None, version, None, stage, tuple(errors))


def validate_document(
    doc: Any, *, path: str = "<document>", family: str | None = DEFAULT_FAMILY
) -> LoadedResult:
    """Pick the schema by ``schema_version`` and validate an already parsed document."""
    if not isinstance(doc, dict):
        kind = type(doc).__name__ if doc is not None else "null"
        kind = {"list": "array", "str": "string", "int": "number", "float": "number"}.get(
            kind, kind
        )
        return _failed(path, "parse", [f"$: the top level must be a JSON object, not {kind}"])
    known = known_versions(family)
    listing = ", ".join(known) if known else "(none shipped)"
    version = doc.get("schema_version")
    if "schema_version" not in doc:
        return _failed(path, "version", [f"$: no schema_version; expected one of: {listing}"])
    if not isinstance(version, str) or version not in known:
        shown = json.dumps(version, ensure_ascii=False)[:100]
        return _failed(
            path,
            "version",
            [f"$.schema_version: unknown schema_version {shown}; known versions: {listing}"],
        )
    schema_id = schema_registry.schemas_by_version()[version]
    errors = schema_registry.error_lines(schema_registry.validator(schema_id), doc)
    if errors:
        return LoadedResult(path, None, version, schema_id, "schema", tuple(errors))
    return LoadedResult(path, doc, version, schema_id, "ok", ())


def load_result_file(
    path: str | os.PathLike[str],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    family: str | None = DEFAULT_FAMILY,
) -> LoadedResult:
    """Read, parse and validate one result file; never raises for bad input."""
    name = os.fspath(path)
    file = Path(name)
    try:
        info = file.stat()
    except FileNotFoundError:
        return _failed(name, "read", ["$: no such file"])
    except OSError as exc:
        return _failed(name, "read", [f"$: cannot read the file: {exc.strerror or exc}"])
    if stat.S_ISDIR(info.st_mode):
        return _failed(name, "read", ["$: is a directory, not a result file"])
    if not stat.S_ISREG(info.st_mode):
        # A FIFO or device could block forever or never end.
        return _failed(name, "read", ["$: not a regular file"])
    too_big = (
        f"$: the file is over the size limit of {max_bytes} bytes; "
        "a one-hour run is a few MiB, so check it is the right file (or raise the limit)"
    )
    if info.st_size > max_bytes:
        return _failed(name, "read", [too_big])
    try:
        with file.open("rb") as handle:
            # Read one byte past the cap: the file may have grown since stat().
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        return _failed(name, "read", [f"$: cannot read the file: {exc.strerror or exc}"])
    if len(data) > max_bytes:
        return _failed(name, "read", [too_big])
    try:
        doc = loads_strict(data)
    except StrictJSONError as exc:
        return _failed(name, "parse", [f"$: {exc}"])
    return validate_document(doc, path=name, family=family)
