"""``python -m pytest_rlsys``: the ``rlsys`` command.

``python -m`` puts the current folder first on ``sys.path``; a learner's ``pytest.py`` or
``evil.py`` there must not be importable by the grader, so that entry is dropped first."""

import os
import sys

if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from pytest_rlsys.cli import main

raise SystemExit(main())
