"""A Stable-Baselines3 vector env over one batched bridge session.

`KratzenSB3VecEnv(num_envs, url, opponents=..., ...)` is a `stable_baselines3` `VecEnv` when SB3
is importable (else it subclasses a look-alike with the same interface, so the contract can be
tested without it): N tables stepped by one message per step, the learner at `learner_seat` of
each, the other seats played on the server. sb3-contrib's `MaskablePPO` takes it as it is: the
masks come from `env_method("action_masks")`.

    from sb3_contrib import MaskablePPO
    venv = KratzenSB3VecEnv(16, "ws://127.0.0.1:8765", opponents="heuristic", reward_normalization="pot")
    MaskablePPO("MlpPolicy", venv, n_steps=256).learn(100_000)

SB3 semantics: `reset()` returns the observations (seeds set with `seed(s)` apply at the next
reset: table i plays the sessions "<s>:<i>", ...); `step_wait()` returns (obs, rewards, dones,
infos) with `dones = terminated | truncated`; a table whose episode ended is reset in the same
step, its last observation in `infos[i]["terminal_observation"]` and
`infos[i]["TimeLimit.truncated"]` set when it was truncated. Illegal actions end the episode with
`-illegal_action_penalty` (`infos[i]["illegal_action"]`).
"""

from __future__ import annotations

from typing import Any, Iterable, List, Optional, Sequence, Union

import numpy as np

from ._compat import HAVE_GYMNASIUM
from .client import NUM_ACTIONS, BridgeClient
from .session import Session, as_int, as_opponents, as_seed, env_config, wire_actions

try:  # pragma: no cover - depends on the environment
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv as _SB3VecEnv

    HAVE_SB3 = True
except ImportError:  # pragma: no cover
    _SB3VecEnv = None
    HAVE_SB3 = False

if HAVE_GYMNASIUM:  # SB3 checks the spaces' types
    from gymnasium.spaces import Box, Discrete
else:  # pragma: no cover
    from ._compat import Box, Discrete  # type: ignore[assignment]

Indices = Union[None, int, Iterable[int]]


