"""A bridge env session and its replies as numpy arrays (shared by the three env classes)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Union

import math

import numpy as np

from ._compat import Box
from .client import BINARY_ARRAYS, NUM_ACTIONS, BridgeClient, BridgeError, csr_to_dense

# Observation entries are indexed by uint16 in the binary frames: no spec may have more.
MAX_OBSERVATION_SIZE = 1 << 16

Seed = Optional[int]


class Batch:
    """One env.reset / env.step reply: dense observations and int8 masks, rows are envs.

    Everything is checked before use: a reply of the wire format's shape whose values are not a
    batch of this session (a seat off the table, NaN or out-of-bounds observations, a mask byte
    of 255, a final `info` that is not an object, an env ended twice) is BridgeError
    "internal_error"; before, such values came back silently or as bare IndexErrors."""

    __slots__ = ("observations", "masks", "seats", "rewards", "terminated", "truncated", "final")

    def __init__(self, result: Dict[str, Any], session: "Session"):
        num_envs = session.num_envs
        a = result.get("arrays")
        # Every array of a binary batch, decoded (a JSON reply's "arrays" of lists, or one
        # missing, failed as a bare KeyError or AttributeError).
        if (
            not isinstance(a, dict)
            or not all(isinstance(a.get(name), np.ndarray) for name, _ in BINARY_ARRAYS)
            or result.get("numEnvs") != num_envs
            or not isinstance(result.get("final"), list)
        ):
            raise BridgeError("internal_error", f"the server's reply is not a binary batch of this session's {num_envs} envs")
        if result.get("rewardWidth", 1) != session.reward_width:
            raise _not_ours(f"rewardWidth {result.get('rewardWidth')!r:.40} (this session's rewards are {session.reward_width} per env)")
        self.observations = csr_to_dense(a["observations.indptr"], a["observations.indices"], a["observations.values"], session.obs_size)
        session.check_values(a["observations.indices"], a["observations.values"], "observations")
        for name in ("masks", "terminated", "truncated"):
            if ((a[name] != 0) & (a[name] != 1)).any():
                raise _not_ours(f"{name} holds values other than 0 and 1")
        seats = a["seats"].astype(np.int64)
        if ((seats < 0) | (seats >= session.num_players)).any():
            raise _not_ours(f"a seat to act {int(seats[(seats < 0) | (seats >= session.num_players)][0])} at a table of {session.num_players} (a step always leaves one to act)")
        if not np.isfinite(a["rewards"]).all():
            raise _not_ours("a reward that is not a finite number")
        self.masks = a["masks"].astype(np.int8)
        self.seats = seats
        self.rewards = a["rewards"].astype(np.float32)
        self.terminated = a["terminated"].astype(bool)
        self.truncated = a["truncated"].astype(bool)
        final_obs = csr_to_dense(
            a["finalObservations.indptr"], a["finalObservations.indices"], a["finalObservations.values"], session.obs_size
        )
        session.check_values(a["finalObservations.indices"], a["finalObservations.values"], "final observations")
        # env index -> (final observation, info) of the episode that ended in this step
        finals = result["final"]
        envs = [f.get("env") if isinstance(f, dict) else None for f in finals]
        if len(finals) != len(final_obs) or not all(isinstance(e, int) and not isinstance(e, bool) and 0 <= e < num_envs for e in envs):
            raise BridgeError("internal_error", "the server's final observations do not match its list of ended envs")
        if len(set(envs)) != len(envs):
            raise _not_ours("an env ended twice in one step")
        infos = [f.get("info") for f in finals]
        for info in infos:
            if not isinstance(info, dict):
                raise _not_ours(f"a final info that is not an object: {info!r:.60}")
            balances = info.get("balances")
            if not (isinstance(balances, list) and len(balances) == session.num_players and all(_is_finite_number(b) for b in balances)):
                raise _not_ours(f"final balances {balances!r:.80} at a table of {session.num_players}")
            hands = info.get("hands")
            if not (isinstance(hands, int) and not isinstance(hands, bool) and hands >= 0):
                raise _not_ours(f"final hands {hands!r:.40}")
            seat = info.get("illegalActionSeat")
            if "illegalActionSeat" in info and (not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < session.num_players):
                raise _not_ours(f"illegalActionSeat {seat!r:.40} at a table of {session.num_players}")
        self.final = {e: (final_obs[k], infos[k]) for k, e in enumerate(envs)}


def _is_finite_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _not_ours(reason: str) -> BridgeError:
    return BridgeError("internal_error", f"the server's batch is not one of this session: {reason}")


class Session:
    """Owns a server-side session (and the client, when it made it)."""

    def __init__(
        self,
        url: Optional[str],
        client: Optional[BridgeClient],
        token: Optional[str],
        params: Dict[str, Any],
        timeout: Optional[float] = None,
    ):
        if client is None and url is None:
            raise ValueError("pass a server url (ws://127.0.0.1:8765) or a BridgeClient")
        if client is None and not isinstance(url, str):
            raise TypeError(f"url must be a ws:// URL string, not {url!r:.100}")
        # A URL given as the client failed as "'str' object has no attribute 'call'".
        if client is not None and (isinstance(client, str) or not callable(getattr(client, "call", None))):
            raise TypeError(f"client must be a BridgeClient (or pass the server's URL as url), not {client!r:.100}")
        if client is not None and token is not None:
            raise ValueError("token is for a URL: a BridgeClient has said hello with its own")
        if client is not None and timeout is not None:
            raise ValueError("timeout is for a URL: a BridgeClient has its own (BridgeClient(url, timeout=...))")
        self.owns_client = client is None
        if client is None:
            # Only a timeout given is passed: the client's default stays the one documented there.
            client = BridgeClient(url, token=token) if timeout is None else BridgeClient(url, token=token, timeout=timeout)  # type: ignore[arg-type]
        self.client = client
        try:
            self._create(params)
        except BaseException:
            # A refused env.create (a limit, bad rules) left the env's own connection open, kept
            # alive by its keepalive thread: enough of them locked the client out of the server.
            if self.owns_client:
                self.client.close()
            raise

    def _create(self, params: Dict[str, Any]) -> None:
        self.info = self.client.call("env.create", {**params, "encoding": "binary"})
        try:
            self.id: str = self.info["session"]
            spec = self.client.spec()["observation"]
            self.obs_size: int = int(spec["size"])
            # Checked before anything is allocated: a hostile spec of 1e9 entries took 8.6 GB.
            announced = self.info.get("observationSize")
            if not (0 < self.obs_size <= MAX_OBSERVATION_SIZE) or (announced is not None and announced != self.obs_size):
                raise BridgeError(
                    "internal_error",
                    f"the server's observation spec has {spec['size']!r:.40} entries; env.create said {announced!r:.40} (at most {MAX_OBSERVATION_SIZE})",
                )
            low = np.zeros(self.obs_size, dtype=np.float32)
            high = np.zeros(self.obs_size, dtype=np.float32)
            for s in spec["slices"]:
                offset, size = int(s["offset"]), int(s["size"])
                if not (0 <= offset and 0 < size and offset + size <= self.obs_size):
                    raise BridgeError("internal_error", f"the server's observation spec has a slice outside its {self.obs_size} entries: {s!r:.100}")
                low[offset : offset + size] = s["low"]
                high[offset : offset + size] = s["high"]
            # Whose view an observation is: the one-hot slice of the observing seat (None when the spec has none).
            seat = next((s for s in spec["slices"] if s.get("name") == "seat"), None)
            self.seat_slice: Optional[slice] = None if seat is None else slice(int(seat["offset"]), int(seat["offset"]) + int(seat["size"]))
            self.num_players: int = int(self.info["numPlayers"])
            self.num_envs: int = int(self.info["numEnvs"])
            asked = params.get("numEnvs")
            if asked is not None and self.num_envs != asked:
                # Batches are checked against the server's count: 2 envs where 4 were asked came
                # back as (2, N) arrays beside spaces of 4.
                raise BridgeError("internal_error", f"the server's env.create made {self.num_envs!r:.40} envs; {asked} were asked")
            # Rewards come one per env for a learner, one per seat in self-play.
            self.reward_width: int = self.num_players if params.get("mode") == "multi" else 1
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError) as e:
            # A reply of the protocol's shape with fields of other kinds (1e400 as a count: an
            # OverflowError) is the server's fault.
            raise BridgeError("internal_error", f"the server's env.create or spec reply is not the protocol's: {e!r:.200}") from None
        if not (np.isfinite(low).all() and np.isfinite(high).all() and (low <= high).all()):
            raise BridgeError("internal_error", "the server's observation spec has bounds that are not finite, or low above high")
        self.obs_low, self.obs_high = low, high
        self.closed = False

    def check_values(self, indices: np.ndarray, values: np.ndarray, name: str) -> None:
        """Observation entries (CSR indices, already checked by csr_to_dense, and values) lie within
        the spec's bounds: NaN and 1e30 in a slice bounded by 1 came back silently."""
        at = indices.astype(np.int64)
        outside = ~((values >= self.obs_low[at]) & (values <= self.obs_high[at]))
        if outside.any():
            k = int(np.argmax(outside))
            raise _not_ours(f"{name} entry {int(indices[k])} is {float(values[k])!r}, outside [{self.obs_low[at[k]]}, {self.obs_high[at[k]]}]")

    def observation_box(self, batch: Optional[int] = None) -> Box:
        if batch is None:
            return Box(self.obs_low, self.obs_high, shape=(self.obs_size,), dtype=np.float32)
        return Box(np.tile(self.obs_low, (batch, 1)), np.tile(self.obs_high, (batch, 1)), shape=(batch, self.obs_size), dtype=np.float32)

    @staticmethod
    def mask_box() -> Box:
        return Box(0, 1, shape=(NUM_ACTIONS,), dtype=np.int8)

    def check_open(self, method: str) -> None:
        """Misuse after close() is the caller's, said as such (a step said "call reset() first",
        a reset was the connection's `connection_closed`)."""
        if self.closed:
            raise RuntimeError(f"the env is closed: {method}() after close()")

    def reset(self, seed: Seed) -> Batch:
        self.check_open("reset")
        params: Dict[str, Any] = {"session": self.id}
        seed = as_seed(seed)
        if seed is not None:
            # As a string: Python ints may pass 2**53 (and the server seeds "7" exactly like 7).
            params["seed"] = str(seed)
        return Batch(self.client.call("env.reset", params), self)

    def step(self, actions: List[int]) -> Batch:
        self.check_open("step")
        return Batch(self.client.call("env.step", {"session": self.id, "actions": actions}), self)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self.client.call("env.close", {"session": self.id})
        except Exception:  # the connection may be gone; the server frees the session with it
            pass
        if self.owns_client:
            self.client.close()


