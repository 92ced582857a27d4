"""pytest-rlsys: grading harness for the PT-RL-SYSTEM chapter."""

from __future__ import annotations

__version__ = "0.1.0"