class VecEnvLookAlike:
    """SB3's `VecEnv` interface, reduced to what the subclass and its users rely on."""

    def __init__(self, num_envs: int, observation_space, action_space):
        self.num_envs = num_envs
        self.observation_space = observation_space
        self.action_space = action_space
        self.reset_infos: List[dict] = [{} for _ in range(num_envs)]
        self._seeds: List[Optional[int]] = [None] * num_envs
        self._options: List[dict] = [{} for _ in range(num_envs)]
        self.render_mode = self.get_attr("render_mode")[0]
        self.metadata = {"render_modes": []}

    def _reset_seeds(self) -> None:
        self._seeds = [None] * self.num_envs

    def _reset_options(self) -> None:
        self._options = [{} for _ in range(self.num_envs)]

    def step(self, actions):
        self.step_async(actions)
        return self.step_wait()

    def seed(self, seed: Optional[int] = None):
        if seed is None:
            seed = int(np.random.randint(0, 2**31 - 1))
        self._seeds = [seed + i for i in range(self.num_envs)]
        return self._seeds

    def has_attr(self, attr_name: str) -> bool:
        try:
            self.get_attr(attr_name)
            return True
        except AttributeError:
            return False

    def _get_indices(self, indices: Indices) -> Iterable[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return indices


Base = _SB3VecEnv if HAVE_SB3 else VecEnvLookAlike


class KratzenSB3VecEnv(Base):  # type: ignore[misc, valid-type]
    """N bridge tables as one SB3 VecEnv (see the module docstring)."""

    def __init__(
        self,
        num_envs: int,
        url: Optional[str] = None,
        *,
        client: Optional[BridgeClient] = None,
        token: Optional[str] = None,
        timeout: Optional[float] = None,
        rules: Optional[dict] = None,
        opponents: Union[str, Sequence[Optional[str]]] = "random",
        learner_seat: int = 0,
        episode: str = "hand",
        illegal_action_penalty: float = 10.0,
        reward_scale: float = 1.0,
        reward_normalization: str = "chips",
        max_steps: int = 0,
        render_mode: Optional[str] = None,
    ):
        if render_mode is not None:
            raise ValueError("KratzenSB3VecEnv has no render modes")
        config = env_config(rules, episode, "terminate", illegal_action_penalty, reward_scale, max_steps, reward_normalization)
        num_envs = as_int(num_envs, "num_envs", 1)
        learner_seat = as_int(learner_seat, "learner_seat", 0)
        params = {
            "mode": "single",
            "numEnvs": num_envs,
            "config": config,
            "learnerSeat": learner_seat,
            "opponents": as_opponents(opponents),
        }
        self._session = Session(url, client, token, params, timeout)
        self.render_mode = None
        self.learner_seat = learner_seat
        self._masks = np.zeros((num_envs, NUM_ACTIONS), dtype=np.int8)
        self._actions: Optional[List[int]] = None
        self._was_reset = False
        self.closed = False
        observation_space = Box(self._session.obs_low, self._session.obs_high, shape=(self._session.obs_size,), dtype=np.float32)
        super().__init__(num_envs, observation_space, Discrete(NUM_ACTIONS))

    # ---- the VecEnv protocol

    def seed(self, seed: Optional[int] = None):
        # Checked as every env class checks its seed: 2.7 played seed 2's deals, True and -5
        # were taken, and "2" failed inside with "can only concatenate str".
        return super().seed(as_seed(seed))

    def reset(self):
        seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
        batch = self._session.reset(seed)
        self._reset_seeds()
        self._reset_options()
        self._masks = batch.masks.copy()
        self._was_reset = True
        self.reset_infos = [{"action_mask": self._masks[i].copy()} for i in range(self.num_envs)]
        return batch.observations

    def step_async(self, actions) -> None:
        self._session.check_open("step")
        # Misuse the client sees itself, as KratzenVecEnv reports it (it was the server's BridgeError "not_reset").
        if not self._was_reset:
            raise RuntimeError("call reset() before step()")
        actions = actions if isinstance(actions, (list, tuple)) else np.asarray(actions).reshape(-1)
        self._actions = wire_actions(actions, self.num_envs, env_judges_illegal=True)

    def step_wait(self):
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        wire = self._actions
        self._actions = None
        batch = self._session.step(wire)
        self._masks = batch.masks.copy()
        dones = batch.terminated | batch.truncated
        infos: List[dict] = [{} for _ in range(self.num_envs)]
        for i, (final_obs, final_info) in batch.final.items():
            infos[i]["terminal_observation"] = final_obs
            infos[i]["TimeLimit.truncated"] = bool(batch.truncated[i] and not batch.terminated[i])
            if final_info.get("illegalAction"):
                infos[i]["illegal_action"] = True
            if "balances" in final_info:
                infos[i]["balances"] = final_info["balances"]
        return batch.observations, batch.rewards.reshape(self.num_envs).astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """The current masks, (num_envs, 74) booleans."""
        # After close it gave the last masks, as if the env could still be stepped.
        self._session.check_open("action_masks")
        return self._masks.astype(bool)

    def get_attr(self, attr_name: str, indices: Indices = None) -> List[Any]:
        value = getattr(self, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Indices = None) -> None:
        if attr_name.startswith("_"):
            raise AttributeError(f"{attr_name} is private")
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices: Indices = None, **method_kwargs) -> List[Any]:
        rows = list(self._get_indices(indices))
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in rows]
        method = getattr(self, method_name)
        return [method(*method_args, **method_kwargs) for _ in rows]

    def env_is_wrapped(self, wrapper_class, indices: Indices = None) -> List[bool]:
        return [False for _ in self._get_indices(indices)]

    def get_images(self):
        return [None for _ in range(self.num_envs)]

    def render(self, mode: Optional[str] = None):
        return None

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._session.close()

    def __enter__(self) -> "KratzenSB3VecEnv":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
