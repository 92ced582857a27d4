"""Every function spins forever, ignoring signals and swallowing exceptions (short limits)."""

import signal

for _name in ("SIGTERM", "SIGINT", "SIGHUP", "SIGXCPU", "SIGALRM"):
    try:
        signal.signal(getattr(signal, _name), signal.SIG_IGN)
    except (OSError, ValueError):
        pass


def _spin():
    while True:
        try:
            while True:
                pass
        except BaseException:  # swallow anything an in-process timeout could raise
            continue


def pipeline_capacity(*args, **kwargs):
    _spin()


def transfer_ledger(*args, **kwargs):
    _spin()


def evaluate_topology(*args, **kwargs):
    _spin()
