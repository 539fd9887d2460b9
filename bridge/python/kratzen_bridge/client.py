"""Synchronous client of the Kratzen Gym bridge (protocol version 2, see bridge/protocol.ts).

Requests run on the caller's thread over a small WebSocket client of our own (wire.py): the
bridge answers in request order, so a call is one send and one receive, with no event loop to
hop to. A keepalive thread answers the server's heartbeat while the caller is busy elsewhere, so
an idle client stays connected. Every failure, a broken or closed connection included, is a
BridgeError.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import struct
import subprocess
import threading
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np

from .wire import WireClosed, WireConnection

PROTOCOL_VERSION = 2
NUM_ACTIONS = 74
# Seconds between the keepalive thread's looks at the socket between calls (shorter for a server that pings more often).
KEEPALIVE_INTERVAL = 0.5

# The arrays of a binary batch reply, in payload order: name and dtype. A copy of bridge/protocol.ts's
# BINARY_ARRAYS (and NUM_ACTIONS above of env/rules/actions.ts), tested against the generated
# bridge/protocol.schema.json (tests/test_protocol_copy.py).
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
    """An error reply: `code` is one of the server's ERROR_CODES, `field` the offending path.

    The client adds its own codes: `connection_failed`, `connection_closed` (also when a reply
    does not come within the timeout), `bad_frame` (a binary reply that is not well formed) and
    `incompatible_server` (its hello names another action count than this client's NUM_ACTIONS);
    `limit_exceeded` also for a request longer than the server's message limit, which is not sent
    (the server would close the connection).
    """

    def __init__(self, code: str, message: str, field: Optional[str] = None, details: Optional[dict] = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.field = field
        self.details = details or {}


def _error_report(stderr: str) -> Tuple[Optional[str], Optional[str]]:
    """`field` and `reason` of the last JSON error report on a CLI's stderr, or (None, None)."""
    for text in reversed(stderr.strip().splitlines()):
        try:
            report = json.loads(text)
        except ValueError:
            continue
        if isinstance(report, dict) and isinstance(report.get("reason"), str):
            field = report.get("field")
            return (field if isinstance(field, str) else None), report["reason"]
    return None, None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _loads(text) -> Any:
    """Strict JSON: NaN and Infinity are not JSON (the server never sends them); a reply nested
    past Python's recursion limit is malformed like any other (RecursionError is no ValueError)."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _json_default(value: Any) -> Any:
    # numpy scalars and arrays, as RL code holds its numbers, go as the JSON values they are.
    if isinstance(value, np.generic) and isinstance(value.item(), (bool, int, float)):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"a {type(value).__name__} is not a JSON value")


def _unsendable(value: Any, path: str) -> Optional[Tuple[str, str]]:
    """The path of the first value in `value` that is not JSON (NaN, Infinity, an object), and why."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, dict):
        for key, item in value.items():
            found = _unsendable(item, f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = _unsendable(item, f"{path}[{index}]")
            if found:
                return found
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return path, f"{value} is not a JSON number"
    if value is not None and not isinstance(value, (str, bool, int, float)):
        return path, f"a {type(value).__name__} is not a JSON value"
    return None


def _dumps(method: str, message: Dict[str, Any]) -> str:
    """The request as strict JSON; a value that is not JSON (NaN, Infinity, an object) is a
    BridgeError("invalid_params") naming its field, raised before anything is sent."""
    try:
        return json.dumps(message, separators=(",", ":"), allow_nan=False, default=_json_default)
    except (ValueError, TypeError, RecursionError) as e:
        found = _unsendable(message.get("params"), "params")
        field, reason = found if found else (None, str(e))
        raise BridgeError("invalid_params", f"{method}: {field + ': ' if field else ''}{reason}", field) from None


def _bad_frame(reason: str) -> "BridgeError":
    return BridgeError("bad_frame", f"the server sent a malformed binary frame: {reason}")


def decode_frame(data: bytes) -> Dict[str, Any]:
    """Decodes a binary reply: the JSON header's `result`, with each array viewed in place (numpy, no copy).

    Raises BridgeError("bad_frame") when the frame does not hold what its header says: every
    count is checked against the frame's length and the batch's size before any array is viewed.
    """
    if len(data) < 4:
        raise _bad_frame("shorter than its header length")
    (header_length,) = struct.unpack_from("<I", data, 0)
    if 4 + header_length > len(data):
        raise _bad_frame(f"a header of {header_length} bytes in a frame of {len(data)}")
    try:
        header = _loads(bytes(data[4 : 4 + header_length]).decode("utf-8"))
        result = header["result"]
        lengths = result.pop("lengths")
        n = result["numEnvs"]
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise _bad_frame(f"its header is not a batch reply ({e})") from None
    if not isinstance(n, int) or n < 0:
        raise _bad_frame(f"numEnvs {n!r}")
    if not isinstance(lengths, list) or len(lengths) != len(BINARY_ARRAYS) or not all(isinstance(c, int) and c >= 0 for c in lengths):
        raise _bad_frame(f"lengths must be {len(BINARY_ARRAYS)} non-negative integers, got {lengths!r}"[:200])
    offset = (4 + header_length + 7) & ~7
    arrays = {}
    for (name, _), dtype, count in zip(BINARY_ARRAYS, _ARRAY_DTYPES, lengths):
        if offset + count * dtype.itemsize > len(data):
            raise _bad_frame(f"{name} ({count} elements) runs past the end of the frame")
        arrays[name] = np.frombuffer(data, dtype=dtype, count=count, offset=offset)
        offset += (count * dtype.itemsize + 7) & ~7
    if len(arrays["observations.indptr"]) != n + 1 or len(arrays["masks"]) != n * NUM_ACTIONS or len(arrays["seats"]) != n:
        raise _bad_frame(f"array sizes do not match numEnvs {n}")
    for prefix, rows in (("observations", n), ("finalObservations", None)):
        _check_csr(arrays[f"{prefix}.indptr"], arrays[f"{prefix}.indices"], arrays[f"{prefix}.values"], rows, prefix)
    arrays["masks"] = arrays["masks"].reshape(n, NUM_ACTIONS)
    width = result.get("rewardWidth", 1)
    if not isinstance(width, int) or width < 1 or len(arrays["rewards"]) != n * width:
        raise _bad_frame(f"rewards do not match numEnvs {n} x rewardWidth {width!r}")
    if width > 1:
        arrays["rewards"] = arrays["rewards"].reshape(n, width)
    result["arrays"] = arrays
    return header


def _check_csr(indptr: np.ndarray, indices: np.ndarray, values: np.ndarray, rows: Optional[int], name: str) -> None:
    """CSR rows are well formed: indptr starts at 0, never decreases and ends at the entry count."""
    if len(indptr) == 0 or (rows is not None and len(indptr) != rows + 1):
        raise _bad_frame(f"{name}.indptr has {len(indptr)} entries")
    if len(indices) != len(values) or indptr[0] != 0 or indptr[-1] != len(indices) or np.any(np.diff(indptr.astype(np.int64)) < 0):
        raise _bad_frame(f"{name}: indptr does not index its {len(indices)} entries in order")


def csr_to_dense(indptr: np.ndarray, indices: np.ndarray, values: np.ndarray, width: int) -> np.ndarray:
    """Expands CSR rows (the wire format of observations) to a dense float32 matrix.

    Raises BridgeError("bad_frame") for rows that are not well formed or an index past `width`.
    """
    _check_csr(indptr, indices, values, None, "observations")
    if len(indices) and int(indices.max()) >= width:
        raise _bad_frame(f"an observation index {int(indices.max())} past the observation size {width}")
    rows = len(indptr) - 1
    out = np.zeros((rows, width), dtype=np.float32)
    row_of = np.repeat(np.arange(rows), np.diff(indptr.astype(np.int64)))
    out[row_of, indices.astype(np.int64)] = values
    return out


class BridgeClient:
    """One connection. `call(method, params)` returns the result or raises BridgeError."""

    # The method of a call interrupted before its reply (the connection is then closed).
    _interrupted: Optional[str] = None

    def __init__(self, url: str, token: Optional[str] = None, timeout: float = 60.0):
        if not isinstance(url, str):
            raise TypeError(f"url must be a ws:// URL string, not {url!r:.100}")
        # Sent as it was, token=123 came back as the server's invalid_params.
        if token is not None and not isinstance(token, str):
            raise TypeError(f"token must be a string, not {token!r:.20}")
        self.url = url
        self.timeout = timeout
        self._next_id = 1
        try:
            self._wire = WireConnection(url, timeout=timeout)
        except WireClosed as e:
            raise BridgeError("connection_failed", str(e)) from None
        params: Dict[str, Any] = {"protocolVersion": PROTOCOL_VERSION}
        if token is not None:
            params["token"] = token
        self.hello = self.call("hello", params)
        self._spec: Optional[dict] = None
        # Read by later calls (max_message_bytes, RemotePolicy): another shape broke them with
        # AttributeError, far from the reply at fault.
        if not isinstance(self.hello.get("limits", {}), dict):
            self._wire.close()
            raise BridgeError("internal_error", f"hello: the server's limits are not an object: {self.hello.get('limits')!r:.60}")
        # The protocol version pins the action count; a server that says otherwise would have
        # every mask and action space read wrongly, so it is refused here, not at the first step.
        if self.hello.get("numActions") != NUM_ACTIONS:
            self._wire.close()
            raise BridgeError("incompatible_server", f"the server has {self.hello.get('numActions')!r:.40} actions; this client knows {NUM_ACTIONS}")
        # A server that pings more often than every 2 s is answered within a quarter of its
        # interval (the keepalive looked every 0.5 s: a server pinging every 0.45 s dropped an
        # idle client).
        heartbeat = self.hello["limits"].get("heartbeatIntervalMs") if "limits" in self.hello else None
        interval = KEEPALIVE_INTERVAL
        if isinstance(heartbeat, (int, float)) and not isinstance(heartbeat, bool) and math.isfinite(heartbeat) and heartbeat > 0:
            interval = min(interval, max(0.002, heartbeat / 4000))
        self._wire.start_keepalive(interval)

    def call(self, method: str, params: Optional[dict] = None) -> Dict[str, Any]:
        request_id = self._next_id
        self._next_id += 1
        message: Dict[str, Any] = {"id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        text = _dumps(method, message)
        limit = self.max_message_bytes
        # json.dumps escapes to ASCII, so characters are bytes.
        if limit is not None and len(text) > limit:
            # The server would close the connection (1009) and every session on it with it.
            raise BridgeError("limit_exceeded", f"{method}: the request is {len(text)} bytes, more than the server's message limit of {limit}", details={"limit": "maxMessageBytes"})
        if self._interrupted is not None:
            raise BridgeError("connection_closed", f"{method}: the connection was closed when an earlier {self._interrupted} call failed or was interrupted before its reply (which would have been read as this call's)")
        try:
            raw = self._wire.request(text)
        except WireClosed as e:
            raise BridgeError("connection_closed", f"{method}: {e}", details={"closeCode": e.code, "closeReason": e.reason}) from None
        except UnicodeDecodeError as e:
            raise BridgeError("internal_error", f"{method}: the server's reply is not UTF-8 text: {e}") from None
        except BaseException:
            # Ctrl-C (or any other exception) between the request and its reply: the reply still
            # comes, and the next call read it as its own ("reply id 5 does not match request 6",
            # blamed on the server). The connection cannot be trusted to be in step: closed here.
            self._interrupted = method
            self._wire.close()
            raise
        try:
            reply = decode_frame(raw) if isinstance(raw, (bytes, bytearray)) else _loads(raw)
        except ValueError as e:  # json.JSONDecodeError is one
            raise BridgeError("internal_error", f"{method}: the server's reply is not JSON: {e}") from None
        # A reply that is not the protocol's shape is the server's fault, reported as every failure is.
        if not isinstance(reply, dict):
            raise BridgeError("internal_error", f"{method}: the server's reply is not a JSON object")
        error = reply.get("error")
        if error is not None and not (isinstance(error, dict) and isinstance(error.get("code"), str) and isinstance(error.get("message"), str)):
            raise BridgeError("internal_error", f"{method}: the server's error reply has no code and message: {error!r:.200}")
        # Ids are compared as JSON values: in Python true == 1 and 1.0 == 1, which took replies
        # with id true or 1.0 as the answer to request 1.
        reply_id = reply.get("id")
        same_id = type(reply_id) is int and reply_id == request_id
        # Errors found before the server read an id (parse_error) carry id null.
        if not same_id and not (error is not None and reply_id is None):
            raise self._out_of_step(reply_id, request_id)
        if error is not None:
            raise BridgeError(error["code"], error["message"], error.get("field"), error.get("details"))
        if not same_id:
            raise self._out_of_step(reply_id, request_id)
        if not isinstance(reply.get("result"), dict):
            raise BridgeError("internal_error", f"{method}: the server's reply has neither a result nor an error")
        return reply["result"]

    def _out_of_step(self, reply_id: Any, request_id: int) -> BridgeError:
        # Replies come in request order: one that answers another request means every later
        # reply would be read as the wrong one, so the connection is closed.
        self.close()
        return BridgeError("internal_error", f"reply id {reply_id!r:.40} does not match request {request_id}; the connection is closed")

    @property
    def max_message_bytes(self) -> Optional[int]:
        """The server's message limit, from its hello reply (None before hello)."""
        hello = getattr(self, "hello", None)
        limit = hello.get("limits", {}).get("maxMessageBytes") if isinstance(hello, dict) else None
        return limit if isinstance(limit, int) else None

    def spec(self) -> dict:
        """The observation layout and action table (cached)."""
        if self._spec is None:
            self._spec = self.call("spec")
        return self._spec

    @property
    def closed(self) -> bool:
        return self._wire.closed

    def close(self) -> None:
        self._wire.close()

    def __enter__(self) -> "BridgeClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class NoServerToStart(RuntimeError):
    """LocalServer has no `kratzen serve` to run: not in a built checkout, and none on PATH."""


class ServerDidNotStart(RuntimeError):
    """`kratzen serve` exited, or printed no address in time: `field` and `reason` are those of
    its error report (one JSON line on stderr, e.g. `max-envs`) when it made one."""

    def __init__(self, message: str, field: Optional[str] = None, reason: Optional[str] = None):
        super().__init__(message)
        self.field = field
        self.reason = reason


class LocalServer:
    """Starts `kratzen serve` on a loopback port (a free one unless `port` names one) for tests
    and examples, and stops it.

    The command defaults to `node <repo>/dist/cli/serve.js` when this package sits in the
    repository (built with `npm run build`), else `kratzen serve` from PATH. `args` are further
    flags of `kratzen serve`. Single-agent seeds are mixed with a secret random per start
    (docs/bridge.md): pass `seed_secret` (or set KRATZEN_SEED_SECRET) for a seeded `KratzenEnv`
    to replay the same games on the next start.
    """

    def __init__(
        self,
        command: Optional[Sequence[str]] = None,
        args: Sequence[str] = (),
        env: Optional[dict] = None,
        *,
        port: int = 0,
        seed_secret: Optional[str] = None,
        start_timeout: float = 30.0,
    ):
        # `--port` among args was refused by the CLI as given twice (this class passes its own).
        if any(a == "--port" or str(a).startswith("--port=") for a in args):
            raise ValueError("give the port as LocalServer(port=...), not in args")
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(f"port must be an integer 0..65535, got {port!r}")
        if command is None:
            script = Path(__file__).resolve().parents[3] / "dist" / "cli" / "serve.js"
            if script.exists():
                command = ["node", str(script)]
            elif shutil.which("kratzen"):
                command = ["kratzen", "serve"]
            else:
                # An installed package is no checkout: it failed as FileNotFoundError 'kratzen'.
                raise NoServerToStart(
                    "no server to start: this package is not in a built checkout (npm run build) and `kratzen` is not on PATH; "
                    "start one (node dist/cli/main.js serve in the checkout) and pass its URL"
                )
        child_env = {**os.environ, **(env or {})}
        if seed_secret is not None:
            child_env["KRATZEN_SEED_SECRET"] = seed_secret
        self._process = subprocess.Popen(
            [*command, "--port", str(port), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=child_env,
        )
        # The first line is read on a thread: a server that hangs before printing blocked here forever.
        first: list = []
        reader = threading.Thread(target=lambda: first.append(self._process.stdout.readline()), daemon=True)
        reader.start()
        reader.join(start_timeout)
        timed_out = reader.is_alive()
        line = first[0] if first else ""
        event = None
        try:
            event = json.loads(line)
        except ValueError:
            pass
        if not (isinstance(event, dict) and isinstance(event.get("url"), str) and isinstance(event.get("port"), int)):
            self._process.kill()
            try:
                _, err = self._process.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                err = ""
            field, reason = _error_report(err or "")
            if timed_out:
                message = f"kratzen serve printed no address within {start_timeout} s"
            elif reason is not None:
                message = f"kratzen serve did not start: {field}: {reason}" if field else f"kratzen serve did not start: {reason}"
            else:
                message = f"kratzen serve did not start: {(line or err or 'it exited without a word').strip()[:500]}"
            raise ServerDidNotStart(message, field, reason)
        self.url: str = event["url"]
        self.port: int = event["port"]

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
