#!/usr/bin/env bash
# Installs each instructor kit offline in a root of its image's release and grades as the
# platform does (run by hand, as root; results: README, "Platform kits").
#
#   sudo tests/kit_roots.sh [CASE...]     (default: every case; RLSYS_ROOTS=/var/tmp/rlsys-roots)
#
# Cases (a case whose Python is missing here is skipped, and said so):
#   gs-bookworm  Gradescope kit, Debian 12 root, its python3 (3.11, no venv module: the
#                kit's setup.sh takes python3-venv from the archive)
#   gs-trixie    Gradescope kit, Debian 13 root, its python3 (3.13, same)
#   gs-py310     Gradescope kit, Debian 12 root whose python3 is a CPython 3.10 (pyenv), as
#                Ubuntu 22.04's is: setup.sh takes python3.11 from the archive
#   gs-py312     Gradescope kit, Debian 12 root whose python3 is a CPython 3.12 (pyenv), as
#                Ubuntu 24.04's is
#   pl-py311     PrairieLearn kit: its Dockerfile's RUN line (the dependencies) on a Debian
#                13 root with a CPython 3.11 at /usr/local/bin/python (as python:3.11-slim),
#                then tests/run.sh (which installs pytest-rlsys) as the external grader runs it
#   cr-py311     Actions kit: the workflow's install and grading steps as a non-root user
#                (as GitHub's runner), `python` a CPython 3.11 (as actions/setup-python)
#   gs-jammy     Gradescope kit, Ubuntu 22.04 root (Gradescope's default image), its python3
#                (3.10): setup.sh takes python3.11 and python3.11-venv from Ubuntu's archive
#   gs-noble     Gradescope kit, Ubuntu 24.04 root, its python3 (3.12, no venv module:
#                setup.sh takes python3-venv from the archive)
#   cr-noble     Actions kit on an Ubuntu 24.04 root (ubuntu-latest), as cr-py311
#
# Roots come from debootstrap: Debian's archive, Ubuntu's for the Ubuntu cases (skipped,
# and said so, where Ubuntu's archive or its keyring is missing here: UBUNTU_MIRROR,
# UBUNTU_KEYRING).  An Ubuntu root gets the apt sources of Docker's ubuntu image (the
# release, -updates and -security; main, restricted, universe, multiverse).  While the
# Gradescope kit's setup.sh runs, apt alone has a network, to its release's archive and
# nothing else (tests/apt_proxy.py; a platform's image build can reach its archive); pip's
# index is a closed port besides.  The other kits install, and every kit grades, with no
# network at all (a fresh network namespace).  Each case grades the reference solution
# (must score 100) and the untouched template (must score 0).
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
RLSYS="${RLSYS:-$HERE/.venv/bin/rlsys}"
PYTHON="$(dirname "$RLSYS")/python"
ROOTS="${RLSYS_ROOTS:-/var/tmp/rlsys-roots}"
PYENV="${PYENV_ROOT:-$HOME/.pyenv}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
UBUNTU_MIRROR="${UBUNTU_MIRROR:-http://archive.ubuntu.com/ubuntu}"
UBUNTU_KEYRING="${UBUNTU_KEYRING:-/usr/share/keyrings/ubuntu-archive-keyring.gpg}"
CASES=("$@")
[ ${#CASES[@]} -gt 0 ] ||
  CASES=(gs-bookworm gs-trixie gs-py310 gs-py312 pl-py311 cr-py311 gs-jammy gs-noble cr-noble)
[ "$(id -u)" = 0 ] || { echo "kit_roots.sh: run as root (chroot, mounts)" >&2; exit 2; }
mkdir -p "$ROOTS"
WORK="$(mktemp -d "$ROOTS/run.XXXXXX")"
trap '[ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
REFERENCE="$("$PYTHON" -c 'from pytest_rlsys.resources import solution_path; print(solution_path())')"
TEMPLATE="$("$PYTHON" -c 'from pytest_rlsys.resources import exercise_path; print(exercise_path())')"

ubuntu() { case "$1" in jammy | noble) return 0 ;; *) return 1 ;; esac; }

# Why Ubuntu release $1 cannot be debootstrapped here, or nothing.
no_ubuntu() {
  [ -s "$UBUNTU_KEYRING" ] || {
    echo "no Ubuntu archive keyring at $UBUNTU_KEYRING (Debian 13+: apt-get install" \
      "ubuntu-keyring; or UBUNTU_KEYRING=FILE)"
    return
  }
  "$PYTHON" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=10)' \
    "$UBUNTU_MIRROR/dists/$1/Release" 2>/dev/null ||
    echo "Ubuntu's archive is unreachable from here ($UBUNTU_MIRROR/dists/$1/Release)"
}

