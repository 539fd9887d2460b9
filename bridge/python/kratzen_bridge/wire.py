"""A small synchronous WebSocket client (RFC 6455), for request-reply use from the caller's thread.

The bridge answers every request in order, so a call is: send one text frame, read frames until
the reply. Doing that on the caller's thread, with no event loop to hop to and back, is what
makes a round trip cheap from Python. While no call is running, a keepalive thread answers the
server's heartbeat pings, so a client that waits between calls (an evaluation callback, a
person thinking) stays connected.
"""

from __future__ import annotations

import base64
import hashlib
import os
import select
import socket
import struct
import threading
import time
import weakref
from typing import Optional, Tuple
from urllib.parse import urlparse

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
# Largest reply accepted: a 4096-env JSON batch is about 6 MB, a record of a long session can be
# tens of MB; past this bound a broken or hostile server cannot make the client buffer without end.
MAX_MESSAGE_BYTES = 256 << 20


class WireClosed(Exception):
    """The connection is gone: closed by the server (with `code` and `reason`) or broken."""

    def __init__(self, message: str, code: Optional[int] = None, reason: str = ""):
        super().__init__(message)
        self.code = code
        self.reason = reason


def _mask(payload: bytes, key: bytes) -> bytes:
    # XOR with the repeated 4-byte key, done on Python ints (C speed for any length).
    n = len(payload)
    if n == 0:
        return payload
    repeated = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "little") ^ int.from_bytes(repeated, "little")).to_bytes(n, "little")


