"""The grader's private files, kept from the submission's eyes when grading as root.

A child runs as another uid, but it can still read every world-readable file: from
``/proc/<ppid>/cmdline`` it finds the grader's interpreter and installation, and from
there the bundled reference solution and the battery's code (which, with the seed, gives
the hidden inputs).  Before a child runs as another user, the grader makes those folders
root-only (mode 0700: nothing under them can be listed or opened by anyone else, their
``__pycache__`` included), and refuses to grade if it cannot.

The same holds for a checkout of this project that the child can find the same way: the
README's quick start installs the package (not editable) into a venv inside the checkout,
so ``/proc/<ppid>/cmdline`` names ``CHECKOUT/.venv/bin/python`` and the checkout's own
``solutions/`` was one walk up (a clean-room attack scored 100/100 that way).  Every
checkout above the interpreter's environment or a path on the grader's command line has
its copies of the reference made private too: ``solutions/``, the battery, the test
corpora (working implementations), its git objects, and ``exercises/`` where it holds the
reference.  Any other copy on the machine is the platform's to keep unreadable.
"""

from __future__ import annotations

import os
import stat
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "PrivateFilesError",
    "private_folders",
    "protect_private_files",
    "readable_by_others",
    "unreadable_battery",
]


class PrivateFilesError(ValueError):
    """A private folder is readable by other users and could not be made private."""


def private_folders() -> list[Path]:
    """Every folder holding the reference solution or the battery that this interpreter
    can see: the installed package's, the checkout's, and any other copy on ``sys.path``
    (an editable install also leaves a bundled copy in site-packages), and the copies in
    every checkout of this project that holds the grader's environment or a path it was
    given (``_checkouts``)."""
    from pytest_rlsys.grading import battery

    package = Path(__file__).resolve().parents[1]
    roots = [package.parent, *(Path(entry) for entry in sys.path if entry)]
    folders = [Path(battery.__file__).resolve().parent]
    for root in roots:
        folders += [
            root / "pytest_rlsys" / "_bundled" / "solutions",
            root / "pytest_rlsys" / "grading" / "battery",
        ]
        if (root / "pytest_rlsys").is_dir():  # a checkout: its solutions/ folder
            folders.append(root / "solutions")
    for checkout in _checkouts():
        folders += _copies_in(checkout)
    unique = dict.fromkeys(f.resolve() for f in folders if f.is_dir() and not f.is_symlink())
    return list(unique)


# What a child without Landlock could read to learn the grader's places: its command line
# (``/proc/<ppid>/cmdline``: the interpreter, the script, the paths it was given) and the
# interpreter's own environment.
def _places() -> Iterator[Path]:
    yield Path(sys.prefix)
    yield Path(sys.executable)
    for arg in sys.argv:
        for part in (arg, arg.partition("=")[2]):  # a relative one: the cwd and above
            if part and "\0" not in part:
                yield Path(os.path.abspath(part))


def _checkouts() -> list[Path]:
    """The checkouts of this project (a folder whose pyproject.toml names pytest-rlsys)
    at or above any of ``_places``."""
    found: dict[Path, None] = {}
    for place in _places():
        for folder in (place, *place.parents):
            if folder not in found and _names_this_project(folder / "pyproject.toml"):
                found[folder] = None
    return list(found)


def _names_this_project(path: Path) -> bool:
    from pytest_rlsys.safe_read import UnsafeFile, read_regular_file

    try:
        data = tomllib.loads(read_regular_file(path, 256 * 1024).decode("utf-8"))
    except (UnsafeFile, OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    project = data.get("project")
    name = project.get("name") if isinstance(project, dict) else None
    return isinstance(name, str) and name.lower().replace("_", "-") == "pytest-rlsys"


def _copies_in(checkout: Path) -> list[Path]:
    """The folders of a checkout that hold the reference, the battery or working
    implementations of the exercise (its test corpora), and its git objects (every
    version of them)."""
    from pytest_rlsys.resources import solution_path

    folders = [
        checkout / "solutions",
        checkout / "pytest_rlsys" / "grading" / "battery",
        checkout / "pytest_rlsys" / "_bundled" / "solutions",
        checkout / "tests" / "corpora",
        checkout / ".git",
    ]
    exercises = checkout / "exercises"  # the template, unless someone put the reference there
    try:
        reference = solution_path().read_bytes()
        for entry in exercises.glob("*.py") if exercises.is_dir() else ():
            same_size = entry.lstat().st_size == len(reference) and entry.is_file()
            if same_size and not entry.is_symlink() and entry.read_bytes() == reference:
                folders.append(exercises)
                break
    except OSError:  # unreadable: not a copy anyone else can read either
        pass
    # Only what lies inside the checkout: a folder "checkout" may be anyone's upload (its
    # pyproject.toml names this project, its tests/ a link to another user's folder), and
    # the grader, as root, must never change the modes of folders outside it.
    inside = checkout.resolve()
    return [f for f in folders if f.resolve().is_relative_to(inside)]


def readable_by_others(folder: Path) -> bool:
    mode = os.stat(folder).st_mode
    return bool(mode & (stat.S_IRWXG | stat.S_IRWXO))


_done = False


def protect_private_files() -> None:
    """Make the private folders root-only, once per process; only meaningful as root."""
    global _done
    if _done or os.geteuid() != 0:
        return
    for folder in private_folders():
        if not readable_by_others(folder):
            continue
        try:
            os.chmod(folder, 0o700)
        except OSError as exc:
            raise PrivateFilesError(
                f"{folder} is readable by other users and cannot be made private "
                f"({exc.strerror}); the submission could read the reference solution from "
                f"it. Run `chmod 700 {folder}` as root (or install the package on a "
                "writable file system) before grading as root."
            ) from None
    _done = True


def unreadable_battery() -> str | None:
    """For a grader that is not root: why it cannot grade when a grading as root made this
    installation's battery root-only (its import would find an empty folder), else None."""
    folder = Path(__file__).resolve().parent / "battery"
    if os.geteuid() == 0 or os.access(folder / "__init__.py", os.R_OK):
        return None
    return (
        f"{folder} is readable by root only: a grading as root made it private, so that no "
        "submission could read it. Grade as root, or install the package for your own user "
        "(python3 -m venv ~/rlsys && ~/rlsys/bin/pip install pytest-rlsys) and grade with that"
    )


def check_folder_private(folder: Path) -> str | None:
    """For ``rlsys batch`` as root: a problem when other users can read the submissions'
    folder (a child could then read its classmates' files), else None."""
    if os.geteuid() != 0:
        return None
    try:
        mode = os.stat(folder).st_mode
    except OSError as exc:
        return f"{folder}: {exc.strerror}"
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        return (
            f"{folder} can be read by other users (mode {stat.filemode(mode)}), so each "
            f"submission could read its classmates' files; run `chmod 700 {folder}` "
            "and grade again"
        )
    return None
