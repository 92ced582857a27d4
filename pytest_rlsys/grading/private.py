"""The grader's private files, kept from the submission's eyes when grading as root.

A child runs as another uid, but it can still read every world-readable file: from
``/proc/<ppid>/cmdline`` it finds the grader's interpreter and installation, and from
there the bundled reference solution and the battery's code (which, with the seed, gives
the hidden inputs).  Before a child runs as another user, the grader makes those folders
root-only (mode 0700: nothing under them can be listed or opened by anyone else, their
``__pycache__`` included), and refuses to grade if it cannot.
"""

from __future__ import annotations

import os
import stat
import sys
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
    (an editable install also leaves a bundled copy in site-packages)."""
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
    unique = dict.fromkeys(f.resolve() for f in folders if f.is_dir())
    return list(unique)


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
