"""tests/apt_proxy.py, apt's only way out of a kit root while its setup runs: every URL
asked for is logged, and one outside the archive closes the connection."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

from tests import apt_proxy

ARCHIVE = "http://archive.ubuntu.com/ubuntu/"


def _requests(log: Path) -> apt_proxy._Requests:
    return apt_proxy._Requests([ARCHIVE], log, threading.Lock())


def test_the_archive_passes_and_every_url_is_logged(tmp_path: Path) -> None:
    requests = _requests(tmp_path / "log")
    first = f"GET {ARCHIVE}dists/jammy/InRelease HTTP/1.1\r\nHost: archive.ubuntu.com\r\n\r\n"
    # apt pipelines: a request may arrive split across reads.
    second = f"GET {ARCHIVE}pool/universe/p/python3.11/python3.11_3.11.0.deb HTTP/1.1\r\n"
    assert requests.allowed(first.encode() + second.encode()[:20])
    assert requests.allowed(second.encode()[20:] + b"Host: archive.ubuntu.com\r\n\r\n")
    assert (tmp_path / "log").read_text().splitlines() == [
        f"allowed {ARCHIVE}dists/jammy/InRelease",
        f"allowed {ARCHIVE}pool/universe/p/python3.11/python3.11_3.11.0.deb",
    ]


def test_anything_else_is_refused(tmp_path: Path) -> None:
    requests = _requests(tmp_path / "log")
    assert not requests.allowed(b"GET http://pypi.org/simple/pytest/ HTTP/1.1\r\n\r\n")
    assert not requests.allowed(b"CONNECT files.pythonhosted.org:443 HTTP/1.1\r\n\r\n")
    # A look-alike host is not the archive.
    evil = b"GET http://archive.ubuntu.com.evil.example/ubuntu/x HTTP/1.1\r\n\r\n"
    assert not requests.allowed(evil)
    assert [line.split()[0] for line in (tmp_path / "log").read_text().splitlines()] == [
        "REFUSED"
    ] * 3


def test_a_refused_request_closes_the_connection(tmp_path: Path) -> None:
    # The relay copies what passes and stops at the first chunk that does not.
    client, proxy_side = socket.socketpair()
    upstream_side, upstream = socket.socketpair()
    requests = _requests(tmp_path / "log")
    relay = threading.Thread(
        target=apt_proxy._relay, args=(proxy_side, upstream_side, requests.allowed)
    )
    relay.start()
    ok = f"GET {ARCHIVE}dists/noble/Release HTTP/1.1\r\n\r\n".encode()
    client.sendall(ok)
    assert upstream.recv(1000) == ok
    client.sendall(b"GET http://pypi.org/simple/ HTTP/1.1\r\n\r\n")
    assert upstream.recv(1000) == b""  # closed, nothing of it forwarded
    relay.join(timeout=10)
    assert not relay.is_alive()
    for end in (client, upstream):
        end.close()