base() {  # a pristine root of release $1 (debootstrapped once, then copied)
  if [ ! -x "$ROOTS/base-$1/usr/bin/python3" ]; then
    rm -rf "$ROOTS/base-$1"
    if ubuntu "$1"; then
      # The gutsy script serves every Ubuntu release (an older debootstrap lacks noble's).
      debootstrap --variant=minbase --include=python3 --components=main,universe \
        --keyring="$UBUNTU_KEYRING" "$1" "$ROOTS/base-$1" "$UBUNTU_MIRROR" \
        /usr/share/debootstrap/scripts/gutsy
    else
      debootstrap --variant=minbase --include=python3 "$1" "$ROOTS/base-$1" "$MIRROR"
    fi >"$ROOTS/base-$1.log" 2>&1 || { tail -n 5 "$ROOTS/base-$1.log" >&2; return 1; }
    if ubuntu "$1"; then  # Docker's ubuntu image's sources
      for pocket in "$1" "$1-updates" "$1-security"; do
        echo "deb $UBUNTU_MIRROR $pocket main restricted universe multiverse"
      done >"$ROOTS/base-$1/etc/apt/sources.list"
    fi
  fi
  R="$WORK/$CASE"
  cp -a "$ROOTS/base-$1" "$R"
  cp /etc/resolv.conf "$R/etc/resolv.conf"
}

pyenv_python() {  # the newest pyenv CPython $1 here, or nothing
  find "$PYENV/versions" -maxdepth 3 -path "*/$1.*/bin/python$1" 2>/dev/null | sort -V | tail -n 1
}

# Run "$@" in the root $R as its root user: private /proc and /dev, the pyenv Pythons
# read-only at their own paths, no package index for pip.  NET=none: no network at all (a
# fresh network namespace, loopback down); NET=apt: the same, but for apt's proxy on
# 127.0.0.1:3142, forwarded to apt_proxy's socket outside (start_apt_proxy).
in_root() {
  unshare --mount ${NET:+--net} --fork bash -s "$R" "$PYENV" "${NET:-}" "$PYTHON" "$HERE" \
    "$WORK" "$@" <<'EOF'
R="$1"; PYENV="$2"; NET="$3"; PYTHON="$4"; HERE="$5"; WORK="$6"; shift 6
mount -t proc proc "$R/proc"
mount --rbind /dev "$R/dev"
if [ -d "$PYENV/versions" ]; then
  mkdir -p "$R$PYENV/versions"
  mount --bind "$PYENV/versions" "$R$PYENV/versions"
  mount -o remount,bind,ro "$R$PYENV/versions"
fi
FORWARD=
if [ "$NET" = apt ]; then
  rm -f "$WORK/forward.ready"
  "$PYTHON" "$HERE/tests/apt_proxy.py" forward "$WORK/apt.sock" "$WORK/forward.ready" &
  FORWARD=$!
  for _ in $(seq 100); do [ -s "$WORK/forward.ready" ] && break; sleep 0.1; done
fi
chroot "$R" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 \
  PIP_INDEX_URL=http://127.0.0.1:9/simple PIP_CONFIG_FILE=/dev/null PIP_RETRIES=0 \
  PIP_TIMEOUT=1 "$@" </dev/null
CODE=$?
[ -z "$FORWARD" ] || kill "$FORWARD"
exit "$CODE"
EOF
}

# apt's only way out while a kit's setup runs (NET=apt): the archive at $1, nothing else;
# every URL apt asked for goes to $WORK/$CASE.apt.
PROXY=
start_apt_proxy() {
  rm -f "$WORK/apt.sock" "$WORK/$CASE.apt"
  "$PYTHON" "$HERE/tests/apt_proxy.py" serve "$WORK/apt.sock" "$WORK/$CASE.apt" "$1/" &
  PROXY=$!
  for _ in $(seq 100); do [ -S "$WORK/apt.sock" ] && break; sleep 0.1; done
  echo 'Acquire::http::Proxy "http://127.0.0.1:3142/";' >"$R/etc/apt/apt.conf.d/99rlsys-proxy"
}

