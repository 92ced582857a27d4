"""Import of the runner's optional heavy dependencies (verl, Ray, transformers), typed as Any.

A leaf module on purpose: ``gpu/device_check.py`` and the tiny-model builder import it
on a box that has neither the project (``pytest_rlsys``) nor verl installed.
"""

from __future__ import annotations

import importlib
from typing import Any


def optional_module(name: str) -> Any:
    """Import an optional heavy dependency, typed as Any.

    Its own annotations differ between versions (and it may be absent where
    the type checker runs), so the runner treats it as untyped on purpose.
    """
    return importlib.import_module(name)
