"""Gymnasium, PettingZoo AEC and vectorized envs over the bridge.

Observations are float32 vectors of OBS_SIZE (layout: the `spec` method, env/observation.ts);
actions are the 74 ids of env/rules/actions.ts; masks are np.int8 of shape (74,), 1 = legal.
Rewards are chip changes times `reward_scale`, or with `reward_normalization="pot"` chip changes
divided by the pot (in chips) at the seat's latest decision, as the project's trainer learns from:
raw returns reach hundreds of chips a hand, pot-relative ones stay near 1.

Illegal actions: the envs are created with `illegalAction: "terminate"`, so an unmasked
illegal (or out-of-range) action never raises: it ends the episode, and the offender's reward
for that step is `-illegal_action_penalty` (plus whatever it had pending), with
`info["illegal_action"] = True`.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from ._compat import SAME_STEP, AECEnv, Dict as DictSpace, Discrete, Env, MultiDiscrete, VectorEnv
from .client import NUM_ACTIONS, BridgeClient, BridgeError
from .session import Session, as_action, as_int, as_opponents, as_seed, check_aec_reset_options, check_reset_options, env_config, wire_action, wire_actions

Opponents = Union[str, Sequence[Optional[str]]]


class KratzenEnv(Env):
    """Single-agent Gymnasium env: the learner at `learner_seat`, other seats played on the
    server by `opponents` (random, heuristic, pimc[:...], or a checkpoint directory).

    `reset(seed=, options=)` -> `(obs, info)`; `step(a)` -> `(obs, reward, terminated,
    truncated, info)`; `info["action_mask"]` is the np.int8 mask (also `action_masks()`).
    Equal seeds give equal trajectories (the opponents are re-seeded with the env) on one
    server, and across server starts when they share a seed secret (`kratzen serve
    --seed-secret`, `LocalServer(seed_secret=...)`): the server mixes it into single-agent seeds
    so that a client cannot deal the bots' hands.
    """

    metadata = {"render_modes": [], "name": "kratzen_v1"}

    def __init__(
        self,
        url: Optional[str] = None,
        *,
        client: Optional[BridgeClient] = None,
        token: Optional[str] = None,
        timeout: Optional[float] = None,
        rules: Optional[dict] = None,
        opponents: Opponents = "random",
        learner_seat: int = 0,
        episode: str = "hand",
        illegal_action_penalty: float = 10.0,
        reward_scale: float = 1.0,
        reward_normalization: str = "chips",
        max_steps: int = 0,
        render_mode: Optional[str] = None,
    ):
        if render_mode is not None:
            raise ValueError("KratzenEnv has no render modes")
        self.render_mode = None
        config = env_config(rules, episode, "terminate", illegal_action_penalty, reward_scale, max_steps, reward_normalization)
        self._session = Session(
            url,
            client,
            token,
            {"mode": "single", "numEnvs": 1, "config": config, "learnerSeat": as_int(learner_seat, "learner_seat", 0), "opponents": as_opponents(opponents)},
            timeout,
        )
        self.learner_seat = as_int(learner_seat, "learner_seat", 0)  # np.int8(1) came back in info["seat"] as it was
        self.observation_space = self._session.observation_box()
        self.action_space = Discrete(NUM_ACTIONS)
        self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._needs_reset = True

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        seed = as_seed(seed)
        check_reset_options(options)
        super().reset(seed=seed)
        batch = self._session.reset(seed)
        self._mask = batch.masks[0].copy()
        self._needs_reset = False
        return batch.observations[0].copy(), {"action_mask": self._mask.copy(), "seat": self.learner_seat}

    def step(self, action):
        self._session.check_open("step")
        if self._needs_reset:
            raise RuntimeError("call reset() before step() (and after an episode ends)")
        batch = self._session.step([wire_action(as_action(action))])
        terminated = bool(batch.terminated[0])
        truncated = bool(batch.truncated[0])
        info: Dict[str, Any] = {"seat": self.learner_seat}
        if 0 in batch.final:
            # The server has already started the next episode; what ended is in `final`.
            obs, final_info = batch.final[0]
            obs = obs.copy()
            self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
            info["balances"] = final_info.get("balances")
            if final_info.get("illegalAction"):
                info["illegal_action"] = True
            self._needs_reset = True
        else:
            obs = batch.observations[0].copy()
            self._mask = batch.masks[0].copy()
        info["action_mask"] = self._mask.copy()
        return obs, float(batch.rewards[0]), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The current mask (the name sb3-contrib's MaskablePPO looks for)."""
        # After close it gave the last mask, as if the env could still be stepped.
        self._session.check_open("action_masks")
        return self._mask.copy()

    def render(self):
        return None

    def close(self):
        self._session.close()


