"""A policy served by the bridge (a checkpoint, or a built-in agent), usable from Python."""

from __future__ import annotations

import re
from typing import Any, Dict, Optional, Union

import numpy as np

from .client import NUM_ACTIONS, BridgeClient, BridgeError


def _not_a_reply(method: str, reason: str) -> BridgeError:
    return BridgeError("internal_error", f"the server's {method} reply is not the protocol's: {reason}")


class RemotePolicy:
    """`act(obs, mask)` -> (actions, probabilities or None) for a batch of observations;
    `act_on_record(record)` -> the reply for the seat to act after replaying `record`."""

    def __init__(self, client: Union[BridgeClient, str], agent: str, *, rules: Optional[dict] = None, mode: str = "greedy", seed: int = 0, token: Optional[str] = None):
        """`client` is a BridgeClient, or a server URL (ws://127.0.0.1:8765) to connect to with
        `token`: that connection is the policy's own, closed by `close()`."""
        params: Dict[str, Any] = {"agent": agent, "mode": mode, "seed": seed}
        if rules is not None:
            params["rules"] = rules
        # A URL went on as a client, failing as "'str' object has no attribute 'call'".
        if isinstance(client, str):
            client = BridgeClient(client, token=token)
            self._owns_client = True
        elif isinstance(client, BridgeClient):
            if token is not None:
                raise ValueError("token is for a URL: a BridgeClient has said hello with its own")
            self._owns_client = False
        else:
            raise TypeError(f"client must be a BridgeClient or a ws:// URL string, not {client!r:.100}")
        self.client = client
        self._closed = False
        try:
            self.info = client.call("policy.load", params)
            if not isinstance(self.info, dict) or not isinstance(self.info.get("policy"), str):
                raise _not_a_reply("policy.load", "no policy id")
        except BaseException:
            if self._owns_client:
                client.close()
            raise
        self.id: str = self.info["policy"]

    def act(self, observations: np.ndarray, masks: np.ndarray):
        """Any number of rows: sent in requests of at most the server's `maxPolicyRows` rows,
        split further while a request would pass its message limit. An error names the row as
        the caller numbered it."""
        obs = np.atleast_2d(np.asarray(observations, dtype=np.float32))
        mask = np.atleast_2d(np.asarray(masks))
        # Strings compared with 0 failed deep inside ("'bool' object has no attribute 'astype'").
        if not (mask.dtype == np.bool_ or np.issubdtype(mask.dtype, np.integer) or np.issubdtype(mask.dtype, np.floating)):
            raise TypeError(f"masks must be numbers or booleans (1 or True: legal), not an array of {mask.dtype}")
        if len(obs) == 0:
            return np.zeros(0, dtype=np.int64), None
        if len(mask) != len(obs):
            raise ValueError(f"masks has {len(mask)} rows, observations {len(obs)}: one mask row per observation")
        # Nonzero is legal, as the server reads a mask: astype(int) made 0.5 illegal and NaN legal.
        if np.issubdtype(mask.dtype, np.floating) and np.isnan(mask).any():
            row = int(np.argwhere(np.isnan(mask))[0][0])
            raise ValueError(f"masks[{row}] holds NaN: a mask entry is 1 (legal) or 0")
        mask = (mask != 0).astype(np.int8)
        max_rows = self._max_rows(len(obs))
        actions, probs = [], []
        for start in range(0, len(obs), max_rows):
            try:
                a, p = self._act_fitting(obs[start : start + max_rows], mask[start : start + max_rows])
            except BridgeError as e:
                raise _renumbered(e, start) from None
            actions.append(a)
            probs.append(p)
        probabilities = None if any(p is None for p in probs) else np.concatenate(probs)
        return (np.concatenate(actions) if actions else np.zeros(0, dtype=np.int64)), probabilities

    def _max_rows(self, rows: int) -> int:
        limits = self.client.hello.get("limits") if isinstance(self.client.hello, dict) else None
        limit = limits.get("maxPolicyRows") if isinstance(limits, dict) else None
        if limit is None:
            return max(1, rows)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise BridgeError("internal_error", f"the server's hello gives maxPolicyRows {limit!r:.40}, not a positive integer")
        return limit

    def _act_fitting(self, obs: np.ndarray, mask: np.ndarray):
        try:
            reply = self.client.call("policy.act", {"policy": self.id, "observations": obs.tolist(), "masks": mask.tolist()})
        except BridgeError as e:
            if e.code != "limit_exceeded" or len(obs) < 2:
                raise
            half = len(obs) // 2
            a1, p1 = self._act_fitting(obs[:half], mask[:half])
            try:
                a2, p2 = self._act_fitting(obs[half:], mask[half:])
            except BridgeError as second:
                raise _renumbered(second, half) from None
            return np.concatenate([a1, a2]), (np.concatenate([p1, p2]) if p1 is not None and p2 is not None else None)
        return _checked_reply(reply, mask)

    def act_on_record(self, record: dict) -> Dict[str, Any]:
        return self.client.call("policy.act", {"policy": self.id, "record": record})

    def close(self) -> None:
        """Unloads the policy (and closes its own connection); again, it does nothing, as an env's
        close (a second call raised `unknown_policy`)."""
        if self._closed:
            return
        self._closed = True
        try:
            if not self.client.closed:
                self.client.call("policy.close", {"policy": self.id})
        except BridgeError:
            pass  # the connection went: the server frees its policies with it
        finally:
            if self._owns_client:
                self.client.close()

    def __enter__(self) -> "RemotePolicy":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _checked_reply(reply, mask: np.ndarray):
    """A policy.act reply's actions (one legal action per row) and probabilities (None, or one
    row of NUM_ACTIONS per row, each in [0, 1]). A reply of 3 actions for 10 rows, 1.7 (taken as
    1), 500 or probabilities of another shape came back as if they were answers."""
    if not isinstance(reply, dict):
        raise _not_a_reply("policy.act", "not an object")
    actions = reply.get("actions")
    rows = len(mask)
    if not isinstance(actions, list) or len(actions) != rows or not all(isinstance(a, int) and not isinstance(a, bool) for a in actions):
        raise _not_a_reply("policy.act", f"expected {rows} integer actions, got {actions!r:.80}")
    # Range first, as Python ints: one past int64 (10**20) failed in numpy as an OverflowError.
    row = next((i for i, a in enumerate(actions) if not 0 <= a < NUM_ACTIONS), None)
    chosen = np.asarray(actions if row is None else [0] * rows, dtype=np.int64)
    if row is None and not mask[np.arange(rows), chosen].all():
        row = int(np.argmin(mask[np.arange(rows), chosen]))
    if row is not None:
        raise _not_a_reply("policy.act", f"action {actions[row]} for row {row} is not one of its legal actions")
    probs = reply.get("probabilities")
    if probs is None:
        return chosen, None
    try:
        probabilities = np.asarray(probs, dtype=np.float32)
    except (TypeError, ValueError):
        probabilities = None
    if probabilities is None or probabilities.shape != (rows, NUM_ACTIONS) or not ((probabilities >= 0) & (probabilities <= 1)).all():
        raise _not_a_reply("policy.act", f"probabilities must be {rows} rows of {NUM_ACTIONS} numbers in [0, 1]")
    return chosen, probabilities


def _renumbered(error: BridgeError, first_row: int) -> BridgeError:
    """`error` of a request that began at the caller's row `first_row`, its row index (of
    params.observations or params.masks) counted from the caller's first row."""
    if first_row == 0:
        return error

    def shift(text: Optional[str]) -> Optional[str]:
        if text is None:
            return None
        return re.sub(r"(params\.(?:observations|masks|seats)\[)(\d+)\]", lambda m: f"{m.group(1)}{int(m.group(2)) + first_row}]", text)

    return BridgeError(error.code, shift(error.message) or error.message, shift(error.field), error.details)
