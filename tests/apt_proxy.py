"""The only way out of a kit root's network namespace while its setup runs: apt's.

tests/kit_roots.sh runs a kit's setup in a fresh network namespace, so nothing in it (pip,
a script) reaches any network; apt alone is given a proxy, ``127.0.0.1:3142`` inside the
namespace, which this script forwards to a Unix socket outside it and from there to the
release's archive, and to nothing else: a request for any other URL closes the connection.
Every URL asked for is logged, so a run says exactly what apt needed.

    python tests/apt_proxy.py serve SOCKET LOG PREFIX...   (outside: the archive's side)
    python tests/apt_proxy.py forward SOCKET READY         (inside: loopback up, port 3142)
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import socket
import struct
import sys
import threading
import urllib.parse
from collections.abc import Callable
from pathlib import Path

PORT = 3142
REQUEST = re.compile(rb"^([A-Z]+) (\S+) HTTP/1\.[01]\r?$", re.MULTILINE)


def _pump(src: socket.socket, dst: socket.socket, check: Callable[[bytes], bool]) -> None:
    """Copy ``src`` to ``dst`` until either closes or ``check`` refuses a chunk."""
    with contextlib.suppress(OSError):
        while chunk := src.recv(65536):
            if not check(chunk):
                break
            dst.sendall(chunk)
    for end in (src, dst):
        with contextlib.suppress(OSError):
            end.shutdown(socket.SHUT_RDWR)


def _relay(a: socket.socket, b: socket.socket, check: Callable[[bytes], bool]) -> None:
    back = threading.Thread(target=_pump, args=(b, a, lambda _: True), daemon=True)
    back.start()
    _pump(a, b, check)
    back.join()
    a.close()
    b.close()


class _Requests:
    """apt's requests on one connection (GETs, no bodies): each URL allowed or not."""

    def __init__(self, prefixes: list[str], log: Path, lock: threading.Lock) -> None:
        self.prefixes, self.log, self.lock = prefixes, log, lock
        self.pending = b""

    def allowed(self, chunk: bytes) -> bool:
        self.pending = (self.pending + chunk)[-65536:]
        urls = [m.group(2).decode("latin-1") for m in REQUEST.finditer(self.pending)]
        self.pending = self.pending[self.pending.rfind(b"\n") + 1 :]
        ok = True
        for url in urls:
            fits = any(url.startswith(prefix) for prefix in self.prefixes)
            ok = ok and fits
            with self.lock, self.log.open("a", encoding="utf-8") as handle:
                handle.write(f"{'allowed' if fits else 'REFUSED'} {url}\n")
        return ok


def serve(path: str, log: Path, prefixes: list[str]) -> None:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(16)
    lock = threading.Lock()
    host = urllib.parse.urlsplit(prefixes[0])
    address = (host.hostname or "", host.port or 80)

    def one(client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(address, timeout=60)
        except OSError:
            client.close()
            return
        _relay(client, upstream, _Requests(prefixes, log, lock).allowed)

    while True:
        client, _ = server.accept()
        threading.Thread(target=one, args=(client,), daemon=True).start()


def _loopback_up() -> None:
    """``ip link set lo up`` without iproute2: a fresh network namespace's lo is down."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        got = fcntl.ioctl(s, siocgifflags, struct.pack("16sH", b"lo", 0))
        flags = struct.unpack("16sH", got[:18])[1]
        fcntl.ioctl(s, siocsifflags, struct.pack("16sH", b"lo", flags | iff_up))


def forward(path: str, ready: Path) -> None:
    _loopback_up()
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", PORT))
    server.listen(16)
    ready.write_text(f"{os.getpid()}\n")

    def one(client: socket.socket) -> None:
        outside = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            outside.connect(path)
        except OSError:
            client.close()
            return
        _relay(client, outside, lambda _: True)

    while True:
        client, _ = server.accept()
        threading.Thread(target=one, args=(client,), daemon=True).start()


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2], Path(sys.argv[3]), sys.argv[4:])
    else:
        forward(sys.argv[2], Path(sys.argv[3]))
