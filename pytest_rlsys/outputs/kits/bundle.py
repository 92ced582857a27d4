"""What a kit carries so that it installs with no package-index release: the wheel of this
pytest-rlsys and a wheel of every dependency, pinned.

Rules (SPEC section 6, "Instructor kits"):

- The kit carries the package it was built from: the ``--wheel`` given, else a wheel
  packed here from the installed package (a regular install is repacked from its
  ``RECORD``; an editable one from its source folders, laid out as the real wheel lays them
  out: ``pytest_rlsys/``, ``rlsys_closure/`` and ``pytest_rlsys/_bundled/{exercises,
  solutions,schemas}``).
- Every dependency grading needs (``Requires-Dist`` without extras, markers evaluated
  for this interpreter, transitively) is pinned to the installed version in
  ``constraints.txt`` and repacked from its installed files into a wheel with the tags
  its own ``WHEEL`` file records, so the platform can install offline
  (``pip install --no-index --find-links wheels``).  A wheel built for another Python or
  machine does not fit every image: the kit's script then falls back to the package index
  for the same pinned versions (``-c constraints.txt``), so next month's image is today's.
- A binary wheel built for one Python only (``cp311-cp311``) is also fetched, same pinned
  version, for every other Python the kit's images run (``pythons``, e.g. Gradescope's
  Ubuntu 22.04 installs 3.11 and 24.04 has 3.12), with ``pip download``; where that fails
  (no network while building) the kit says so and that Python falls back to the index.
- A binary wheel built for another platform than the images' Linux x86-64 (the kit built on
  macOS or on arm64) is not carried: it is fetched, for every Python, the same way.
- Packed wheels are reproducible: sorted entries, fixed timestamps, a fresh ``RECORD``.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata as metadata
import io
import json
import re
import subprocess
import sys
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from pytest_rlsys import __version__

__all__ = ["PACKAGE", "Bundle", "BundleError", "build_bundle", "pack_installed"]

PACKAGE = "pytest-rlsys"
_EPOCH = (1980, 1, 1, 0, 0, 0)
# Written by the installer, not part of a wheel.
_INSTALLER_FILES = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}


class BundleError(Exception):
    """A dependency cannot be found or packed."""


@dataclass(frozen=True)
class Bundle:
    """The wheels a kit carries (file names inside its ``wheels/`` folder)."""

    main: str  # the pytest-rlsys wheel
    wheels: tuple[str, ...]  # every wheel, main included
    pins: tuple[str, ...]  # ``name==version`` of every dependency
    python: str  # "3.11": the Python the packed binary wheels were built for
    notes: tuple[str, ...] = field(default=())
    pythons: tuple[str, ...] = field(default=())  # every Python all the wheels fit

    @property
    def constraints(self) -> str:
        head = (
            f"# The dependencies of pytest-rlsys {__version__} this kit was built with "
            f"(Python {', '.join(self.pythons or (self.python,))}); pip install -c this "
            "file.\n"
        )
        return head + "".join(f"{pin}\n" for pin in self.pins)


def _wheel_name(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _write_wheel(path: Path, entries: Iterable[tuple[str, bytes]], dist_info: str) -> None:
    """A wheel at ``path`` holding ``entries`` plus a fresh RECORD, reproducibly."""
    items = sorted(dict(entries).items())
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for name, data in items:
        writer.writerow([name, _record_hash(data), len(data)])
    writer.writerow([f"{dist_info}/RECORD", "", ""])
    items.append((f"{dist_info}/RECORD", record.getvalue().encode("utf-8")))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in items:
            info = zipfile.ZipInfo(name, _EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)


def _tags(dist: metadata.Distribution) -> str:
    """The wheel's compressed tag set from its WHEEL file (``py2.py3-none-any``)."""
    text = dist.read_text("WHEEL") or ""
    tags = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Tag:")]
    parts = [tag.split("-") for tag in tags if tag.count("-") == 2]
    if not parts:
        return "py3-none-any"
    return "-".join(".".join(dict.fromkeys(p[i] for p in parts)) for i in range(3))