REWARD_NORMALIZATIONS = ("chips", "pot")


def env_config(rules, episode, illegal_action, illegal_action_penalty, reward_scale, max_steps, reward_normalization="chips") -> Dict[str, Any]:
    """The server's env config (bridge/protocol.ts, env/table.ts). `reward_normalization="pot"`
    divides each seat's chip changes by the pot at its latest decision, as the trainer does."""
    if rules is not None and not isinstance(rules, dict):
        raise TypeError(f"rules must be a dict of rule-set fields ({{'profile': 'tavern5', 'players': 5}}), not {rules!r:.100}")
    if reward_normalization not in REWARD_NORMALIZATIONS:
        raise ValueError(f"reward_normalization must be one of {REWARD_NORMALIZATIONS}, not {reward_normalization!r}")
    return {
        "rules": dict(rules or {}),
        "episode": episode,
        "illegalAction": illegal_action,
        "illegalActionPenalty": as_real(illegal_action_penalty, "illegal_action_penalty"),
        "rewardScale": as_real(reward_scale, "reward_scale"),
        "rewardNormalization": reward_normalization,
        "maxSteps": as_int(max_steps, "max_steps", 0),
    }


def as_int(value, name: str, minimum: int) -> int:
    """A Python or numpy integer of at least `minimum`; anything else (2.7, True, "3", which
    int() turned into 2, 1 and 3) is an error naming `name`."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, not {value!r:.100}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, not {value}")
    return int(value)


def as_real(value, name: str) -> float:
    """A Python or numpy number (not a bool or a string, which float() took; NaN and infinities
    are refused when sent, naming the server's field)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, not {value!r:.100}")
    return float(value)


def as_action(action) -> int:
    """Python and numpy integers (and 0-d integer arrays) as an int; anything else, a float
    that would be truncated included, is a TypeError."""
    if isinstance(action, np.ndarray) and action.ndim == 0:
        action = action[()]
    if isinstance(action, (bool, np.bool_)):
        raise TypeError(f"an action is an integer id, not {action!r}")
    try:
        return int(action.__index__())
    except (AttributeError, TypeError, ValueError):
        raise TypeError(f"an action is an integer id 0..{NUM_ACTIONS - 1}, not {action!r:.100}") from None


# Larger integers would reach the server rounded to a double (JSON numbers are doubles), or as
# Infinity past ~1.8e308, which the request schema refuses: they go as -1, illegal either way.
# Smaller ones go as given, so that a refusal names the caller's action (it said -1).
_MAX_WIRE_INT = 2**53 - 1


def wire_action(action: int) -> int:
    """An integer action id as sent (see _MAX_WIRE_INT)."""
    return action if -_MAX_WIRE_INT <= action <= _MAX_WIRE_INT else -1


def wire_actions(actions, num_envs: int, env_judges_illegal: bool = False) -> List[int]:
    """One integer action id per env, as sent (wire_action). Floats (truncated silently before),
    booleans and other kinds are a TypeError naming the actions, in an array or a list alike
    (each element of a list as KratzenEnv judges an action: numpy made [True, 35] integers and
    [35, np.uint64(33)] floats). Where the env judges illegal actions (single mode with
    illegal_action "terminate": a penalty, never an error), ids outside 0..NUM_ACTIONS-1 go as -1:
    illegal alike, and each then fits the bytes hello's maxEnvs counts per action (1000 took
    five, and a step of maxEnvs such actions was refused as too large)."""
    if isinstance(actions, (list, tuple)):
        if len(actions) != num_envs:
            raise ValueError(f"expected {num_envs} actions, got {len(actions)}")
        ids = [_action_of_env(a, i) for i, a in enumerate(actions)]
    else:
        array = np.asarray(actions)
        if array.shape != (num_envs,):
            raise ValueError(f"expected {num_envs} actions, got shape {array.shape}")
        if array.dtype == object:
            # Integers past int64 (2**70) make an object array.
            ids = [_action_of_env(a, i) for i, a in enumerate(array.tolist())]
        elif array.dtype == np.bool_ or not np.issubdtype(array.dtype, np.integer):
            raise TypeError(f"actions must be integer action ids 0..{NUM_ACTIONS - 1}, got an array of {array.dtype}")
        else:
            ids = array.tolist()
    if env_judges_illegal:
        return [a if 0 <= a < NUM_ACTIONS else -1 for a in ids]
    return [wire_action(a) for a in ids]


def _action_of_env(action, env: int) -> int:
    try:
        return as_action(action)
    except TypeError:
        raise TypeError(f"actions must be integer action ids 0..{NUM_ACTIONS - 1}: env {env}'s is {action!r:.60}") from None


def as_opponents(opponents) -> Union[str, List[Optional[str]]]:
    """One agent name for every other seat, or a list with one per seat (None at the learner's)."""
    if isinstance(opponents, str):
        return opponents
    if isinstance(opponents, (list, tuple)) and all(o is None or isinstance(o, str) for o in opponents):
        return list(opponents)
    raise TypeError(f"opponents must be an agent name (random, heuristic, pimc, a checkpoint) or a list of one per seat, not {opponents!r:.100}")


def as_seed(seed) -> Optional[int]:
    """A Gymnasium reset seed: a non-negative integer or None (every env class alike: numpy's
    generator, which Gymnasium seeds with it, refuses negative ones)."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an integer or None, not {seed!r:.100}")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer (as in Gymnasium), not {seed}")
    # Sent as its decimal string, which the server takes up to 256 characters (MAX_SEED_LENGTH,
    # env/rules/errors.ts): a longer one was refused as "params.seed: expected string to have <=256 characters".
    if seed >= 10**_MAX_SEED_DIGITS:
        raise ValueError(f"seed must have at most {_MAX_SEED_DIGITS} digits, not {len(str(seed))}")
    return int(seed)


_MAX_SEED_DIGITS = 256


def check_aec_reset_options(options) -> None:
    """A PettingZoo env's reset reads no options but takes any dict of them: PettingZoo's own
    `api_test` resets with `options={"options": 1}` to check that the argument exists."""
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"options must be a dict or None, not {options!r:.100}")


def check_reset_options(options) -> None:
    """Reset takes no options: every env is reset. Gymnasium's `reset_mask` (partial resets,
    for envs without autoreset) was ignored, resetting every env the caller meant to keep."""
    if options is None:
        return
    if not isinstance(options, dict):
        raise TypeError(f"options must be a dict or None, not {options!r:.100}")
    if "reset_mask" in options:
        raise ValueError("reset_mask is not supported: envs reset themselves in the step their episode ends (autoreset same-step), and reset() resets every env")
    if options:
        raise ValueError(f"unknown reset option(s): {', '.join(map(str, options))}")
