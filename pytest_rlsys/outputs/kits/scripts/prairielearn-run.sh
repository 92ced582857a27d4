#!/usr/bin/env bash
# PrairieLearn's external grader runs this as root in the image named in info.json, with
# the question's tests/ at /grade/tests and the student's files at /grade/student: its
# paths and the grader's install, then the kits' one run script (tests/rlsys-run.sh).
set -u
ROOT="${RLSYS_GRADE_ROOT:-/grade}"
export RLSYS_KIND=prairielearn
export RLSYS_PYTHON="${RLSYS_PYTHON:-python3}"
export RLSYS_SUBMITTED="$ROOT/student"
export RLSYS_RESULT="$ROOT/results/results.json"
export RLSYS_SEED_FILE="$ROOT/tests/rlsys-seed"
export RLSYS_NO_SEED="the question has no seed (tests/rlsys-seed): rebuild it with rlsys kit prairielearn"
# The seed root-only before anything runs: the tests/ folder, and /grade itself (the
# submission reaches the child through a pipe, so the child needs nothing under it).
chmod -R go-rwx "$ROOT/tests" 2>/dev/null
chmod 700 "$ROOT" 2>/dev/null
mkdir -p "$ROOT/results"
# pytest-rlsys itself (it holds the reference) is not in the image, which may be public:
# it comes with the question's tests/ and is installed now, offline, root-only.
if ! "$RLSYS_PYTHON" -I -c 'import pytest_rlsys' 2>/dev/null &&
  ! sh "$ROOT/tests/install.sh" "$RLSYS_PYTHON" "$ROOT/tests/wheels" >&2; then
  export RLSYS_BROKEN="the grader did not install from tests/wheels (see the log): rebuild the image and the question with the same rlsys kit"
fi
# The wheels hold the reference: gone (from this job's copy of tests/) before grading.
rm -rf "$ROOT/tests/wheels"
# Fail closed: a seed other users could still reach (a read-only mount) is not used.
if [ -e "$RLSYS_SEED_FILE" ] && ! "$RLSYS_PYTHON" -I -c 'import os, sys
sys.exit(not any(os.stat(p).st_mode & 0o077 == 0 for p in sys.argv[1:]))' \
  "$ROOT" "$ROOT/tests" "$RLSYS_SEED_FILE"; then
  export RLSYS_BROKEN="the question's seed cannot be made root-only (a read-only mount?)"
fi
cd "$ROOT" || exit 1
exec bash "$ROOT/tests/rlsys-run.sh"
