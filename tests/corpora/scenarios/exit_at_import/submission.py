"""sys.exit() while the module is imported: nothing can be called."""

import sys

sys.exit("leaving before the grader can call anything")


# rlsys-scenario: the honest part (tests/corpora/scenarios/honest_part.py) is appended here
