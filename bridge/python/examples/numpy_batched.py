"""Plain numpy, no RL library: 64 tables of tavern5 self-play in one session, a random legal
action per table from the masks, pot-relative rewards, same-step autoreset.

    npm run build && python3 bridge/python/examples/numpy_batched.py [ws://127.0.0.1:8765 [STEPS]]

Without a url it starts a local `kratzen serve`. Prints the episodes finished and the steps/s.
"""

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from kratzen_bridge import KratzenVecEnv, LocalServer  # noqa: E402


def main(url: str, total: int = 20_000) -> None:
    rng = np.random.default_rng(0)
    with KratzenVecEnv(64, url, mode="multi", rules={"profile": "tavern5", "players": 4}, reward_normalization="pot") as venv:
        obs, infos = venv.reset(seed=1)
        episodes, steps = 0, 0
        started = time.perf_counter()
        while steps < total:
            masks = infos["action_mask"]
            actions = np.argmax(rng.random(masks.shape) * masks, axis=1)  # a random legal action per row
            obs, rewards, terminated, truncated, infos = venv.step(actions)
            episodes += int((terminated | truncated).sum())
            steps += len(actions)
        seconds = time.perf_counter() - started
    print(f"{steps} steps, {episodes} episodes, {steps / seconds:.0f} steps/s; observations {obs.shape} {obs.dtype}, rewards {rewards.shape}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 20_000)
    else:
        with LocalServer() as server:
            main(server.url)
