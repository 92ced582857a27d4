#!/usr/bin/env bash
# The grading step of .github/workflows/rlsys.yml (GitHub Actions, as the runner's
# non-root user, in the learner's checkout): its paths, then the kits' one run script.
# The learner owns this repository, this script and the workflow: the score is advisory.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
WORK="${RUNNER_TEMP:-/tmp}/rlsys"
mkdir -p "$WORK"
chmod 700 "$WORK"
export RLSYS_KIND=actions RLSYS_WORK="$WORK"
export RLSYS_PYTHON="${RLSYS_PYTHON:-python}"
export RLSYS_SUBMITTED=.
export RLSYS_SEED_FILE="$WORK/seed"
export RLSYS_NO_SEED="the course has not set the RLSYS_SEED secret (README.md, step 2)"
# What actions/upload-artifact uploads (the workflow names the same path).
export RLSYS_ARTIFACT="$WORK/rlsys-score.json"
# The workflow commands to act on (the Points notice, or the ::error:: of an
# infrastructure error), written while workflow commands are stopped, printed after.
export RLSYS_ANNOUNCE="$WORK/announce"
rm -f "$RLSYS_SEED_FILE" "$RLSYS_ARTIFACT" "$RLSYS_ANNOUNCE"
if [ -n "${RLSYS_SEED:-}" ]; then (umask 077 && printf '%s\n' "$RLSYS_SEED" >"$RLSYS_SEED_FILE"); fi
# Nothing the grader prints (a learner's file name in a message, say) is read as a
# workflow command while it runs: GitHub's stop-commands, with a token nobody knows.
TOKEN="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
echo "::stop-commands::$TOKEN"
bash "$HERE/run.sh" </dev/null 2>&1 | sed 's/^::/  ::/'
CODE=${PIPESTATUS[0]}
echo "::$TOKEN::"
cat "$RLSYS_ANNOUNCE" 2>/dev/null ||
  echo "::error title=rlsys::the grader stopped before it reported (see this step's log); not a score"
rm -f "$RLSYS_SEED_FILE"
exit "$CODE"
