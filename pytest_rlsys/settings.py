"""Option values: each from the command line, else the ini file, else the default, with
errors that name where a bad value came from (the pytest-timeout way).  No pytest here."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pytest_rlsys.outputs.registry import parse_hidden_visibility, parse_junit_family

if TYPE_CHECKING:
    from pytest_rlsys.grading.isolation import Limits

# (option name without dashes, ini key, parser, help) — one help text for flag and ini.
HELP = {
    "submission": "Grade this learner file (.py) with the packaged battery.",
    "result": "Grade this verl closure result file (pt-verl-closure JSON).",
    "report": "Write the score report JSON (schema rlsys-score/1) to this path.",
    "gradescope": "Also write a Gradescope results.json to this path.",
    "prairielearn": "Also write a PrairieLearn results.json to this path.",
    "junit": "Also write JUnit XML with per-case points to this path.",
    "classroom": "Also write a GitHub Classroom runner result JSON to this path.",
    "seed": "Seed for the hidden cases (default: a fresh random seed, recorded in the report).",
    "lang": "Language of learner feedback: zh or en (default: from the locale).",
    "rubric": "Rubric file (TOML or JSON) overriding the points per section.",
    "timeout": "Wall-clock seconds allowed for one call into the submission (default 5).",
    "budget": "Wall-clock seconds for the whole submission; cases after it are not run "
              "(default 45).",
    "memory_mb": "Address-space limit of the submission's process in MiB (default 1024).",
    "cpu_seconds": "CPU-time limit of the submission's process in seconds (default 60).",
    "child_user": "When grading as root, run the submission as: auto (default: a fresh "
                  "unused uid for each child), a user name, or none (keep root).",
    "junit_family": "Layout of --rlsys-junit: xunit2 (default; valid against pytest's JUnit "
                    "schema, points as suite properties) or xunit1 (legacy: per-case "
                    "properties and <error> elements), as pytest's junit_family.",
    "hidden_visibility": "Gradescope visibility of the hidden cases: visible (default), "
                         "after_due_date, after_published or hidden.",
}


class SettingError(ValueError):
    """A bad option value; the message names the flag or ini key it came from."""


def _positive_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or value <= 0:
        raise ValueError("must be a positive number")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise ValueError("must be a positive whole number")
    return value


def _seed(text: str) -> int:
    value = int(text)
    if not 0 <= value < 2**63:
        raise ValueError("must be a whole number between 0 and 2**63 - 1")
    return value


def _lang(text: str) -> str:
    if text not in ("zh", "en"):
        raise ValueError("must be 'zh' or 'en'")
    return text


def _child_user(text: str) -> str:
    # Imported here: the plugin imports this module in every pytest run, and isolation
    # needs POSIX-only modules that a plain test run must not depend on.
    from pytest_rlsys.grading.isolation import child_identity

    child_identity(text)  # an unknown user is an error, never a silent fall back to root
    return text


PARSERS: dict[str, Callable[[str], Any]] = {
    "seed": _seed, "lang": _lang, "timeout": _positive_float, "budget": _positive_float,
    "memory_mb": _positive_int, "cpu_seconds": _positive_int, "child_user": _child_user,
    "junit_family": parse_junit_family, "hidden_visibility": parse_hidden_visibility,
}


def resolve(name: str, cli_value: Any, ini_value: Any) -> Any:
    """Parse one setting; None when neither source sets it."""
    parse = PARSERS[name]
    for value, where in ((cli_value, f"--rlsys-{name.replace('_', '-')}"),
                         (ini_value, f"ini option rlsys_{name}")):
        if value is None or value == "":
            continue
        try:
            return parse(str(value))
        except ValueError as exc:
            detail = (str(exc) if "must" in str(exc) or "no user" in str(exc)
                      else f"not a valid value ({exc})")
            raise SettingError(f"{where}={value!r}: {detail}") from None
    return None


def limits_from(values: dict[str, Any]) -> Limits:
    from pytest_rlsys.grading.isolation import Limits

    base = Limits()
    user = values.get("child_user")
    return Limits(
        call_timeout_s=values.get("timeout") or base.call_timeout_s,
        budget_s=values.get("budget") or base.budget_s,
        address_space_mb=values.get("memory_mb") or base.address_space_mb,
        cpu_seconds=values.get("cpu_seconds") or base.cpu_seconds,
        child_user=base.child_user if user is None else (None if user == "none" else user),
    )
