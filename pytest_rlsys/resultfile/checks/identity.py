"""Config identity: the canonical config hash, the paths two configs differ at, and
the model a path or hub id names.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any


def config_sha256(config: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of a resolved config.

    Canonical: keys sorted, no whitespace, UTF-8, NaN/Infinity refused. Key
    order and formatting therefore never change the hash.
    """
    text = json.dumps(
        config, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _same_leaf(a: object, b: object) -> bool:
    # JSON-typed comparison: true is not 1, but 1 and 1.0 are the same number.
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def config_diff(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """Dotted paths (``x.y[2].z``) where two resolved configs differ, sorted.

    A key present on one side only counts as a difference at that key.
    Iterative, so a deeply nested config cannot exhaust the stack.
    """
    found: list[str] = []
    stack: list[tuple[str, object, object]] = [("", a, b)]
    while stack:
        path, x, y = stack.pop()
        if isinstance(x, Mapping) and isinstance(y, Mapping):
            for key in set(x) | set(y):
                sub = f"{path}.{key}" if path else str(key)
                if key not in x or key not in y:
                    found.append(sub)
                else:
                    stack.append((sub, x[key], y[key]))
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                found.append(path or "(root)")
            else:
                stack.extend(
                    (f"{path}[{i}]", u, v) for i, (u, v) in enumerate(zip(x, y, strict=True))
                )
        elif not _same_leaf(x, y):
            found.append(path or "(root)")
    return sorted(found)


def lookup(config: object, dotted: str) -> tuple[bool, object]:
    node: object = config
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def lookup_or(config: object, dotted: str, default: object) -> object:
    """The value at ``dotted``, or ``default`` where it is absent or null (the engine's own
    default then applies)."""
    present, value = lookup(config, dotted)
    return value if present and value is not None else default


_HF_CACHE = re.compile(r"models--([^/\\]+?)--([^/\\]+)")


_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def model_identity(text: str) -> tuple[str, str] | None:
    """("hub", "org/name") or ("path", normalised path); None when neither can be told."""
    cached = _HF_CACHE.search(text)
    if cached:
        return "hub", f"{cached.group(1)}/{cached.group(2)}"
    if _REPO_ID.match(text):
        return "hub", text
    if text.startswith(("/", "~")) or re.match(r"^[A-Za-z]:[\\/]", text):
        return "path", text.rstrip("/\\")
    return None
