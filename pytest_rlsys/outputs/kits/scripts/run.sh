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
#   RLSYS_BROKEN     what is wrong with the platform's set-up, found by its script
#   RLSYS_HIDDEN_VISIBILITY  Gradescope: when learners see the hidden cases' results
# Two ways not to grade, told apart as each platform tells them apart:
# - the learner's problem (no file, several): a grade of 0 with the reason, in the
#   platform's file (a file that does not load, an empty one too, is graded: 0);
# - an infrastructure error (no seed, a failed install, no score report): never a score;
#   the reason goes where the platform reports its errors (Gradescope: no results.json and
#   a non-zero exit, "The autograder failed to execute correctly"; PrairieLearn:
#   "gradable": false, no attempt charged; Actions: a failed job with an ::error::;
#   Classroom 50: a non-zero exit).
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
  if [ "$count" = 0 ]; then # say what was there: a renamed file is found at a glance
    found=$(cd "$1" 2>/dev/null && find . -maxdepth 3 -path './.*' -prune -o -type f \
      ! -name README.md -print 2>/dev/null | sed 's|^\./||' | sort | head -n 5)
    list=$(printf '%s\n' "$found" | grep . | paste -sd ',' - | sed 's/,/, /g')
    PROBLEM="submit one file named rlsys_ledger.py (found no .py file${list:+; other files: $list})"
    return
  fi
  list=$(printf '%s\n' "$found" | grep . | paste -sd ',' - | sed 's/,/, /g')
  PROBLEM="submit one file named rlsys_ledger.py (found: $list)"
}

# An empty file is graded: it does not load (0 of 100, "the file is empty"), as rlsys
# grade and rlsys batch score it.
pick_submission "${RLSYS_SUBMITTED:?}"
BROKEN="${RLSYS_BROKEN:-}"
[ -n "$BROKEN" ] || [ -s "$SEED" ] || BROKEN="${RLSYS_NO_SEED:-the assignment has no seed ($SEED)}"
OUTPUT=()
case "$KIND" in
  gradescope | prairielearn) OUTPUT=(--"$KIND" "$RESULT") ;;
esac
[ -z "${RLSYS_HIDDEN_VISIBILITY:-}" ] ||
  OUTPUT+=(--hidden-visibility "$RLSYS_HIDDEN_VISIBILITY")
if [ -z "$BROKEN" ] && [ -z "$PROBLEM" ]; then
  # The kits require the seccomp allow-list, not Landlock: each platform discards its
  # container after one grading, and a container runtime whose seccomp profile predates
  # Landlock's calls would otherwise refuse every submission (docs/threat-model.md).
  # -P: the current folder (a learner's repository) is not put on sys.path, so no folder
  # of theirs can pose as the grader's package.
  "$PY" -P -m pytest_rlsys grade "$SUBMISSION" --seed "@$SEED" --require-fence seccomp \
    --report "$SCORE" "${OUTPUT[@]}" 2>"$ERR"
  CODE=$?
  cat "$ERR" >&2
  [ -s "$SCORE" ] || BROKEN="$(tail -n 1 "$ERR") (rlsys grade exit status $CODE)"
fi

case "$KIND" in
  gradescope | prairielearn)
    if [ "$KIND" = gradescope ] && [ -n "$BROKEN" ]; then
      # No results.json: Gradescope records "The autograder failed to execute correctly"
      # (no score) and shows this output; fix the set-up, then "Regrade all submissions".
      echo "rlsys: infrastructure error, not a grade: $BROKEN"
      rm -f "$RESULT"
      exit 1
    fi
    if [ -n "$RESULT" ] && [ ! -s "$RESULT" ]; then
      # Needs only the standard library: it writes the file even when rlsys is broken.
      FPY="$PY"
      command -v "$FPY" >/dev/null 2>&1 || FPY=python3
      "$FPY" -I - "$RESULT" "$KIND" "$PROBLEM" "$BROKEN" <<'PYTHON'
import json, sys
path, kind, problem, broken = sys.argv[1:5]
def line(text):
    return "".join(c if c.isprintable() else "\\u%04x" % ord(c) for c in text)[:2000]
if broken or not problem:
    message = ("rlsys could not grade this submission: the grader's set-up is broken ("
               + line(broken or "the grader produced no result") + "). This is not a grade "
               "and not your file's fault: tell your course staff.")
else:
    message = "rlsys could not grade this submission: " + line(problem)
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
      --problem "$PROBLEM" --error "$BROKEN"
    ;;
esac
