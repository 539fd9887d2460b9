"""PettingZoo's AEC loop over the bridge: every seat is an agent; random legal actions.

    npm run build && python3 bridge/python/examples/pettingzoo_aec.py [ws://127.0.0.1:8765]

Works with or without pettingzoo installed (with it, KratzenAECEnv is a pettingzoo.AECEnv).
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from kratzen_bridge import KratzenAECEnv, LocalServer  # noqa: E402


def main(url: str) -> None:
    env = KratzenAECEnv(url, rules={"profile": "didactic4", "players": 4})
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    returns = {agent: 0.0 for agent in env.possible_agents}
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        returns[agent] += reward
        action = None if termination or truncation else int(rng.choice(np.flatnonzero(observation["action_mask"])))
        env.step(action)
    env.close()
    print("returns of one hand:", {a: round(r, 2) for a, r in returns.items()})


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(sys.argv[1])
    else:
        with LocalServer() as server:
            main(server.url)
