"""The client against a hostile or broken server: malformed binary frames are BridgeErrors,
and a server that keeps sending pings or fragments cannot hold a call past its timeout.

Run: /usr/bin/python3 -m unittest discover -s bridge/python/tests  (needs numpy).
"""

import base64
import hashlib
import json
import os
import socket
import struct
import sys
import threading
import time
import types
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from kratzen_bridge import NUM_ACTIONS, BridgeClient, BridgeError  # noqa: E402
from kratzen_bridge.client import BINARY_ARRAYS, csr_to_dense, decode_frame  # noqa: E402
from kratzen_bridge.session import Batch, Session  # noqa: E402

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def frame(header: dict, lengths, payload_bytes: int) -> bytes:
    text = json.dumps({**header, "result": {**header["result"], "lengths": lengths}}).encode()
    start = (4 + len(text) + 7) & ~7
    return struct.pack("<I", len(text)) + text + bytes(start - 4 - len(text)) + bytes(payload_bytes)


def good_lengths(n: int):
    return [n + 1, 0, 0, n * NUM_ACTIONS, n, n, n, n, 1, 0, 0]


HEADER = {"id": 1, "result": {"session": "s1", "numEnvs": 1, "rewardWidth": 1, "final": []}}


def with_indptr(indptr, entries=0) -> bytes:
    """A one-env frame whose observation rows are `indptr` over `entries` zeros."""
    lengths = good_lengths(1)
    lengths[1] = lengths[2] = entries
    text = json.dumps({**HEADER, "result": {**HEADER["result"], "lengths": lengths}}).encode()
    start = (4 + len(text) + 7) & ~7
    pad = lambda b: b + bytes(-len(b) % 8)  # noqa: E731
    payload = pad(struct.pack(f"<{len(indptr)}I", *indptr)) + pad(bytes(2 * entries)) + pad(bytes(4 * entries))
    return struct.pack("<I", len(text)) + text + bytes(start - 4 - len(text)) + payload + bytes(4096)


class DecodeFrameTest(unittest.TestCase):
    def test_a_well_formed_frame_decodes(self):
        arrays = decode_frame(frame(HEADER, good_lengths(1), 4096))["result"]["arrays"]
        self.assertEqual(arrays["masks"].shape, (1, NUM_ACTIONS))
        self.assertEqual(len(arrays["seats"]), 1)

    def test_malformed_frames_are_bridge_errors(self):
        # A count of -1 made numpy read the rest of the frame; too few counts dropped arrays silently.
        negative = good_lengths(1)
        negative[0] = -1
        too_long = good_lengths(1)
        too_long[3] = 10**9
        cases = {
            "negative count": frame(HEADER, negative, 4096),
            "too few counts": frame(HEADER, good_lengths(1)[:4], 4096),
            "past the end": frame(HEADER, too_long, 4096),
            "sizes not numEnvs": frame(HEADER, good_lengths(2), 4096),
            "header past the end": struct.pack("<I", 10**6) + b"{}",
            "three bytes": b"abc",
            "header not JSON": struct.pack("<I", 3) + b"{{{" + bytes(8),
            "header nested 100,000 deep": struct.pack("<I", 200_000) + b"[" * 100_000 + b"]" * 100_000,
            "indptr past its entries": with_indptr([0, 3]),
            "indptr going down": with_indptr([2, 1], entries=2),
            "indptr not from 0": with_indptr([1, 1], entries=1),
        }
        self.assertEqual(len(BINARY_ARRAYS), len(good_lengths(1)))
        for name, data in cases.items():
            with self.subTest(name):
                with self.assertRaises(BridgeError) as caught:
                    decode_frame(data)
                self.assertEqual(caught.exception.code, "bad_frame")


