"""``python -m pytest_rlsys.similarity FILE...`` (the Gradescope kit's instructor note): an
entry point only, as ``rlsys similarity FILE...`` (its options from the table)."""

from __future__ import annotations

import sys

from pytest_rlsys.cli import main

if __name__ == "__main__":
    sys.exit(main(["similarity", *sys.argv[1:]]))
