#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image (its
# Ubuntu 22.04 or 24.04 base image).  rlsys needs Python >= 3.11: the image's own python3
# when it is one (24.04: 3.12; only its venv module, python3-venv, may come from the
# archive), else python3.11 from the archive (22.04: its python3 is 3.10).  The bundled
# wheels fit the Pythons wheels/constraints.txt names; another one takes the same pinned
# versions from the package index.
set -euo pipefail
ROOT="${RLSYS_AUTOGRADER_ROOT:-/autograder}"
HERE="$(cd "$(dirname "$0")" && pwd)"
# The zip's files are in $ROOT/source (Gradescope's specs.md); it copies run_autograder to
# $ROOT and does not say where setup.sh runs from: from a copy, the files are still found.
[ -f "$HERE/install.sh" ] || HERE="$ROOT/source"
VENV="$ROOT/rlsys-venv"
RECENT='import sys; sys.exit(sys.version_info < (3, 11))'
# Whether "$1" is a Python >= 3.11 that can make rlsys's venv (it then has).
venv_from() {
  rm -rf "$VENV"
  "$1" -c "$RECENT" 2>/dev/null && "$1" -m venv "$VENV" >/dev/null 2>&1
}
apt_get() { DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@"; }
PY=python3
if ! venv_from python3; then
  apt-get update -q
  command -v python3 >/dev/null 2>&1 || apt_get python3
  if ! python3 -c "$RECENT"; then
    PY=python3.11 # an older python3 (Ubuntu 22.04: 3.10)
  fi
  apt_get "$PY" "$PY-venv" || {
    echo "rlsys: the archive did not install $PY and $PY-venv (22.04: python3.11 is in" \
      "Ubuntu's universe component); or choose the Ubuntu 24.04 base image (python3 3.12)" >&2
    exit 1
  }
  venv_from "$PY" || {
    echo "rlsys: no Python >= 3.11 with venv here; base image: Ubuntu 22.04 or 24.04" >&2
    exit 1
  }
fi
sh "$HERE/install.sh" "$VENV/bin/python" "$HERE/wheels"
# The wheels hold the reference: gone before any submission runs (Gradescope unzipped
# this copy for the image; autograder.zip itself is untouched).
rm -rf "$HERE/wheels"
# The assignment's seed: root-only, read by run_autograder as --seed @FILE.
install -d -m 700 "$ROOT/rlsys-secret"
install -m 600 "$HERE/rlsys-seed" "$ROOT/rlsys-secret/seed"
rm -f "$HERE/rlsys-seed"
chmod 700 "$VENV" "$HERE"
"$VENV/bin/python" -I -c 'import pytest_rlsys.cli'
