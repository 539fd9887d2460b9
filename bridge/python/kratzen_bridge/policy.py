"""A policy served by the bridge (a checkpoint, or a built-in agent), usable from Python."""

from __future__ import annotations

import re
from typing import Any, Dict, Optional

import numpy as np

from .client import BridgeClient, BridgeError


class RemotePolicy:
    """`act(obs, mask)` -> (actions, probabilities or None) for a batch of observations;
    `act_on_record(record)` -> the reply for the seat to act after replaying `record`."""

    def __init__(self, client: BridgeClient, agent: str, *, rules: Optional[dict] = None, mode: str = "greedy", seed: int = 0):
        params: Dict[str, Any] = {"agent": agent, "mode": mode, "seed": seed}
        if rules is not None:
            params["rules"] = rules
        self.client = client
        self.info = client.call("policy.load", params)
        self.id: str = self.info["policy"]

    def act(self, observations: np.ndarray, masks: np.ndarray):
        """Any number of rows: sent in requests of at most the server's `maxPolicyRows` rows,
        split further while a request would pass its message limit. An error names the row as
        the caller numbered it."""
        obs = np.atleast_2d(np.asarray(observations, dtype=np.float32))
        mask = np.atleast_2d(np.asarray(masks))
        if len(obs) == 0:
            return np.zeros(0, dtype=np.int64), None
        if len(mask) != len(obs):
            raise ValueError(f"masks has {len(mask)} rows, observations {len(obs)}: one mask row per observation")
        # Nonzero is legal, as the server reads a mask: astype(int) made 0.5 illegal and NaN legal.
        if np.issubdtype(mask.dtype, np.floating) and np.isnan(mask).any():
            row = int(np.argwhere(np.isnan(mask))[0][0])
            raise ValueError(f"masks[{row}] holds NaN: a mask entry is 1 (legal) or 0")
        mask = (mask != 0).astype(np.int8)
        max_rows = self.client.hello.get("limits", {}).get("maxPolicyRows") or max(1, len(obs))
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
        probs = reply.get("probabilities")
        return np.asarray(reply["actions"], dtype=np.int64), (np.asarray(probs, dtype=np.float32) if probs is not None else None)

    def act_on_record(self, record: dict) -> Dict[str, Any]:
        return self.client.call("policy.act", {"policy": self.id, "record": record})

    def close(self) -> None:
        self.client.call("policy.close", {"policy": self.id})


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
