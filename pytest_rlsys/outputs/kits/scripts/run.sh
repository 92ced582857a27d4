#!/usr/bin/env bash
# Grades one submission for every kit (Gradescope's run_autograder, PrairieLearn's
# tests/run.sh, the Actions workflow's grade step and Classroom 50's autograder.py each set
# the platform's paths and run this).  From the environment:
#   RLSYS_KIND       gradescope | prairielearn | actions | classroom50
#   RLSYS_PYTHON     the Python rlsys is installed in
#   RLSYS_SUBMITTED  the folder the learner's files are in
#   RLSYS_SEED_FILE  the assignment's seed (--seed @FILE: a command line is readable by
#                    every uid in /proc); RLSYS_NO_SEED says what to do when it is missing
#   RLSYS_RESULT     the platform's result file (Gradescope, PrairieLearn)
#   RLSYS_WORK       a private folder for the score report (default: a fresh one)
#   RLSYS_PROBLEM    a reason not to grade found by the platform's script (optional)
#   RLSYS_HIDDEN_VISIBILITY  Gradescope: when learners see the hidden cases' results
# Whatever happens, the platform's file is written: score 0 and the reason at worst.
set -u
KIND="${RLSYS_KIND:?}"
PY="${RLSYS_PYTHON:?}"
SEED="${RLSYS_SEED_FILE:?}"
RESULT="${RLSYS_RESULT:-}"
WORK="${RLSYS_WORK:-$(mktemp -d)}"
mkdir -p "$WORK"
chmod 700 "$WORK"
SCORE="$WORK/score.json"
ERR="$WORK/grade.err"
rm -f "$SCORE" "$ERR" ${RESULT:+"$RESULT"}

# The file to grade: the template's name, else the only .py file submitted; else PROBLEM
# says, once, what to submit and what was found (names are the learner's: the report
# step escapes them).
pick_submission() {
  SUBMISSION="$1/rlsys_ledger.py"
  PROBLEM=""
  [ -f "$SUBMISSION" ] && return
  local found count list
  found=$(cd "$1" 2>/dev/null && find . -maxdepth 3 -path './.*' -prune -o -name '*.py' \
    -type f -print 2>/dev/null | sed 's|^\./||' | sort | head -n 20)
  count=$(printf '%s\n' "$found" | grep -c .)
  if [ "$count" = 1 ]; then
    SUBMISSION="$1/$found"
    return
  fi
  list=$(printf '%s\n' "$found" | grep . | paste -sd ',' - | sed 's/,/, /g')
  PROBLEM="submit one file named rlsys_ledger.py (found: ${list:-no .py file})"
}

pick_submission "${RLSYS_SUBMITTED:?}"
[ -n "$PROBLEM" ] || PROBLEM="${RLSYS_PROBLEM:-}"
OUTPUT=()
case "$KIND" in
  gradescope | prairielearn) OUTPUT=(--"$KIND" "$RESULT") ;;
esac
[ -z "${RLSYS_HIDDEN_VISIBILITY:-}" ] ||
  OUTPUT+=(--hidden-visibility "$RLSYS_HIDDEN_VISIBILITY")
WHY=""
if [ -n "$PROBLEM" ]; then
  WHY="$PROBLEM"
elif [ ! -s "$SEED" ]; then
  WHY="${RLSYS_NO_SEED:-the assignment has no seed ($SEED)}"
else
  # The kits require the seccomp allow-list, not Landlock: each platform discards its
  # container after one grading, and a container runtime whose seccomp profile predates
  # Landlock's calls would otherwise refuse every submission (docs/threat-model.md).
  # -P: the current folder (a learner's repository) is not put on sys.path, so no folder
  # of theirs can pose as the grader's package.
  "$PY" -P -m pytest_rlsys grade "$SUBMISSION" --seed "@$SEED" --require-fence seccomp \
    --report "$SCORE" "${OUTPUT[@]}" 2>"$ERR"
  CODE=$?
  cat "$ERR" >&2
  [ -s "$SCORE" ] || WHY="$(tail -n 1 "$ERR") (rlsys grade exit status $CODE)"
fi

case "$KIND" in
  gradescope | prairielearn)
    if [ -n "$RESULT" ] && [ ! -s "$RESULT" ]; then
      # Needs only the standard library: it writes the file even when rlsys is broken.
      FPY="$PY"
      command -v "$FPY" >/dev/null 2>&1 || FPY=python3
      "$FPY" -I - "$RESULT" "$KIND" "$WHY" <<'PYTHON'
import json, sys
path, kind, why = sys.argv[1], sys.argv[2], sys.argv[3] or "the grader produced no result"
why = "".join(c if c.isprintable() else "\\u%04x" % ord(c) for c in why)[:2000]
message = "rlsys could not grade this submission: " + why
doc = {"gradescope": {"score": 0, "output": message, "output_format": "text", "tests": []},
       "prairielearn": {"gradable": False, "score": 0.0, "points": 0, "max_points": 100,
                        "message": message, "format_errors": [message], "tests": []}}[kind]
with open(path, "w", encoding="utf-8") as handle:
    json.dump(doc, handle)
PYTHON
    fi
    # Gradescope shows this script's output to instructors only (results.json sets
    # stdout_visibility hidden): the fence that graded, and how near a copy of the
    # reference the file is.  No score changes.
    if [ "$KIND" = gradescope ] && [ -s "$SCORE" ]; then
      "$PY" -P -m pytest_rlsys.outputs.kits.reports note "$SCORE" || true
      "$PY" -I -m pytest_rlsys similarity "$SUBMISSION" || true
    fi
    exit 0
    ;;
  *)
    # The platform's own files (the Actions summary, Classroom 50's result.json) and the
    # exit status the platform reads.
    exec "$PY" -P -m pytest_rlsys.outputs.kits.reports "$KIND" "$SCORE" \
      --problem "$PROBLEM" --error "$WHY"
    ;;
esac
