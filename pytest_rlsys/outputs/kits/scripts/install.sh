#!/bin/sh
# Installs the bundled pytest-rlsys into the Python "$1" from the wheels in "$2" (every
# kit): offline, with every dependency pinned (constraints.txt); only a wheel that does not
# fit this Python falls back to the package index, for the same pins.  Then it makes the
# installed package root-only.  It reads "$2" and never changes it (a Classroom 50 bundle,
# an Actions checkout or a dry run on the pushed folder stays whole): a platform whose
# submission runs as another uid (Gradescope, PrairieLearn) deletes its wheels itself.
# POSIX sh: python:*-slim images have dash.
set -eu
PY="$1"
WHEELS="$2"
MAIN=""
for wheel in "$WHEELS"/pytest_rlsys-*.whl; do MAIN="$wheel"; done
if [ ! -f "$MAIN" ]; then
  echo "rlsys: no pytest_rlsys wheel in $WHEELS: build the kit again (rlsys kit)" >&2
  exit 1
fi
# pip unpacks the wheels (the reference among them) under TMPDIR: a private folder of our
# own, removed at the end, so nothing is left in /tmp and nobody else's files are touched.
TMPDIR=$(mktemp -d)
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT
if ! "$PY" -m pip install --no-cache-dir --disable-pip-version-check --no-index \
  --find-links "$WHEELS" -c "$WHEELS/constraints.txt" "$MAIN"; then
  echo "rlsys: a bundled wheel does not fit $("$PY" -V 2>&1); installing the same" \
    "pinned versions from the package index" >&2
  "$PY" -m pip install --no-cache-dir --disable-pip-version-check \
    --find-links "$WHEELS" -c "$WHEELS/constraints.txt" "$MAIN"
fi
PKG=$("$PY" -I -c 'import os, pytest_rlsys; print(os.path.dirname(pytest_rlsys.__file__))')
chmod -R go-rwx "$PKG"
