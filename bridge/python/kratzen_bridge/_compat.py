"""Gymnasium / PettingZoo when importable, else minimal look-alikes with the same names.

The look-alikes implement what the envs use and what their users usually call: `shape`,
`dtype`, `contains`, `sample` (with an int8 `mask` for Discrete), `seed`, and the AEC
`agent_iter`. With the real libraries installed the envs subclass their base classes.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Dict as TDict, Iterator, Optional

import numpy as np

try:  # pragma: no cover - depends on the environment
    import gymnasium as _gym
    from gymnasium import spaces as _spaces

    HAVE_GYMNASIUM = True
except ImportError:  # pragma: no cover
    _gym = None
    _spaces = None
    HAVE_GYMNASIUM = False

try:  # pragma: no cover
    from pettingzoo import AECEnv as _PZAECEnv

    HAVE_PETTINGZOO = True
except ImportError:  # pragma: no cover
    _PZAECEnv = None
    HAVE_PETTINGZOO = False


class _Space:
    def __init__(self, shape, dtype, seed: Optional[int] = None):
        self.shape = tuple(shape) if shape is not None else None
        self.dtype = np.dtype(dtype) if dtype is not None else None
        self.np_random = np.random.default_rng(seed)

    def seed(self, seed: Optional[int] = None):
        self.np_random = np.random.default_rng(seed)
        return [seed]

    def __contains__(self, x) -> bool:
        return self.contains(x)


class Box(_Space):
    def __init__(self, low, high, shape=None, dtype=np.float32, seed=None):
        shape = shape if shape is not None else np.shape(low)
        super().__init__(shape, dtype, seed)
        self.low = np.broadcast_to(np.asarray(low, dtype=self.dtype), self.shape).copy()
        self.high = np.broadcast_to(np.asarray(high, dtype=self.dtype), self.shape).copy()

    def contains(self, x) -> bool:
        x = np.asarray(x)
        return x.shape == self.shape and np.can_cast(x.dtype, self.dtype) and bool(np.all(x >= self.low) and np.all(x <= self.high))

    def sample(self, mask=None):
        if np.issubdtype(self.dtype, np.integer):
            return self.np_random.integers(self.low, self.high.astype(np.int64) + 1, size=self.shape).astype(self.dtype)
        return self.np_random.uniform(self.low, self.high, size=self.shape).astype(self.dtype)

    def __repr__(self) -> str:
        return f"Box({self.low.min()}, {self.high.max()}, {self.shape}, {self.dtype})"


class Discrete(_Space):
    def __init__(self, n: int, seed=None, start: int = 0):
        super().__init__((), np.int64, seed)
        self.n = int(n)
        self.start = int(start)

    def contains(self, x) -> bool:
        # As Gymnasium's: Python and numpy integers, and 0-d integer arrays.
        if isinstance(x, np.ndarray) and x.shape == () and np.issubdtype(x.dtype, np.integer):
            x = x[()]
        if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
            return self.start <= int(x) < self.start + self.n
        return False

    def sample(self, mask: Optional[np.ndarray] = None):
        if mask is not None:
            assert mask.dtype == np.int8 and mask.shape == (self.n,), "mask must be np.int8 of shape (n,)"
            legal = np.flatnonzero(mask)
            return np.int64(self.start + (self.np_random.choice(legal) if len(legal) else 0))
        return np.int64(self.start + self.np_random.integers(self.n))

    def __repr__(self) -> str:
        return f"Discrete({self.n})"


class MultiDiscrete(_Space):
    def __init__(self, nvec, dtype=np.int64, seed=None):
        self.nvec = np.asarray(nvec, dtype=np.int64)
        super().__init__(self.nvec.shape, dtype, seed)

    def contains(self, x) -> bool:
        x = np.asarray(x)
        return x.shape == self.shape and np.issubdtype(x.dtype, np.integer) and bool(np.all((x >= 0) & (x < self.nvec)))

    def sample(self, mask=None):
        return (self.np_random.random(self.nvec.shape) * self.nvec).astype(self.dtype)

    def __repr__(self) -> str:
        return f"MultiDiscrete({self.nvec})"


class Dict(_Space):
    def __init__(self, spaces: TDict[str, Any], seed=None):
        super().__init__(None, None, seed)
        self.spaces = dict(spaces)

    def __getitem__(self, key):
        return self.spaces[key]

    def contains(self, x) -> bool:
        return isinstance(x, dict) and x.keys() == self.spaces.keys() and all(self.spaces[k].contains(x[k]) for k in self.spaces)

    def sample(self, mask=None):
        return {k: s.sample() for k, s in self.spaces.items()}

    def __repr__(self) -> str:
        return "Dict(" + ", ".join(f"{k!r}: {v!r}" for k, v in self.spaces.items()) + ")"


class _AutoresetMode(Enum):
    """Gymnasium's `gymnasium.vector.AutoresetMode`, names and values alike: the metadata said
    "same-step" without Gymnasium and AutoresetMode.SAME_STEP with it."""

    NEXT_STEP = "NextStep"
    SAME_STEP = "SameStep"
    DISABLED = "Disabled"


class _Env:
    """Gymnasium's Env protocol, reduced: `np_random` seeded by `reset(seed=...)`."""

    metadata: TDict[str, Any] = {"render_modes": []}
    render_mode = None
    np_random = np.random.default_rng()

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        if seed is not None:
            self.np_random = np.random.default_rng(seed)

    @property
    def unwrapped(self):
        return self

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class _VectorEnv(_Env):
    """Gymnasium's VectorEnv protocol, reduced: `np_random` is `_np_random`, which `reset(seed=...)` sets
    (as Gymnasium's VectorEnv has it; the Env look-alike's generator stayed unseeded)."""

    _np_random: Optional[np.random.Generator] = None
    _np_random_seed: Optional[int] = None

    @property  # type: ignore[override]
    def np_random(self) -> np.random.Generator:
        if self._np_random is None:
            self.np_random_seed  # draws a seed and makes the generator from it
        return self._np_random  # type: ignore[return-value]

    @property
    def np_random_seed(self) -> int:
        """The seed of `np_random` (as Gymnasium's: drawn, and the generator made from it, when
        no reset has seeded it yet)."""
        if self._np_random_seed is None:
            self._np_random_seed = int(np.random.SeedSequence().entropy)
            self._np_random = np.random.default_rng(self._np_random_seed)
        return self._np_random_seed

    def render(self):
        return None

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        self._np_random, self._np_random_seed = value, -1  # a generator of unknown seed, as in Gymnasium


