"""A random agent: plays one seeded episode of KratzenEnv with uniformly random legal actions.

    npm run build && /usr/bin/python3 bridge/python/examples/random_agent.py [ws://127.0.0.1:8765]

Without a url it starts a local `kratzen serve` on a free port.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from kratzen_bridge import KratzenEnv, LocalServer  # noqa: E402


def main(url: str) -> None:
    env = KratzenEnv(url, rules={"profile": "didactic4", "players": 4}, opponents="random", episode="session")
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=1)
    total, steps = 0.0, 0
    while True:
        action = rng.choice(np.flatnonzero(info["action_mask"]))
        obs, reward, terminated, truncated, info = env.step(action)
        total += reward
        steps += 1
        if terminated or truncated:
            break
    print(f"{steps} decisions, net result {total:+.2f} chips, final balances {info['balances']}")
    env.close()


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(sys.argv[1])
    else:
        with LocalServer() as server:
            main(server.url)