def _skipped(relative: str) -> bool:
    parts = relative.split("/")
    return (
        relative.startswith(("..", "/"))  # scripts and data outside site-packages
        or "__pycache__" in parts
        or relative.endswith(".pyc")
    )


def _is_editable(dist: metadata.Distribution) -> bool:
    try:
        info = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        return False
    return isinstance(info, dict) and bool((info.get("dir_info") or {}).get("editable"))


def pack_installed(dist: metadata.Distribution, dest: Path) -> Path:
    """Repack an installed (not editable) distribution into a wheel in ``dest``."""
    name = dist.metadata["Name"]
    version = dist.version
    files = dist.files
    base = Path(str(dist.locate_file("")))
    if not files:
        raise BundleError(f"{name} {version}: no RECORD of its files; cannot bundle it")
    dist_info = f"{_wheel_name(name)}-{version}.dist-info"
    entries: list[tuple[str, bytes]] = []
    for file in files:
        relative = str(file).replace("\\", "/")
        if _skipped(relative):
            continue
        top, _, leaf = relative.partition("/")
        if top.endswith(".dist-info"):
            if leaf in _INSTALLER_FILES:
                continue
            relative = f"{dist_info}/{leaf}"
        try:
            entries.append((relative, (base / str(file)).read_bytes()))
        except OSError as exc:
            raise BundleError(f"{name} {version}: cannot read {file} ({exc.strerror})") from None
    path = dest / f"{_wheel_name(name)}-{version}-{_tags(dist)}.whl"
    _write_wheel(path, entries, dist_info)
    return path


def _tree(folder: Path, prefix: str) -> Iterator[tuple[str, bytes]]:
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if path.is_file() and not path.is_symlink() and not _skipped(relative):
            yield f"{prefix}/{relative}", path.read_bytes()


def _pack_source(dist: metadata.Distribution, dest: Path) -> Path:
    """pytest-rlsys installed editable: its wheel, from the folders the import uses."""
    import pytest_rlsys
    from pytest_rlsys.resources import data_dir

    package = Path(pytest_rlsys.__file__).resolve().parent
    entries = [e for e in _tree(package, "pytest_rlsys") if "/_bundled/" not in e[0]]
    for name in ("exercises", "solutions", "schemas"):
        entries += _tree(data_dir(name), f"pytest_rlsys/_bundled/{name}")
    closure = package.parent / "gpu" / "rlsys_closure"
    if closure.is_dir():  # the runner package the real wheel carries too
        entries += _tree(closure, "rlsys_closure")
    dist_info = f"pytest_rlsys-{__version__}.dist-info"
    wheel = "Wheel-Version: 1.0\nGenerator: pytest-rlsys kit\nRoot-Is-Purelib: true\n"
    entries += [
        (f"{dist_info}/METADATA", (dist.read_text("METADATA") or "").encode("utf-8")),
        (f"{dist_info}/WHEEL", (wheel + "Tag: py3-none-any\n").encode("utf-8")),
        (f"{dist_info}/entry_points.txt", (dist.read_text("entry_points.txt") or "").encode()),
    ]
    path = dest / f"pytest_rlsys-{__version__}-py3-none-any.whl"
    _write_wheel(path, entries, dist_info)
    return path


def _dependencies(dist: metadata.Distribution) -> list[metadata.Distribution]:
    """Every installed distribution ``dist`` needs (no extras), breadth first."""
    found: dict[str, metadata.Distribution] = {}
    queue = [dist]
    while queue:
        current = queue.pop(0)
        for text in current.requires or []:
            try:
                requirement = Requirement(text)
            except InvalidRequirement:
                continue
            if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
                continue
            key = canonicalize_name(requirement.name)
            if key in found or key == canonicalize_name(PACKAGE):
                continue
            try:
                needed = metadata.distribution(requirement.name)
            except metadata.PackageNotFoundError:
                raise BundleError(
                    f"{requirement.name} (needed by {current.metadata['Name']}) is not "
                    "installed; install pytest-rlsys with its dependencies first"
                ) from None
            found[key] = needed
            queue.append(needed)
    return [found[key] for key in sorted(found)]