class DenseRowsTest(unittest.TestCase):
    def test_an_index_past_the_observation_size_is_a_bad_frame(self):
        indptr = np.array([0, 1], dtype=np.uint32)
        with self.assertRaises(BridgeError) as caught:
            csr_to_dense(indptr, np.array([60000], dtype=np.uint16), np.ones(1, dtype=np.float32), 490)
        self.assertEqual(caught.exception.code, "bad_frame")
        dense = csr_to_dense(indptr, np.array([489], dtype=np.uint16), np.ones(1, dtype=np.float32), 490)
        self.assertEqual(dense[0, 489], 1.0)

    def test_a_reply_that_is_not_this_sessions_binary_batch_is_an_internal_error(self):
        arrays = decode_frame(frame(HEADER, good_lengths(1), 4096))["result"]
        cases = {
            "a text reply": {"numEnvs": 1, "final": [], "observations": [[0.0]]},
            "another env count": {**arrays, "numEnvs": 2},
            "final rows without envs": {**arrays, "final": [{"env": 0, "info": {}}]},
            # A KeyError 'observations.indptr' [probe, session 47].
            "no arrays": {**arrays, "arrays": {}},
            "arrays as JSON lists": {**arrays, "arrays": {k: v.tolist() for k, v in arrays["arrays"].items()}},
        }
        for name, result in cases.items():
            with self.subTest(name):
                with self.assertRaises(BridgeError) as caught:
                    Batch(result, fake_session())
                self.assertEqual(caught.exception.code, "internal_error")

    def test_values_that_are_no_batch_of_this_session_are_internal_errors(self):
        """[probe round 7] Seats off the table, NaN or out-of-bounds observations, mask bytes of
        255, non-finite rewards, another reward width, a final info that is no object, an env
        ended twice: each came back silently, or as a bare IndexError / AttributeError."""
        good = decode_frame(frame(HEADER, good_lengths(1), 4096))["result"]
        Batch(good, fake_session())  # all zeros: a batch of one env, seat 0 to act

        def changed(**arrays):
            return {**good, "arrays": {**good["arrays"], **{k.replace("__", "."): v for k, v in arrays.items()}}}

        def one_entry(value):
            return changed(observations__indptr=np.array([0, 1], dtype=np.uint32), observations__indices=np.array([3], dtype=np.uint16), observations__values=np.array([value], dtype=np.float32))

        FINAL = {"balances": [-1, 0, 0.25, 0.75], "hands": 1}

        def ended(*finals):
            n = len(finals)
            return {**changed(finalObservations__indptr=np.zeros(n + 1, dtype=np.uint32)), "final": list(finals)}

        cases = {
            "observation NaN": one_entry(np.nan),
            "observation 1e30 in a slice bounded by 1": one_entry(1e30),
            "observation below its low": one_entry(-0.5),
            "mask byte 255": changed(masks=np.full((1, NUM_ACTIONS), 255, dtype=np.uint8)),
            "terminated 2": changed(terminated=np.array([2], dtype=np.uint8)),
            "seat -1": changed(seats=np.array([-1], dtype=np.int32)),
            "seat 4 at a table of 4": changed(seats=np.array([4], dtype=np.int32)),
            "reward NaN": changed(rewards=np.array([np.nan], dtype=np.float32)),
            "reward width 4 in a single session": {**changed(rewards=np.zeros((1, 4), dtype=np.float32)), "rewardWidth": 4},
            "final info null": ended({"env": 0, "info": None}),
            "final info a string": ended({"env": 0, "info": "x"}),
            "an env ended twice": ended({"env": 0, "info": {}}, {"env": 0, "info": {}}),
            "illegalActionSeat 99": ended({"env": 0, "info": {**FINAL, "illegalActionSeat": 99}}),
            "illegalActionSeat '1'": ended({"env": 0, "info": {**FINAL, "illegalActionSeat": "1"}}),
            # Balances and hands went into numpy arrays unchecked: a bare ValueError [review].
            "three balances at a table of 4": ended({"env": 0, "info": {**FINAL, "balances": [0, 0, 0]}}),
            "a balance 'x'": ended({"env": 0, "info": {**FINAL, "balances": [0, 0, 0, "x"]}}),
            "hands -1": ended({"env": 0, "info": {**FINAL, "hands": -1}}),
            "no hands": ended({"env": 0, "info": {"balances": [0, 0, 0, 0]}}),
            "env True": ended({"env": True, "info": {}}),
        }
        for name, result in cases.items():
            with self.subTest(name):
                with self.assertRaises(BridgeError) as caught:
                    Batch(result, fake_session())
                self.assertEqual(caught.exception.code, "internal_error")
        self.assertEqual(Batch(ended({"env": 0, "info": {**FINAL, "illegalActionSeat": 3}}), fake_session()).final[0][1], {**FINAL, "illegalActionSeat": 3})