stop_apt_proxy() {  # $1: the archive; and say what apt fetched from it
  kill "$PROXY" 2>/dev/null || true
  wait "$PROXY" 2>/dev/null || true
  rm -f "$R/etc/apt/apt.conf.d/99rlsys-proxy" "$WORK/apt.sock"
  touch "$WORK/$CASE.apt"
  if grep -q "^REFUSED" "$WORK/$CASE.apt"; then
    echo "FAIL $CASE: setup asked for $(grep -m 1 "^REFUSED" "$WORK/$CASE.apt")"; FAILED=1
  fi
  NET_USED="network: apt only, $(grep -c "^allowed" "$WORK/$CASE.apt") URLs of $1"
}

score() {  # the score out of 100 in the platform file $1 (PrairieLearn's is a fraction: $2 100)
  "$PYTHON" -c 'import json, sys; print("%g" % (json.load(open(sys.argv[1]))["score"] *
                float(sys.argv[2])))' "$1" "${2:-1}"
}

offline() {  # the install log $1 shows no fallback to the package index
  if grep -q "package index" "$1"; then echo "FAIL $CASE: pip needed the index"; FAILED=1; fi
}

started() {  # the grading log $1 shows no child that its uid could not start
  if grep -q "failed to execute" "$1"; then
    echo "FAIL $CASE: the child's first interpreter was out of its uid's reach"; FAILED=1
  fi
}

gradescope() {  # $1: release; $2: the CPython version the root's python3 is, or ""
  base "$1"
  if [ -n "$2" ]; then
    exe="$(pyenv_python "$2")"
    ln -sf "$exe" "$R/usr/local/bin/python3"
  fi
  "$RLSYS" kit gradescope "$WORK/kit-$CASE" >/dev/null
  mkdir -p "$R/autograder/source" "$R/autograder/submission"
  unzip -q "$WORK/kit-$CASE/autograder.zip" -d "$R/autograder/source"
  # Gradescope's build copies run_autograder to /autograder, whose runs start there
  # (specs.md); where setup.sh runs from is not said: here from a copy outside source/.
  cp "$R/autograder/source/run_autograder" "$R/autograder/source/setup.sh" "$R/autograder/"
  if ubuntu "$1"; then mirror=$UBUNTU_MIRROR; else mirror=$MIRROR; fi
  start_apt_proxy "$mirror"
  NET=apt in_root bash -c 'cd /autograder && bash ./setup.sh' >"$WORK/$CASE.log" 2>&1 ||
    { stop_apt_proxy "$mirror"; tail -n 20 "$WORK/$CASE.log"; echo "FAIL $CASE: setup.sh"
      return 1; }
  stop_apt_proxy "$mirror"
  offline "$WORK/$CASE.log"
  apt=$(grep -o "^Setting up python3[.0-9]*-venv\|^Setting up python3[.0-9]* " "$WORK/$CASE.log" |
        sed 's/Setting up //; s/ $//' | paste -sd ' ' -)
  got=()
  for file in "$REFERENCE" "$TEMPLATE"; do
    cp "$file" "$R/autograder/submission/rlsys_ledger.py"
    NET=none in_root bash -c 'cd /autograder && ./run_autograder' >>"$WORK/$CASE.log" 2>&1 ||
      true
    got+=("$(score "$R/autograder/results/results.json")")
  done
  started "$WORK/$CASE.log"
  version=$(in_root /autograder/rlsys-venv/bin/python -V 2>&1)
  report "$version; apt installed: ${apt:-nothing}; $NET_USED" "${got[@]}"
}

image_python() {  # CPython $1 as the image's `python` and `python3` (a venv of a pyenv one)
  exe="$(pyenv_python "$1")"
  in_root "$exe" -m venv /opt/python
  for name in python python3; do  # a link would lose the venv: a script runs it
    printf '#!/bin/sh\nexec /opt/python/bin/python "$@"\n' >"$R/usr/local/bin/$name"
    chmod 755 "$R/usr/local/bin/$name"
  done
}