# Where the kits' images run: Linux on x86-64 (Gradescope, PrairieLearn, GitHub's runners).
_LINUX_TAGS = ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64")


def _one_python_only(tags: str) -> bool:
    """Whether a wheel with these tags fits one CPython version only (not ``none``/``abi3``)."""
    return not all(abi in ("none", "abi3") for abi in tags.split("-")[1].split("."))


def _fits_the_images(tags: str) -> bool:
    """Whether a wheel with these tags installs on Linux x86-64 (not a macOS or arm64 one,
    packed where the kit was built)."""
    platforms = tags.split("-")[2].split(".")
    return "any" in platforms or any(
        p.startswith(("manylinux", "linux")) and p.endswith("x86_64") for p in platforms
    )


def _fetch_for(python: str, pin: str, dest: Path) -> str:
    """Download the binary wheel of ``pin`` for CPython ``python`` into ``dest``; "" when
    done, else why not."""
    short = python.replace(".", "")
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
    command += ["--disable-pip-version-check", "--only-binary", ":all:", "--dest", str(dest)]
    command += ["--python-version", python, "--implementation", "cp", "--abi", f"cp{short}"]
    command += [arg for tag in _LINUX_TAGS for arg in ("--platform", tag)]
    try:
        done = subprocess.run(
            [*command, pin], capture_output=True, text=True, timeout=300, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    lines = (done.stderr or done.stdout).strip().splitlines()
    return "" if done.returncode == 0 else (lines[-1] if lines else f"exit {done.returncode}")


def build_bundle(dest: Path, wheel: Path | None = None, pythons: Iterable[str] = ()) -> Bundle:
    """Write the main wheel and every dependency's wheel into ``dest``; a dependency whose
    wheel fits only this Python is also fetched for each of ``pythons``."""
    dest.mkdir(parents=True, exist_ok=True)
    try:
        dist = metadata.distribution(PACKAGE)
    except metadata.PackageNotFoundError:
        raise BundleError(
            "pytest-rlsys is not installed (only imported from a folder): install it, or "
            "pass --wheel"
        ) from None
    notes: list[str] = []
    if wheel is not None:
        main = dest / wheel.name
        main.write_bytes(wheel.read_bytes())
    elif _is_editable(dist):
        main = _pack_source(dist, dest)
        notes.append(f"packed {main.name} from the editable install's source folders")
    else:
        main = pack_installed(dist, dest)
    names = [main.name]
    pins = []
    narrow = []  # fit this Python only
    foreign = []  # fit no image (built for this machine's platform): fetched for every Python
    for needed in _dependencies(dist):
        packed = pack_installed(needed, dest)
        pins.append(f"{needed.metadata['Name']}=={needed.version}")
        if not _fits_the_images(_tags(needed)):
            packed.unlink()
            foreign.append(pins[-1])
            continue
        names.append(packed.name)
        if _one_python_only(_tags(needed)):
            narrow.append(pins[-1])
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    fits = []
    for other in sorted({*pythons, python}):
        before = {p.name for p in dest.iterdir()}
        wanted = foreign + (narrow if other != python else [])
        problems = [(pin, why) for pin in wanted if (why := _fetch_for(other, pin, dest))]
        names += sorted({p.name for p in dest.iterdir()} - before)
        if problems:
            pin, why = problems[0]
            notes.append(
                f"no wheel of {pin} for Python {other} ({why}): on an image with Python "
                f"{other} the kit installs it from the package index"
            )
        else:
            fits.append(other)
    return Bundle(main.name, tuple(names), tuple(pins), python, tuple(notes), tuple(fits))
