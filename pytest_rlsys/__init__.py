"""pytest-rlsys: grading harness for the PT-RL-SYSTEM chapter.

PYTEST_DONT_REWRITE: ``rlsys grade`` imports this package before it calls pytest.main, and
pytest would warn that the (assert-free) package cannot be rewritten any more.
"""

from __future__ import annotations

__version__ = "0.1.0"