prairielearn() {
  base trixie  # what python:3.11-slim is built on today
  image_python 3.11
  kit="$WORK/kit-$CASE"
  "$RLSYS" kit prairielearn "$kit" >/dev/null
  grep -q "^FROM python:3.11-slim" "$kit/docker/Dockerfile"
  # The Dockerfile's one RUN: the dependencies from docker/wheels, bind-mounted (then gone:
  # no layer holds them); pytest-rlsys itself comes with tests/ and installs as grading starts.
  cp -r "$kit/docker/wheels" "$R/tmp/rlsys-wheels"
  NET=none in_root python -m pip install --no-cache-dir --disable-pip-version-check \
    --no-index --find-links /tmp/rlsys-wheels -r /tmp/rlsys-wheels/constraints.txt \
    >"$WORK/$CASE.log" 2>&1 ||
    { tail -n 20 "$WORK/$CASE.log"; echo "FAIL $CASE: install"; return 1; }
  rm -rf "$R/tmp/rlsys-wheels"
  got=()
  for file in "$REFERENCE" "$TEMPLATE"; do
    rm -rf "$R/grade"
    mkdir -p "$R/grade/student"
    cp -r "$kit/tests" "$R/grade/tests"
    cp "$file" "$R/grade/student/rlsys_ledger.py"
    NET=none in_root bash /grade/tests/run.sh >>"$WORK/$CASE.log" 2>&1 || true
    got+=("$(score "$R/grade/results/results.json" 100)")
  done
  offline "$WORK/$CASE.log"
  started "$WORK/$CASE.log"
  report "$(in_root python -V 2>&1)" "${got[@]}"
}

actions() {  # $1: release
  base "$1"
  image_python 3.11
  echo "runner:x:1001:1001::/tmp/runner:/bin/bash" >>"$R/etc/passwd"  # GitHub's runner user
  echo "runner:x:1001:" >>"$R/etc/group"
  kit="$WORK/kit-$CASE"
  seed=$("$RLSYS" kit actions "$kit" | sed -n 's/.*RLSYS_SEED = \([0-9]*\).*/\1/p')
  got=()
  for file in "$REFERENCE" "$TEMPLATE"; do
    rm -rf "$R/checkout" "$R/tmp/runner"
    cp -r "$kit" "$R/checkout"
    mkdir -p "$R/tmp/runner"
    cp "$file" "$R/checkout/rlsys_ledger.py"
    # GitHub's runner user is not root: it owns the checkout and setup-python's Python.
    chown -R 1001:1001 "$R/checkout" "$R/tmp/runner" "$R/opt/python"
    chmod 755 "$R/root"  # the way to the pyenv Python under it
    NET=none in_root setpriv --reuid=1001 --regid=1001 --clear-groups bash -c "cd /checkout && \
      sh .github/rlsys/install.sh python .github/rlsys/wheels && RLSYS_SEED=$seed \
      RUNNER_TEMP=/tmp/runner GITHUB_STEP_SUMMARY=/tmp/runner/summary bash .github/rlsys/grade.sh" \
      >"$WORK/$CASE.log" 2>&1 || true
    offline "$WORK/$CASE.log"
    got+=("$(grep -o "Points [0-9.]*" "$WORK/$CASE.log" | tail -n 1 | cut -d' ' -f2)")
  done
  report "$(in_root python -V 2>&1)" "${got[@]}"
}

FAILED=0
report() {  # $1: what ran; $2, $3: the reference's and the template's scores
  if [ "$2" = 100 ] && [ "$3" = 0 ]; then verdict=ok; else verdict=FAIL; FAILED=1; fi
  echo "$verdict $CASE: $1; reference $2, template $3"
}

for CASE in "${CASES[@]}"; do
  case "$CASE" in
    gs-py310) need=3.10 ;; gs-py312) need=3.12 ;; pl-py311 | cr-*) need=3.11 ;; *) need= ;;
  esac
  if [ -n "$need" ] && [ -z "$(pyenv_python "$need")" ]; then
    echo "skip $CASE: no CPython $need under $PYENV/versions"; continue
  fi
  case "$CASE" in *-jammy) release=jammy ;; *-noble) release=noble ;; *) release= ;; esac
  if [ -n "$release" ] && [ -n "$(no_ubuntu "$release")" ]; then
    echo "skip $CASE: $(no_ubuntu "$release")"; continue
  fi
  case "$CASE" in
    gs-bookworm) gradescope bookworm "" ;;
    gs-trixie) gradescope trixie "" ;;
    gs-py310) gradescope bookworm 3.10 ;;
    gs-py312) gradescope bookworm 3.12 ;;
    pl-py311) prairielearn ;;
    cr-py311) actions bookworm ;;
    gs-jammy) gradescope jammy "" ;;
    gs-noble) gradescope noble "" ;;
    cr-noble) actions noble ;;
    *) echo "unknown case $CASE" >&2; exit 2 ;;
  esac || FAILED=1
  [ -n "${KEEP:-}" ] || rm -rf "${R:?}"
done
exit "$FAILED"
