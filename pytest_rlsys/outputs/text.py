"""What every writer needs to make any Python string safe: the one escaping rule
(``pytest_rlsys.escaping``, re-exported here; its docstring says what it escapes and why),
JSON that cannot fail on content, clipped text and numbers fit for any file.

The submission is hostile and its text reaches the reports: the grader escapes it where
the record is built and the writers do it again, so that no report can fail or lie.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pytest_rlsys.escaping import SAFE_BLOCKS, clean, is_clean
from pytest_rlsys.messages import CLIPPED

__all__ = [
    "SAFE_BLOCKS",
    "clean",
    "clean_tree",
    "clip",
    "dump_json",
    "is_clean",
    "js_number",
    "seconds",
]


def clip(text: str, limit: int, lang: str = "en") -> str:
    """At most about ``limit`` characters, saying in ``lang`` how much was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + CLIPPED.fill(lang, {"n": str(len(text) - limit)})


def clean_tree(value: Any) -> Any:
    """A copy of JSON-like data with every string (keys too) cleaned and every non-finite
    float replaced by None, so that ``json.dumps(..., allow_nan=False)`` cannot fail."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {clean(k): clean_tree(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_tree(v) for v in value]
    return clean(value)


def dump_json(doc: Any) -> str:
    """JSON text of ``doc`` after clean_tree: always valid UTF-8, never raises on content."""
    return json.dumps(clean_tree(doc), ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def seconds(value: float) -> float:
    """A duration fit for any file: finite and not negative (else 0)."""
    # ``+ 0.0`` turns -0.0 into 0.0, which formats without a sign.
    return value + 0.0 if math.isfinite(value) and value >= 0 else 0.0


def js_number(value: float) -> str:
    """A number as JavaScript's ``String(n)`` writes it (for the values scores take):
    ``65`` not ``65.0``, ``65.5`` not ``65.50``."""
    if math.isfinite(value) and value == int(value) and abs(value) < 1e21:
        return str(int(value))
    return repr(float(value))