class _AECEnv:
    """PettingZoo's AECEnv protocol, reduced to what a loop over `agent_iter()` needs."""

    metadata: TDict[str, Any] = {"render_modes": []}

    def agent_iter(self, max_iter: int = 2**63) -> Iterator[str]:
        for _ in range(max_iter):
            if not self.agents:
                return
            yield self.agent_selection

    @property
    def num_agents(self) -> int:
        return len(self.agents)

    @property
    def max_num_agents(self) -> int:
        return len(self.possible_agents)

    @property
    def unwrapped(self):
        return self


if HAVE_GYMNASIUM:  # pragma: no cover
    Box = _spaces.Box  # type: ignore[misc]
    Discrete = _spaces.Discrete  # type: ignore[misc]
    MultiDiscrete = _spaces.MultiDiscrete  # type: ignore[misc]
    Dict = _spaces.Dict  # type: ignore[misc]
    Env = _gym.Env
    try:
        from gymnasium.vector import VectorEnv
    except ImportError:
        VectorEnv = _VectorEnv  # type: ignore[misc]
    try:
        from gymnasium.vector import AutoresetMode

    except ImportError:
        AutoresetMode = _AutoresetMode  # type: ignore[misc]
else:
    Env = _Env  # type: ignore[misc]
    VectorEnv = _VectorEnv  # type: ignore[misc]
    AutoresetMode = _AutoresetMode  # type: ignore[misc]
SAME_STEP = AutoresetMode.SAME_STEP

AECEnv = _PZAECEnv if HAVE_PETTINGZOO else _AECEnv
