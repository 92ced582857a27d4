"""``python -m pytest_rlsys.similarity FILE...`` (the Gradescope kit's instructor note): as
``rlsys similarity FILE...``."""

from __future__ import annotations

import sys

from pytest_rlsys.similarity.note import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
