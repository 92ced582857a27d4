"""Readers of an untyped result document and the wording of the numbers in messages.

The checks take a schema-valid mapping but must not raise on a failed run's missing
pieces: these readers turn absent or mistyped values into None or empty lists.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, cast

from pytest_rlsys.resultfile.checks.vocabulary import (
    MAX_LISTED,
    MEMORY_TOLERANCE_MB,
    TIME_TOLERANCE_S,
    CheckResult,
    Doc,
)


def short_hash(digest: object) -> str:
    return f"{digest[:12]}…" if isinstance(digest, str) else "null"


def _first_difference(a: str, b: str) -> int:
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return index
    return min(len(a), len(b))


def hash_pair(a: object, b: object) -> tuple[str, str, str]:
    """Two digests as a reader needs them to see where they differ.

    Equal digests, non-strings, and digests that already differ within their
    first 12 characters print as 12-character prefixes. Digests sharing a
    longer start print that start, then the characters around the first
    difference; the third item says where it is (empty when not needed).
    Two hashes differing only in the last digit thus never print alike.
    """
    if not (isinstance(a, str) and isinstance(b, str)) or a == b:
        return short_hash(a), short_hash(b), ""
    index = _first_difference(a, b)
    if index < 12:
        return short_hash(a), short_hash(b), ""

    def cut(digest: str) -> str:
        more = "…" if index + 8 < len(digest) else ""
        return f"{digest[:8]}…{digest[index - 4 : index + 8]}{more}"

    return cut(a), cut(b), f" (the first {index} characters agree; they differ at {index + 1})"


def mib(value: object) -> str:
    if not isinstance(value, (int, float)):
        return "null"
    try:
        return f"{value:g} MiB"
    except OverflowError:  # an integer too large for a float
        return "a number too large for a float (MiB)"


def secs(value: float) -> str:
    try:
        return f"{value:.3f} s"
    except OverflowError:
        return "a time too large for a float (s)"


def listing(items: Sequence[str]) -> str:
    shown = ", ".join(items[:MAX_LISTED])
    more = len(items) - MAX_LISTED
    return f"{shown} and {more} more" if more > 0 else shown


def section(parent: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``parent[key]`` where it is an object, else empty (a failed run's missing piece)."""
    value = parent.get(key)
    return value if isinstance(value, Mapping) else {}


def group_of(doc: Doc, name: str) -> Mapping[str, Any]:
    return section(section(doc, "groups"), name)


def mappings(value: object) -> list[Mapping[str, Any]]:
    if not isinstance(value, list):
        return []
    if set(map(type, value)) <= {dict}:  # as parsed: a C-speed test, not one per sample
        return list(value)
    return [item for item in value if isinstance(item, Mapping)]


def as_number(value: object) -> float | None:
    kind = type(value)
    if kind is float:  # the common case first: a one-hour file has ~60,000 numbers
        return cast(float, value)
    if kind is bool or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:  # an integer too large for a float is beyond every bound
        return math.inf if cast(int, value) > 0 else -math.inf


def same_mb(a: object, b: object) -> bool:
    x, y = as_number(a), as_number(b)
    if x is None or y is None:
        return a is None and b is None
    return abs(x - y) <= MEMORY_TOLERANCE_MB


def same_s(a: object, b: object) -> bool:
    x, y = as_number(a), as_number(b)
    return x is not None and y is not None and abs(x - y) <= TIME_TOLERANCE_S


def outcome(problems: list[str], ok_detail: str) -> CheckResult:
    if problems:
        return CheckResult(False, "; ".join(problems))
    return CheckResult(True, ok_detail)
