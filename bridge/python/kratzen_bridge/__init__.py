"""Python client of the Kratzen Gym bridge: `kratzen serve` speaks a versioned JSON protocol over
WebSocket; this package wraps it as Gymnasium (`KratzenEnv`), PettingZoo AEC (`KratzenAECEnv`)
and vectorized (`KratzenVecEnv`) environments.
"""

from .client import NUM_ACTIONS, PROTOCOL_VERSION, BridgeClient, BridgeError, LocalServer, ServerDidNotStart
from .envs import KratzenAECEnv, KratzenEnv, KratzenVecEnv
from .policy import RemotePolicy

__all__ = [
    "NUM_ACTIONS",
    "PROTOCOL_VERSION",
    "BridgeClient",
    "BridgeError",
    "LocalServer",
    "ServerDidNotStart",
    "KratzenEnv",
    "KratzenAECEnv",
    "KratzenVecEnv",
    "RemotePolicy",
]
