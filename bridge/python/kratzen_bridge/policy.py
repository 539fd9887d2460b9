"""A policy served by the bridge (a checkpoint, or a built-in agent), usable from Python."""

from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np

from .client import BridgeClient


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
        obs = np.atleast_2d(np.asarray(observations, dtype=np.float32))
        mask = np.atleast_2d(np.asarray(masks))
        reply = self.client.call("policy.act", {"policy": self.id, "observations": obs.tolist(), "masks": mask.astype(int).tolist()})
        probs = reply.get("probabilities")
        return np.asarray(reply["actions"], dtype=np.int64), (np.asarray(probs, dtype=np.float32) if probs is not None else None)

    def act_on_record(self, record: dict) -> Dict[str, Any]:
        return self.client.call("policy.act", {"policy": self.id, "record": record})

    def close(self) -> None:
        self.client.call("policy.close", {"policy": self.id})