def fake_session(num_envs: int = 1, num_players: int = 4, reward_width: int = 1) -> Session:
    """A Session's checks without a server: 490 entries bounded by [0, 1]."""
    session = Session.__new__(Session)
    session.num_envs, session.num_players, session.reward_width, session.obs_size = num_envs, num_players, reward_width, 490
    session.obs_low, session.obs_high = np.zeros(490, dtype=np.float32), np.ones(490, dtype=np.float32)
    return session


class HostileServer:
    """Accepts one WebSocket handshake, answers hello, then misbehaves as `mode` says."""

    def __init__(self, mode: str):
        self.mode = mode
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.port = self.listener.getsockname()[1]
        self.stop = threading.Event()
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        conn, _ = self.listener.accept()
        self.listener.close()
        request = b""
        while b"\r\n\r\n" not in request:
            request += conn.recv(4096)
        key = [line.split(b":", 1)[1].strip() for line in request.split(b"\r\n") if line.lower().startswith(b"sec-websocket-key")][0]
        accept = base64.b64encode(hashlib.sha1(key + GUID.encode()).digest()).decode()
        response = f"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n".encode()
        if self.mode == "drip":
            try:
                for byte in response:
                    if self.stop.wait(0.1):
                        break
                    conn.sendall(bytes([byte]))
            except OSError:
                pass
            conn.close()
            return
        conn.sendall(response)
        conn.recv(65536)  # hello
        actions = NUM_ACTIONS + 1 if self.mode == "other actions" else NUM_ACTIONS
        result = {"protocolVersion": 2, "numActions": actions}
        if self.mode.startswith("limits "):
            result["limits"] = json.loads(self.mode[len("limits "):])
        hello = json.dumps({"id": 1, "result": result}).encode()
        conn.sendall(struct.pack("!BB", 0x81, len(hello)) + hello)
        try:
            if self.mode == "between":
                # Between calls: a frame header nobody asked for, its payload dripped.
                conn.sendall(struct.pack("!BB", 0x81, 100))
                while not self.stop.wait(0.2):
                    conn.sendall(b"x")
                return
            conn.recv(65536)  # the call under test
            if self.mode == "fragments":
                conn.sendall(struct.pack("!BB", 0x01, 1) + b"{")
            if self.mode == "big ping":
                conn.sendall(struct.pack("!BBH", 0x89, 126, 200) + b"p" * 200)
            if self.mode == "fragmented ping":
                conn.sendall(struct.pack("!BB", 0x09, 1) + b"p")
            while not self.stop.wait(0.05):
                if self.mode == "pings":
                    conn.sendall(struct.pack("!BB", 0x89, 0))
                else:
                    conn.sendall(struct.pack("!BB", 0x00, 1) + b" ")
        except OSError:
            pass
        finally:
            conn.close()


class DeadlineTest(unittest.TestCase):
    def assert_ping_fails_within(self, mode: str, seconds: float, wait_first: float = 0.0) -> None:
        """A ping to a HostileServer(mode), by a client with a 0.5 s timeout that first idles
        `wait_first` seconds, fails as connection_closed within `seconds`."""
        server = HostileServer(mode)
        client = BridgeClient(f"ws://127.0.0.1:{server.port}", timeout=0.5)
        time.sleep(wait_first)
        started = time.monotonic()
        with self.assertRaises(BridgeError) as caught:
            client.call("ping")
        self.assertLess(time.monotonic() - started, seconds)
        self.assertEqual(caught.exception.code, "connection_closed")
        server.stop.set()
        client.close()

    def test_pings_or_fragments_that_keep_coming_do_not_hold_a_call_past_its_timeout(self):
        for mode in ("pings", "fragments"):
            with self.subTest(mode):
                self.assert_ping_fails_within(mode, 3.0)

    def test_a_control_frame_over_125_bytes_or_in_fragments_fails_the_connection(self):
        # RFC 6455 §5.5: a hostile server's 16 MiB ping was read whole and echoed back [probe, session 41].
        for mode in ("big ping", "fragmented ping"):
            with self.subTest(mode):
                server = HostileServer(mode)
                client = BridgeClient(f"ws://127.0.0.1:{server.port}", timeout=5)
                started = time.monotonic()
                with self.assertRaises(BridgeError) as caught:
                    client.call("ping")
                self.assertLess(time.monotonic() - started, 3.0)
                self.assertEqual(caught.exception.code, "connection_closed")
                self.assertIn("control frame", caught.exception.message)
                server.stop.set()
                client.close()

    def test_a_frame_dripped_between_calls_does_not_hold_the_next_call_past_its_timeout(self):
        # The keepalive thread read it with no deadline, holding the lock the call waited on: forever.
        # After 1 s the keepalive thread (every 0.5 s) has begun reading the frame.
        self.assert_ping_fails_within("between", 1.5, wait_first=1.0)


