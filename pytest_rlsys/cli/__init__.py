"""The ``rlsys`` command: one entry point, a sub-command per job."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

USAGE = """usage: rlsys COMMAND [ARGS...]

commands:
  grade FILE        grade one submission (same battery as pytest --rlsys-submission)
  batch DIR         grade every submission in a folder, in parallel, to CSV/JSON
  template [PATH]   write the learner template (stdout when no PATH)
  validate FILE...  validate pt-verl-closure result files against their schema
  result FILE       grade a result file's checks from its own evidence
  closure ...       the verl release/retain experiment: preflight | run | summary
  ledger TOPOLOGY   capacity, transfer and admission report for a topology file

Run 'rlsys COMMAND --help' for a command's options.
"""


def _load(command: str) -> Callable[[Sequence[str]], int] | None:
    # Imported lazily so that one broken optional part never breaks the others.
    if command == "validate":
        from pytest_rlsys.cli.validate import main as validate_main

        return validate_main
    if command == "result":
        from pytest_rlsys.cli.validate import grade_main

        return grade_main
    if command == "closure":
        from rlsys_closure.cli import main as closure_main

        return closure_main
    if command in {"grade", "batch", "template", "ledger"}:
        import pytest_rlsys.cli.commands as commands

        handler: Callable[[Sequence[str]], int] = getattr(commands, f"{command}_main")
        return handler
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in {"-h", "--help", "help"}:
        sys.stdout.write(USAGE)
        return 0 if args else 2
    handler = _load(args[0])
    if handler is None:
        sys.stderr.write(f"rlsys: unknown command {args[0]!r}\n\n{USAGE}")
        return 2
    try:
        return handler(args[1:])
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        sys.stderr.write("rlsys: interrupted\n")
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
