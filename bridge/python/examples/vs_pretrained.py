"""Play against the pretrained bot: the other seats are a checkpoint served by the bridge, and
the same checkpoint also advises us (its probabilities over our legal actions).

    /usr/bin/python3 bridge/python/examples/vs_pretrained.py CHECKPOINT_DIR [ws://127.0.0.1:8765]

CHECKPOINT_DIR is a checkpoint (or a store, whose `latest` is used) as written by training,
e.g. checkpoints/pretrained/didactic4-p4/checkpoint or runs/<run>/checkpoints; the path is read by
the server.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from kratzen_bridge import KratzenEnv, LocalServer, RemotePolicy  # noqa: E402


def main(checkpoint: str, url: str) -> None:
    rules = {"profile": "didactic4", "players": 4}
    env = KratzenEnv(url, rules=rules, opponents=os.path.abspath(checkpoint), episode="hand")
    advisor = RemotePolicy(env._session.client, os.path.abspath(checkpoint), rules=rules)
    obs, info = env.reset(seed=7)
    total = 0.0
    for hand in range(20):
        while True:
            actions, probs = advisor.act(obs, info["action_mask"])
            # Follow the bot's advice most of the time, else play another legal action.
            legal = np.flatnonzero(info["action_mask"])
            action = actions[0] if np.random.default_rng(hand).random() < 0.8 else legal[-1]
            obs, reward, terminated, truncated, info = env.step(action)
            total += reward
            if terminated or truncated:
                break
        obs, info = env.reset()
    print(f"20 hands against the bot: {total:+.2f} chips")
    advisor.close()
    env.close()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if len(sys.argv) > 2:
        main(sys.argv[1], sys.argv[2])
    else:
        with LocalServer() as server:
            main(sys.argv[1], server.url)