class WireConnection:
    """One WebSocket connection. `request(text)` sends a text frame and returns the next data frame."""

    def __init__(self, url: str, timeout: float = 60.0):
        parsed = urlparse(url)
        if parsed.scheme != "ws":
            raise ValueError(f"only ws:// URLs are supported, not {url!r}")
        host = parsed.hostname or "127.0.0.1"
        port = parsed.port or 80
        path = parsed.path or "/"
        # None and 0 failed later, as "unsupported operand" or a non-blocking socket's EINPROGRESS.
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r:.40}")
        self.timeout = timeout
        try:
            self._sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as e:
            raise WireClosed(f"cannot connect to {url}: {e}") from None
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buffer = bytearray()
        self._deadline: Optional[float] = None
        self._lock = threading.Lock()
        self._closed: Optional[WireClosed] = None
        self._handshake(host, port, path)
        self._stop = threading.Event()
        # A connection nobody holds closes its socket: an env dropped without close() kept its
        # connection (and a server's slot) for good, its keepalive thread holding it.
        weakref.finalize(self, _drop_socket, self._sock, self._stop)

    def start_keepalive(self, interval: float) -> None:
        """Starts the thread that answers pings between calls, looking every `interval` seconds
        (started by the caller once the server said how often it pings: a thread started first
        slept its default before it read a shorter interval, and the server dropped the client)."""
        thread = threading.Thread(target=_keep_alive, args=(weakref.ref(self), self._stop, interval), name="kratzen-keepalive", daemon=True)
        thread.start()

    # ---- handshake and frames

    def _handshake(self, host: str, port: int, path: str) -> None:
        key = base64.b64encode(os.urandom(16))
        # urlparse drops an IPv6 address's brackets; a Host header needs them (the server refused ::1:PORT).
        host_name = f"[{host}]" if ":" in host else host
        request = (
            f"GET {path} HTTP/1.1\r\nHost: {host_name}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key.decode()}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
        self._send_all(request)
        # A deadline for the whole handshake (checked before each read, so it holds within one
        # more timeout): a server dripping its reply a byte at a time would otherwise hold the
        # caller for 64 KiB of reads.
        self._deadline = time.monotonic() + self.timeout
        while b"\r\n\r\n" not in self._buffer:
            self._fill()
            if len(self._buffer) > 65536:
                raise self._fail("the server's handshake reply is too long")
        self._deadline = None
        head, _, rest = bytes(self._buffer).partition(b"\r\n\r\n")
        self._buffer = bytearray(rest)
        lines = head.decode("latin-1").split("\r\n")
        if not lines[0].startswith("HTTP/1.1 101"):
            raise self._fail(f"the server refused the WebSocket upgrade: {lines[0][:200]}")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        expected = base64.b64encode(hashlib.sha1(key + _GUID).digest()).decode()
        if headers.get("sec-websocket-accept") != expected:
            raise self._fail("the server's handshake does not match the request")

    def _send_all(self, data: bytes) -> None:
        try:
            self._sock.sendall(data)
        except OSError as e:
            raise self._fail(f"the connection broke while sending: {e}") from None

    def _fill(self) -> None:
        # The timeout bounds the whole reply, not each read: pings or fragments that keep
        # arriving must not keep a call waiting forever.
        if self._deadline is not None and time.monotonic() > self._deadline:
            raise self._fail(f"no reply from the server within {self.timeout} s")
        try:
            chunk = self._sock.recv(1 << 20)
        except socket.timeout:
            raise self._fail(f"no reply from the server within {self.timeout} s") from None
        except OSError as e:
            raise self._fail(f"the connection broke while reading: {e}") from None
        if not chunk:
            raise self._fail("the server closed the connection")
        self._buffer += chunk

    def _read(self, n: int) -> bytes:
        while len(self._buffer) < n:
            self._fill()
        data = bytes(self._buffer[:n])
        del self._buffer[:n]
        return data

    def _send_frame(self, opcode: int, payload: bytes) -> None:
        n = len(payload)
        if n < 126:
            header = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
        elif n < 65536:
            header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
        else:
            header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
        key = os.urandom(4)
        self._send_all(header + key + _mask(payload, key))

    def _read_frame(self, received: int) -> Tuple[bool, int, bytes]:
        b0, b1 = self._read(2)
        n = b1 & 0x7F
        if n == 126:
            (n,) = struct.unpack("!H", self._read(2))
        elif n == 127:
            (n,) = struct.unpack("!Q", self._read(8))
        # Control frames (close, ping, pong) are whole and at most 125 bytes (RFC 6455 §5.5): a
        # hostile server's 16 MiB ping was read and echoed back in full.
        if b0 & 0x08 and (n > 125 or not b0 & 0x80):
            raise self._fail(f"the server sent a control frame (opcode {b0 & 0x0F}) {'of ' + str(n) + ' bytes' if n > 125 else 'in fragments'}")
        if received + n > MAX_MESSAGE_BYTES:
            raise self._fail(f"the server sent a message over {MAX_MESSAGE_BYTES} bytes")
        key = self._read(4) if b1 & 0x80 else None
        payload = self._read(n)
        if key:
            payload = _mask(payload, key)
        return bool(b0 & 0x80), b0 & 0x0F, payload

    def _next_message(self) -> Tuple[int, bytes]:
        """The next data message (text or binary), answering pings and joining fragments."""
        parts = []
        received = 0
        opcode = None
        while True:
            fin, op, payload = self._read_frame(received)
            if op == OP_PING:
                self._send_frame(OP_PONG, payload)
                continue
            if op == OP_PONG:
                continue
            if op == OP_CLOSE:
                raise self._closed_by_server(payload)
            if op != OP_CONT:
                opcode = op
            parts.append(payload)
            received += len(payload)
            if fin:
                return opcode or OP_TEXT, b"".join(parts)

    def _closed_by_server(self, payload: bytes) -> WireClosed:
        """Answers the server's close frame and fails the connection with its code and reason."""
        code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
        reason = payload[2:].decode("utf-8", "replace")
        try:
            self._send_frame(OP_CLOSE, payload[:2])
        except WireClosed:
            pass
        # The reason ("idle timeout") is what a user needs; a close read between calls said only its code.
        return self._fail(f"the server closed the connection ({code} {reason})".rstrip(), code, reason)

    def _fail(self, message: str, code: Optional[int] = None, reason: str = "") -> WireClosed:
        if self._closed is None:
            self._closed = WireClosed(message, code, reason)
            try:
                self._sock.close()
            except OSError:
                pass
        return self._closed

    # ---- the public part

    def request(self, text: str):
        """Sends `text`; returns the next message: `str` for text frames, `bytes` for binary ones."""
        # The keepalive thread may be reading a frame the server sent between calls; it gives up
        # at its own deadline, and the call waits for it no longer than its timeout.
        if not self._lock.acquire(timeout=self.timeout):
            raise self._fail(f"no reply from the server within {self.timeout} s (a frame it began between calls never ended)")
        try:
            if self._closed is not None:
                raise self._closed
            self._send_frame(OP_TEXT, text.encode("utf-8"))
            self._deadline = time.monotonic() + self.timeout
            try:
                opcode, payload = self._next_message()
            finally:
                self._deadline = None
        finally:
            self._lock.release()
        return payload.decode("utf-8") if opcode == OP_TEXT else payload

    def _answer_heartbeat(self) -> bool:
        """Answers the pings that came between calls; False once the connection is gone."""
        # Between calls nobody reads the socket: answer the heartbeat here, never during a call.
        if not self._lock.acquire(blocking=False):
            return True
        try:
            if self._closed is not None:
                return False
            while self._buffer or select.select([self._sock], [], [], 0)[0]:
                # A frame begun must end within the timeout, as a reply must: a server
                # dripping it would hold the lock, and every call, forever.
                self._deadline = time.monotonic() + self.timeout
                fin, op, payload = self._read_frame(0)
                self._deadline = None
                if op == OP_PING:
                    self._send_frame(OP_PONG, payload)
                elif op == OP_CLOSE:
                    raise self._closed_by_server(payload)
            return True
        except WireClosed:
            return False
        finally:
            self._deadline = None
            self._lock.release()

    @property
    def closed(self) -> bool:
        return self._closed is not None

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            if self._closed is None:
                try:
                    self._send_frame(OP_CLOSE, struct.pack("!H", 1000))
                except WireClosed:
                    pass
                self._fail("closed by the client", 1000)


def _keep_alive(connection: "weakref.ref[WireConnection]", stop: threading.Event, interval: float) -> None:
    """The keepalive thread: holds its connection only while it answers a heartbeat."""
    while not stop.wait(interval):
        held = connection()
        if held is None or not held._answer_heartbeat():
            return
        del held


def _drop_socket(sock: socket.socket, stop: threading.Event) -> None:
    """Closes the socket of a connection that was dropped without close() (its finalizer)."""
    stop.set()
    try:
        sock.close()
    except OSError:
        pass