class IncompatibleServerTest(unittest.TestCase):
    def test_a_hello_with_another_action_count_is_refused_at_connect(self):
        # Every mask and action space would be read with the wrong width.
        server = HostileServer("other actions")
        with self.assertRaises(BridgeError) as caught:
            BridgeClient(f"ws://127.0.0.1:{server.port}", timeout=2)
        self.assertEqual(caught.exception.code, "incompatible_server")
        self.assertIn(str(NUM_ACTIONS + 1), caught.exception.message)
        server.stop.set()


    def test_a_hello_whose_limits_are_no_object_is_refused_at_connect(self):
        # `"limits": null` raised AttributeError at the next call [probe round 11].
        for limits in ("null", '"x"', "[1]"):
            with self.subTest(limits):
                server = HostileServer(f"limits {limits}")
                with self.assertRaises(BridgeError) as caught:
                    BridgeClient(f"ws://127.0.0.1:{server.port}", timeout=2)
                self.assertEqual(caught.exception.code, "internal_error")
                self.assertIn("limits", caught.exception.message)
                server.stop.set()


class _SpecClient:
    """A client whose env.create and spec replies are given (no server)."""

    def __init__(self, size, slices, announced=490):
        self.size, self.slices, self.announced = size, slices, announced

    def call(self, method, params=None):
        return {"session": "s1", "numPlayers": 4, "numEnvs": 1, "observationSize": self.announced}

    def spec(self):
        return {"observation": {"size": self.size, "slices": self.slices}}


class HostileSpecTest(unittest.TestCase):
    def test_an_observation_spec_of_another_size_or_with_slices_outside_is_refused_before_allocating(self):
        # A spec of 1e9 entries took 8.6 GB and 20 s, then a MemoryError [probe, session 41].
        one = [{"offset": 0, "size": 490, "low": 0, "high": 1}]
        cases = {
            "huge": _SpecClient(10**9, one, announced=10**9),
            "not as announced": _SpecClient(491, one),
            "past uint16 indices": _SpecClient(1 << 17, one, announced=None),
            "slice past the end": _SpecClient(490, [{"offset": 480, "size": 20, "low": 0, "high": 1}]),
            "negative offset": _SpecClient(490, [{"offset": -5, "size": 5, "low": 0, "high": 1}]),
        }
        for name, client in cases.items():
            with self.subTest(name):
                session = Session.__new__(Session)
                session.client = client
                with self.assertRaises(BridgeError) as caught:
                    session._create({"mode": "multi"})
                self.assertEqual(caught.exception.code, "internal_error")
        session = Session.__new__(Session)
        session.client = _SpecClient(490, one)
        session._create({"mode": "multi"})
        self.assertEqual(session.obs_size, 490)


class HandshakeDeadlineTest(unittest.TestCase):
    def test_a_handshake_dripped_a_byte_at_a_time_fails_within_the_timeout(self):
        # Each read came within the timeout, so the client waited for all of the reply (20 s and more).
        server = HostileServer("drip")
        started = time.monotonic()
        with self.assertRaises(BridgeError) as caught:
            BridgeClient(f"ws://127.0.0.1:{server.port}", timeout=0.5)
        self.assertLess(time.monotonic() - started, 3.0)
        self.assertEqual(caught.exception.code, "connection_failed")
        server.stop.set()


class _ScriptedWire:
    """Answers every request with one fixed reply (text or bytes)."""

    def __init__(self, reply):
        self.reply = reply
        self.closed = False

    def close(self):
        self.closed = True

    def request(self, text):
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


