"""Synchronous client of the Kratzen Gym bridge (protocol version 2, see bridge/protocol.ts).

The websockets library (10.4 in Debian bookworm) is asyncio-based; its event loop runs in a
daemon thread so that the server's heartbeat pings are answered even while the caller is busy
between requests, and each request is a blocking call from the caller's thread.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import struct
import subprocess
import threading
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

import numpy as np
import websockets

PROTOCOL_VERSION = 2
NUM_ACTIONS = 74

# The arrays of a binary batch reply, in payload order (bridge/protocol.ts): name and dtype.
BINARY_ARRAYS = (
    ("observations.indptr", "<u4"),
    ("observations.indices", "<u2"),
    ("observations.values", "<f4"),
    ("masks", "u1"),
    ("seats", "<i4"),
    ("rewards", "<f4"),
    ("terminated", "u1"),
    ("truncated", "u1"),
    ("finalObservations.indptr", "<u4"),
    ("finalObservations.indices", "<u2"),
    ("finalObservations.values", "<f4"),
)
_ARRAY_DTYPES = tuple(np.dtype(d) for _, d in BINARY_ARRAYS)


class BridgeError(Exception):
    """An error reply: `code` is one of the server's ERROR_CODES, `field` the offending path."""

    def __init__(self, code: str, message: str, field: Optional[str] = None, details: Optional[dict] = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.field = field
        self.details = details or {}


def decode_frame(data: bytes) -> Dict[str, Any]:
    """Decodes a binary reply: the JSON header's `result`, with each array viewed in place (numpy, no copy)."""
    (header_length,) = struct.unpack_from("<I", data, 0)
    header = json.loads(bytes(data[4 : 4 + header_length]).decode("utf-8"))
    result = header["result"]
    offset = (4 + header_length + 7) & ~7
    arrays = {}
    for (name, _), dtype, count in zip(BINARY_ARRAYS, _ARRAY_DTYPES, result.pop("lengths")):
        arrays[name] = np.frombuffer(data, dtype=dtype, count=count, offset=offset)
        offset += (count * dtype.itemsize + 7) & ~7
    n = result["numEnvs"]
    arrays["masks"] = arrays["masks"].reshape(n, NUM_ACTIONS)
    width = result.get("rewardWidth", 1)
    if width > 1:
        arrays["rewards"] = arrays["rewards"].reshape(n, width)
    result["arrays"] = arrays
    return header


def csr_to_dense(indptr: np.ndarray, indices: np.ndarray, values: np.ndarray, width: int) -> np.ndarray:
    """Expands CSR rows (the wire format of observations) to a dense float32 matrix."""
    rows = len(indptr) - 1
    out = np.zeros((rows, width), dtype=np.float32)
    row_of = np.repeat(np.arange(rows), np.diff(indptr.astype(np.int64)))
    out[row_of, indices.astype(np.int64)] = values
    return out


class BridgeClient:
    """One connection. `call(method, params)` returns the result or raises BridgeError."""

    def __init__(self, url: str, token: Optional[str] = None, timeout: float = 60.0):
        self.url = url
        self.timeout = timeout
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="kratzen-bridge", daemon=True)
        self._thread.start()
        self._lock = threading.Lock()
        self._next_id = 1
        self._ws = self._run(self._connect(url))
        params: Dict[str, Any] = {"protocolVersion": PROTOCOL_VERSION}
        if token is not None:
            params["token"] = token
        self.hello = self.call("hello", params)
        self._spec: Optional[dict] = None

    @staticmethod
    async def _connect(url: str):
        # The server sends heartbeats, so no client pings. No size limit on replies: the server
        # bounds what it sends by the sessions it was asked for.
        return await websockets.connect(url, max_size=None, compression=None, ping_interval=None)

    def _run(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(self.timeout)

    async def _roundtrip(self, text: str):
        await self._ws.send(text)
        return await self._ws.recv()

    def call(self, method: str, params: Optional[dict] = None) -> Dict[str, Any]:
        with self._lock:
            request_id = self._next_id
            self._next_id += 1
            message: Dict[str, Any] = {"id": request_id, "method": method}
            if params is not None:
                message["params"] = params
            raw = self._run(self._roundtrip(json.dumps(message)))
        reply = decode_frame(raw) if isinstance(raw, (bytes, bytearray)) else json.loads(raw)
        error = reply.get("error")
        if error is not None:
            raise BridgeError(error["code"], error["message"], error.get("field"), error.get("details"))
        if reply.get("id") != request_id:
            raise BridgeError("internal_error", f"reply id {reply.get('id')!r} does not match request {request_id}")
        return reply["result"]

    def spec(self) -> dict:
        """The observation layout and action table (cached)."""
        if self._spec is None:
            self._spec = self.call("spec")
        return self._spec

    def close(self) -> None:
        if self._loop.is_closed():
            return
        try:
            self._run(self._ws.close())
        except Exception:  # the server may be gone already
            pass
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()

    def __enter__(self) -> "BridgeClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class LocalServer:
    """Starts `kratzen serve` on a free loopback port (for tests and examples) and stops it.

    The command defaults to `node <repo>/dist/cli/serve.js` when this package sits in the
    repository (built with `npm run build`), else `kratzen serve` from PATH.
    """

    def __init__(self, command: Optional[Sequence[str]] = None, args: Sequence[str] = (), env: Optional[dict] = None):
        if command is None:
            script = Path(__file__).resolve().parents[3] / "dist" / "cli" / "serve.js"
            command = ["node", str(script)] if script.exists() else ["kratzen", "serve"]
        self._process = subprocess.Popen(
            [*command, "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        line = self._process.stdout.readline() if self._process.stdout else ""
        try:
            event = json.loads(line)
            self.url: str = event["url"]
            self.port: int = event["port"]
        except (ValueError, KeyError):
            self._process.kill()
            _, err = self._process.communicate(timeout=10)
            raise RuntimeError(f"kratzen serve did not start: {line!r} {err}")

    def stop(self, timeout: float = 10.0) -> int:
        """Graceful shutdown (SIGTERM); returns the exit code."""
        if self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
            try:
                self._process.wait(timeout)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        for stream in (self._process.stdout, self._process.stderr):
            if stream:
                stream.close()
        return self._process.returncode

    def __enter__(self) -> "LocalServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