class KratzenAECEnv(AECEnv):
    """PettingZoo AEC env: every seat is an agent (`player_0`, ...), played in turn.

    `observe(agent)` is `{"observation": float32[OBS_SIZE], "action_mask": int8[74]}`: that
    agent's current observation (fetched from the server with `env.observe` when it is not the
    one to act, once per step); the mask is all zero unless the agent is to act. Once the
    episode is over, every agent sees the table as the episode left it (fetched with
    `env.observe`, episode "ended", the first time it is asked for). `last()` gives the agent's
    reward summed since it last acted; finished agents are stepped with None.
    """

    metadata = {"render_modes": [], "name": "kratzen_v1", "is_parallelizable": False}

    def __init__(
        self,
        url: Optional[str] = None,
        *,
        client: Optional[BridgeClient] = None,
        token: Optional[str] = None,
        timeout: Optional[float] = None,
        rules: Optional[dict] = None,
        episode: str = "hand",
        illegal_action_penalty: float = 10.0,
        reward_scale: float = 1.0,
        reward_normalization: str = "chips",
        max_steps: int = 0,
        render_mode: Optional[str] = None,
    ):
        super().__init__()
        if render_mode is not None:
            raise ValueError("KratzenAECEnv has no render modes")
        self.render_mode = None
        config = env_config(rules, episode, "terminate", illegal_action_penalty, reward_scale, max_steps, reward_normalization)
        # Every seat's view of an episode's end is kept on the server: an agent shown only the last
        # observation it was given saw the table before the final actions, or zeros.
        self._session = Session(url, client, token, {"mode": "multi", "numEnvs": 1, "config": config, "finalObservations": "every-seat"}, timeout)
        n = self._session.num_players
        self.possible_agents: List[str] = [f"player_{i}" for i in range(n)]
        self.agents: List[str] = []
        space = DictSpace({"observation": self._session.observation_box(), "action_mask": self._session.mask_box()})
        action = Discrete(NUM_ACTIONS)
        # One object per agent, the same on every call (api_test checks identity).
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: action for a in self.possible_agents}
        self._zero_obs = np.zeros(self._session.obs_size, dtype=np.float32)
        self._zero_mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._seen: Dict[str, np.ndarray] = {}
        self._fetched: Dict[str, np.ndarray] = {}
        # Agents whose view of the ended episode's end has not been fetched yet.
        self._final_pending: set = set()
        self._mask = self._zero_mask
        self.rewards: Dict[str, float] = {}
        self._cumulative_rewards: Dict[str, float] = {}
        self.terminations: Dict[str, bool] = {}
        self.truncations: Dict[str, bool] = {}
        self.infos: Dict[str, dict] = {}
        self.agent_selection: str = self.possible_agents[0]
        self._was_reset = False

    def observation_space(self, agent: str):
        self._check_agent(agent)
        return self.observation_spaces[agent]

    def action_space(self, agent: str):
        self._check_agent(agent)
        return self.action_spaces[agent]

    def _check_agent(self, agent: str) -> None:
        # The spaces of "player_9" raised a bare KeyError.
        if agent not in self.possible_agents:
            raise ValueError(f"unknown agent {agent!r:.100}: the agents are {', '.join(self.possible_agents)}")

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> None:
        seed = as_seed(seed)
        check_aec_reset_options(options)
        batch = self._session.reset(seed)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._seen = {}
        self._final_pending = set()
        self._was_reset = True
        self._select(batch)

    def _select(self, batch) -> None:
        agent = self.possible_agents[int(batch.seats[0])]
        self.agent_selection = agent
        self._seen[agent] = batch.observations[0].copy()
        self._fetched = {}
        self._mask = batch.masks[0].copy()

    def observe(self, agent: str) -> Dict[str, np.ndarray]:
        # Before the first reset it gave an all-zero observation, where step() and last() raise.
        self._check_reset("observe")
        self._check_agent(agent)
        if self._done(agent) or agent not in self.agents:
            if agent in self._final_pending:
                seat = self.possible_agents.index(agent)
                reply = self._session.client.call("env.observe", {"session": self._session.id, "env": 0, "seat": seat, "episode": "ended"})
                self._seen[agent] = self._observation_of(reply, seat)
                self._final_pending.discard(agent)
            return {"observation": self._seen.get(agent, self._zero_obs).copy(), "action_mask": self._zero_mask.copy()}
        if agent == self.agent_selection:
            return {"observation": self._seen[agent].copy(), "action_mask": self._mask.copy()}
        if agent not in self._fetched:
            seat = self.possible_agents.index(agent)
            reply = self._session.client.call("env.observe", {"session": self._session.id, "env": 0, "seat": seat})
            self._fetched[agent] = self._observation_of(reply, seat)
            self._seen[agent] = self._fetched[agent]
        return {"observation": self._fetched[agent].copy(), "action_mask": self._zero_mask.copy()}

    def _observation_of(self, reply, seat: int) -> np.ndarray:
        """The observation of `seat` in an env.observe reply; one of another shape or seat is the server's fault."""
        if not isinstance(reply, dict) or reply.get("seat") != seat:
            raise BridgeError("internal_error", f"the server's env.observe reply is not of seat {seat}")
        observation = reply.get("observation")
        try:
            array = np.asarray(observation, dtype=np.float32)
        except (TypeError, ValueError):
            array = None
        if array is None or array.shape != (self._session.obs_size,) or not np.isfinite(array).all():
            raise BridgeError("internal_error", f"the server's env.observe reply holds no observation of {self._session.obs_size} finite numbers")
        # As every batch's rows are: within the spec's bounds (1e30 came back here as given), and
        # the view of the seat it says.
        at = np.flatnonzero(array)
        self._session.check_values(at, array[at], "env.observe's observation")
        own = self._session.seat_slice
        if own is not None and not (array[own].sum() == 1 and array[own][seat] == 1):
            raise BridgeError("internal_error", f"the server's env.observe reply is not seat {seat}'s view")
        return array

    def _check_reset(self, method: str) -> None:
        self._session.check_open(method)
        # Before the first reset, last() raised a bare KeyError and step() said the episode was over.
        if not self._was_reset:
            raise RuntimeError(f"call reset() before {method}()")

    def last(self, observe: bool = True):
        self._check_reset("last")
        if not self.agents:
            # Every agent's entries are gone by then: a bare KeyError said nothing.
            raise RuntimeError("the episode is over (every agent is done): call reset() before last()")
        agent = self.agent_selection
        observation = self.observe(agent) if observe else None
        return observation, self._cumulative_rewards[agent], self.terminations[agent], self.truncations[agent], self.infos[agent]

    def _done(self, agent: str) -> bool:
        return self.terminations.get(agent, False) or self.truncations.get(agent, False)

    def step(self, action) -> None:
        self._check_reset("step")
        if not self.agents:
            # The server has started the next episode: an action sent now would move it.
            raise RuntimeError("the episode is over (every agent is done): call reset() before step()")
        agent = self.agent_selection
        if self._done(agent):
            return self._was_dead_step(action)
        # An illegal action goes to the server too: with illegalAction "terminate" it ends the
        # episode there, with the penalty in the offender's reward.
        batch = self._session.step([wire_action(as_action(action))])
        # Only now: a refused call (a float action, a broken connection) zeroed the reward the
        # agent had not yet been shown by last().
        self._cumulative_rewards[agent] = 0.0
        rewards = batch.rewards[0]
        self.rewards = {a: float(rewards[i]) for i, a in enumerate(self.possible_agents) if a in self.agents}
        for a, r in self.rewards.items():
            self._cumulative_rewards[a] += r
        if 0 not in batch.final:
            self._select(batch)
            return
        obs, info = batch.final[0]
        self._end_episode("truncations" if batch.truncated[0] else "terminations", obs, info, agent)
        if "illegalActionSeat" in info:
            self.infos[self.possible_agents[info["illegalActionSeat"]]]["illegal_action"] = True

    def _end_episode(self, ended_by: str, last_obs: np.ndarray, info: dict, last_actor: str) -> None:
        # The final observation is the view of the table's observer: the last actor when the hand
        # or session ended, the seat to act next when max_steps cut the episode short (stored as
        # the last actor's, it showed that agent another seat's hand).
        seats = self._session.seat_slice
        observer = np.flatnonzero(last_obs[seats]) if seats is not None else ()
        owner = self.possible_agents[int(observer[0])] if len(observer) == 1 and observer[0] < len(self.possible_agents) else last_actor
        self._seen[owner] = last_obs.copy()
        self._final_pending = set(self.possible_agents) - {owner}
        for a in self.agents:
            getattr(self, ended_by)[a] = True
            self.infos[a] = {"balances": info.get("balances")} if info else {}
        self._mask = self._zero_mask
        # Finished agents are stepped with None in order, starting with the next seat.
        start = (self.possible_agents.index(last_actor) + 1) % len(self.possible_agents)
        order = self.possible_agents[start:] + self.possible_agents[:start]
        self.agent_selection = next(a for a in order if a in self.agents)

    def _was_dead_step(self, action) -> None:
        if action is not None:
            raise ValueError("when an agent is terminated or truncated, the only valid action is None")
        agent = self.agent_selection
        for table in (self.terminations, self.truncations, self.rewards, self._cumulative_rewards, self.infos):
            table.pop(agent, None)
        self.agents.remove(agent)
        if self.agents:
            start = (self.possible_agents.index(agent) + 1) % len(self.possible_agents)
            order = self.possible_agents[start:] + self.possible_agents[:start]
            self.agent_selection = next(a for a in order if a in self.agents)
        self.rewards = {a: 0.0 for a in self.agents}

    def render(self):
        return None

    def close(self) -> None:
        self._session.close()

    # PettingZoo's AECEnv is no context manager; every other env and client of this package is.
    def __enter__(self) -> "KratzenAECEnv":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class KratzenVecEnv(VectorEnv):
    """N tables stepped by one message, numpy arrays in and out (Gymnasium vector API).

    `mode="single"`: a learner seat per table, opponents on the server; rewards (N,).
    `mode="multi"`: self-play, the action of each row is for `infos["seat"]`; rewards
    (N, num_players). Autoreset is same-step (`metadata["autoreset_mode"]`): a table whose
    episode ends is reset within `step`, and `infos["final_obs"]` (an object array) and
    `infos["final_info"]` (a dict of arrays over the envs: `balances` (N, num_players) in chips,
    `hands`, and where an illegal action ended one `illegalAction` (single mode) or
    `illegalActionSeat` (multi mode)) hold what ended, each
    with the boolean mask of the envs it holds (`_final_obs`, `_final_info`, and
    `final_info["_balances"]`, ...): Gymnasium's layout of vector infos, as its SyncVectorEnv
    gives. `infos["action_mask"]` is np.int8 (N, 74). `illegal_action` defaults to "terminate" in
    single mode and "throw" in multi mode (a batch with an illegal action raises BridgeError
    and nothing is stepped); "terminate" in multi mode ends that table's episode instead.
    """

    def __init__(
        self,
        num_envs: int,
        url: Optional[str] = None,
        *,
        client: Optional[BridgeClient] = None,
        token: Optional[str] = None,
        timeout: Optional[float] = None,
        mode: str = "single",
        rules: Optional[dict] = None,
        opponents: Optional[Opponents] = None,
        learner_seat: Optional[int] = None,
        episode: str = "hand",
        illegal_action: Optional[str] = None,
        illegal_action_penalty: float = 10.0,
        reward_scale: float = 1.0,
        reward_normalization: str = "chips",
        max_steps: int = 0,
    ):
        if illegal_action is None:
            illegal_action = "terminate" if mode == "single" else "throw"
        config = env_config(rules, episode, illegal_action, illegal_action_penalty, reward_scale, max_steps, reward_normalization)
        num_envs = as_int(num_envs, "num_envs", 1)
        params: Dict[str, Any] = {"mode": mode, "numEnvs": num_envs, "config": config}
        if mode == "single":
            params.update(learnerSeat=as_int(0 if learner_seat is None else learner_seat, "learner_seat", 0), opponents=as_opponents("random" if opponents is None else opponents))
        elif opponents is not None or learner_seat is not None:
            # Ignored without a word before (learner_seat=2.5 too), as the server refuses them in a multi session.
            raise ValueError("opponents and learner_seat are for mode='single'; mode='multi' plays every seat itself")
        self._session = Session(url, client, token, params, timeout)
        self.num_envs = num_envs
        self.mode = mode
        # Single mode penalises an illegal action unless it throws: then the refusal names the action as given (it said -1 for 74).
        self._judges_illegal = mode == "single" and illegal_action == "terminate"
        self.num_players = self._session.num_players
        self.metadata = {"autoreset_mode": SAME_STEP, "render_modes": []}
        self.render_mode = None
        self.single_observation_space = self._session.observation_box()
        self.observation_space = self._session.observation_box(self.num_envs)
        self.single_action_space = Discrete(NUM_ACTIONS)
        self.action_space = MultiDiscrete(np.full(self.num_envs, NUM_ACTIONS))
        self.closed = False
        self._was_reset = False

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        if isinstance(seed, (list, tuple)):
            raise ValueError("one seed for all envs: env i plays the sessions '<seed>:<i>', ...")
        seed = as_seed(seed)
        check_reset_options(options)
        if seed is not None:
            # As Gymnasium's VectorEnv.reset seeds it (without the seed, its np_random_seed
            # property replaced the seeded generator with a fresh one).
            self._np_random, self._np_random_seed = np.random.default_rng(seed), seed
        batch = self._session.reset(seed)
        self._was_reset = True
        return batch.observations, self._infos(batch)

    def _infos(self, batch) -> Dict[str, Any]:
        every = np.ones(self.num_envs, dtype=bool)
        return {"action_mask": batch.masks, "_action_mask": every, "seat": batch.seats, "_seat": every.copy()}

    def step(self, actions):
        # Misuse the client can see itself, as KratzenEnv reports it (it was the server's BridgeError "not_reset").
        self._session.check_open("step")
        if not self._was_reset:
            raise RuntimeError("call reset() before step()")
        batch = self._session.step(wire_actions(actions, self.num_envs, env_judges_illegal=self._judges_illegal))
        infos = self._infos(batch)
        if batch.final:
            final_obs = np.full(self.num_envs, None, dtype=object)
            final_info: Dict[str, Any] = {}
            ended = np.zeros(self.num_envs, dtype=bool)
            for i, (obs, info) in batch.final.items():
                final_obs[i], ended[i] = obs, True
                info = dict(info)
                if "balances" in info:
                    info["balances"] = np.asarray(info["balances"], dtype=np.float64)
                add_vector_info(final_info, info, i, self.num_envs)
            infos.update(final_obs=final_obs, _final_obs=ended, final_info=final_info, _final_info=ended.copy())
        rewards = batch.rewards if self.mode == "multi" else batch.rewards.reshape(self.num_envs)
        return batch.observations, rewards, batch.terminated, batch.truncated, infos

    def render(self):
        return None

    def close(self, **kwargs):
        if not self.closed:
            self.closed = True
            self._session.close()

    def __enter__(self) -> "KratzenVecEnv":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def add_vector_info(infos: Dict[str, Any], info: Dict[str, Any], env: int, num_envs: int) -> Dict[str, Any]:
    """Adds env `env`'s `info` to `infos` in Gymnasium's layout of vector infos: each key holds
    an array over the envs (numbers in an array of their type, numpy arrays stacked, anything
    else in an object array, dicts alike, key by key) and `_key` the boolean mask of the envs
    that gave it."""
    for key, value in info.items():
        if isinstance(value, dict):
            infos[key] = add_vector_info(infos.get(key, {}), value, env, num_envs)
        else:
            if key not in infos:
                if isinstance(value, np.ndarray):
                    infos[key] = np.zeros((num_envs, *value.shape), dtype=value.dtype)
                elif isinstance(value, (bool, int, float, np.number)):
                    infos[key] = np.zeros(num_envs, dtype=type(value))
                else:
                    infos[key] = np.full(num_envs, None, dtype=object)
            infos[key][env] = value
        mask = infos.setdefault(f"_{key}", np.zeros(num_envs, dtype=bool))
        mask[env] = True
    return infos