def scripted_ping_error(reply):
    """The BridgeError of a ping answered by `reply` (a client that skipped hello), and its wire."""
    client = BridgeClient.__new__(BridgeClient)
    client._next_id = 1
    client._wire = _ScriptedWire(reply)
    try:
        client.call("ping")
    except BridgeError as e:
        return e, client._wire
    raise AssertionError(f"the reply {reply!r:.60} was taken")


class MalformedRepliesTest(unittest.TestCase):
    def test_replies_outside_the_protocol_are_bridge_errors(self):
        # Each of these raised JSONDecodeError, UnicodeDecodeError, AttributeError, TypeError or
        # KeyError (a probe's fake server), where the client promises BridgeError.
        cases = {
            "not JSON": "{{{",
            "not UTF-8": UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
            "a list": "[1,2,3]",
            "error a string": '{"id":1,"error":"boom"}',
            "error without code": '{"id":1,"error":{}}',
            "no result": '{"id":1}',
            "nested 100,000 deep": "[" * 100_000 + "]" * 100_000,
            "NaN": '{"id":1,"result":{"x":NaN}}',
        }
        for name, reply in cases.items():
            with self.subTest(name):
                self.assertEqual(scripted_ping_error(reply)[0].code, "internal_error")

    def test_a_reply_to_another_request_closes_the_connection(self):
        # An extra frame put every later reply one request behind: each call failed, forever.
        # Ids true and 1.0 equal 1 in Python: they were taken as the answer to request 1 [probe round 11].
        for reply in ('{"id":7,"result":{}}', '{"id":true,"result":{}}', '{"id":1.0,"result":{}}', '{"id":"1","result":{}}'):
            with self.subTest(reply):
                error, wire = scripted_ping_error(reply)
                self.assertEqual(error.code, "internal_error")
                self.assertTrue(wire.closed)


class _FakeClient:
    """A client whose env.create and spec replies are given (the protocol's shape, odd contents)."""

    def __init__(self, created, spec):
        self.created, self.spec_reply = created, spec

    def call(self, method, params=None):
        return self.created

    def spec(self):
        return self.spec_reply


class SessionRepliesTest(unittest.TestCase):
    def test_create_and_spec_replies_with_fields_of_other_kinds_are_bridge_errors(self):
        # A bare TypeError or KeyError came out of Session (probe round 3).
        good_spec = {"observation": {"size": 2, "slices": [{"offset": 0, "size": 2, "low": 0, "high": 1}]}}
        good_created = {"session": "s1", "numPlayers": 4, "numEnvs": 1}
        cases = {
            "no session": ({"numPlayers": 4, "numEnvs": 1}, good_spec),
            "numPlayers a list": ({**good_created, "numPlayers": [4]}, good_spec),
            "size a string": (good_created, {"observation": {"size": "big", "slices": []}}),
            "slices not a list": (good_created, {"observation": {"size": 2, "slices": 5}}),
            "a slice without offset": (good_created, {"observation": {"size": 2, "slices": [{"size": 2}]}}),
            # An OverflowError [probe, session 47].
            "numEnvs 1e400": ({**good_created, "numEnvs": float("inf")}, good_spec),
            "size 1e400": (good_created, {"observation": {**good_spec["observation"], "size": float("inf")}}),
        }
        for name, (created, spec) in cases.items():
            with self.subTest(name), self.assertRaises(BridgeError) as caught:
                Session(None, _FakeClient(created, spec), None, {})
            self.assertEqual(caught.exception.code, "internal_error")
        # Fewer envs than asked came back as batches of that many rows beside spaces of the asked
        # count [probe, session 47].
        with self.assertRaisesRegex(BridgeError, "made 2 envs; 4 were asked"):
            Session(None, _FakeClient({**good_created, "numEnvs": 2}, good_spec), None, {"numEnvs": 4})
        self.assertEqual(Session(None, _FakeClient(good_created, good_spec), None, {"numEnvs": 1}).num_envs, 1)
        self.assertEqual(Session(None, _FakeClient(good_created, good_spec), None, {}).obs_size, 2)

    def test_an_observe_reply_of_another_shape_or_seat_is_a_bridge_error(self):
        # A 3-number observation came back silently, a string as a bare ValueError (probe round 6).
        from kratzen_bridge import KratzenAECEnv

        aec = KratzenAECEnv.__new__(KratzenAECEnv)
        spec = {"observation": {"size": 4, "slices": [{"name": "seat", "offset": 0, "size": 2, "low": 0, "high": 1}, {"offset": 2, "size": 2, "low": 0, "high": 1}]}}
        aec._session = Session(None, _FakeClient({"session": "s1", "numPlayers": 2, "numEnvs": 1}, spec), None, {})
        cases = (
            {"seat": 1, "observation": [0, 1, 0]},
            {"seat": 1, "observation": "abc"},
            {"seat": 1},
            {"seat": 2, "observation": [0, 0, 0, 0]},
            [1, 2],
            {"seat": 1, "observation": [0, float("nan"), 0, 0]},
            # Values outside the spec's bounds, and another seat's view, came back as given [probe, session 47].
            {"seat": 1, "observation": [0, 1, 0, 1e30]},
            {"seat": 1, "observation": [1, 0, 0, 0]},
        )
        for reply in cases:
            with self.subTest(reply=reply), self.assertRaises(BridgeError) as caught:
                aec._observation_of(reply, 1)
            self.assertEqual(caught.exception.code, "internal_error")
        self.assertEqual(aec._observation_of({"seat": 1, "observation": [0, 1, 0, 0.5]}, 1).tolist(), [0, 1, 0, 0.5])


