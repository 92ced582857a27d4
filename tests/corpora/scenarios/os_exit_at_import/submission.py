"""os._exit(0) at import: the process vanishes with a success status."""

import os

os._exit(0)


# rlsys-scenario: the honest part (tests/corpora/scenarios/honest_part.py) is appended here