if __name__ == "__main__":
    unittest.main()


class PolicyReplyTest(unittest.TestCase):
    """[probe round 7] RemotePolicy took the server's policy.act replies as answers whatever they
    held: 3 actions for 10 rows, 1.7 (as 1), 500, probabilities of shape (1, 1); a hello with
    maxPolicyRows -5 or "x" failed as a bare ValueError / TypeError."""

    def test_replies_that_answer_other_rows_are_internal_errors(self):
        from kratzen_bridge.policy import _checked_reply

        mask = np.zeros((10, NUM_ACTIONS), dtype=np.int8)
        mask[:, 5] = 1
        actions, probs = _checked_reply({"actions": [5] * 10}, mask)
        self.assertEqual(actions.tolist(), [5] * 10)
        self.assertIsNone(probs)
        uniform = np.where(mask, 1.0, 0.0).tolist()
        self.assertEqual(_checked_reply({"actions": [5] * 10, "probabilities": uniform}, mask)[1].shape, (10, NUM_ACTIONS))
        cases = {
            "3 actions for 10 rows": {"actions": [5, 5, 5]},
            "actions 1.7": {"actions": [1.7] * 10},
            "an action of True": {"actions": [True] * 10},
            "action 500": {"actions": [500] * 10},
            "an illegal action": {"actions": [5] * 9 + [6]},
            "no actions": {"probabilities": uniform},
            "probabilities (1, 1)": {"actions": [5] * 10, "probabilities": [[0.5]]},
            "probabilities above 1": {"actions": [5] * 10, "probabilities": (np.array(uniform) * 2).tolist()},
            "not an object": [5] * 10,
            # An OverflowError in numpy [probe, session 47].
            "action 10**20": {"actions": [10**20] * 10},
        }
        for name, reply in cases.items():
            with self.subTest(name), self.assertRaises(BridgeError) as caught:
                _checked_reply(reply, mask)
            self.assertEqual(caught.exception.code, "internal_error")

    def test_a_hello_with_a_limit_that_is_no_row_count_is_an_internal_error(self):
        from kratzen_bridge.policy import RemotePolicy

        policy = RemotePolicy.__new__(RemotePolicy)
        for limit in (-5, 0, "x", 2.5, True):
            policy.client = types.SimpleNamespace(hello={"limits": {"maxPolicyRows": limit}})
            with self.subTest(limit=limit), self.assertRaises(BridgeError) as caught:
                policy._max_rows(10)
            self.assertEqual(caught.exception.code, "internal_error")
        policy.client = types.SimpleNamespace(hello={"limits": {"maxPolicyRows": 4}})
        self.assertEqual(policy._max_rows(10), 4)
        policy.client = types.SimpleNamespace(hello={})
        self.assertEqual(policy._max_rows(10), 10)
