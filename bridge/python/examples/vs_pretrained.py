"""Play against the pretrained bot: the other seats are a checkpoint served by the bridge, and
the same checkpoint also advises us (its probabilities over our legal actions).

    /usr/bin/python3 bridge/python/examples/vs_pretrained.py CHECKPOINT_DIR [ws://127.0.0.1:8765]

CHECKPOINT_DIR is a checkpoint (or a store, whose `latest` is used) as written by training,
e.g. checkpoints/pretrained/didactic4-p4/checkpoint or runs/<run>/checkpoints; the path is read by
the server. The table plays the rules the checkpoint was trained for (policy.load says which).
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from kratzen_bridge import KratzenEnv, LocalServer, RemotePolicy  # noqa: E402


def main(checkpoint: str, url: str) -> None:
    # The advisor says which rules the checkpoint plays (its manifest's); the table is set to them.
    advisor = RemotePolicy(url, os.path.abspath(checkpoint))
    rules = advisor.info["rules"]
    env = KratzenEnv(url, rules=rules, opponents=os.path.abspath(checkpoint), episode="hand")
    rng = np.random.default_rng(7)
    obs, info = env.reset(seed=7)
    total = 0.0
    followed = decisions = 0
    for hand in range(20):
        while True:
            actions, probs = advisor.act(obs, info["action_mask"])
            # Follow the bot's advice at 4 decisions in 5, else play the legal action it likes least.
            legal = np.flatnonzero(info["action_mask"])
            advised = rng.random() < 0.8
            action = actions[0] if advised else legal[np.argmin(probs[0][legal])]
            if hand == 0:
                shown = ", ".join(f"{a}: {probs[0][a]:.2f}" for a in legal)
                print(f"hand 1: the bot advises {actions[0]} of {{{shown}}}; we play {action}")
            followed += int(action == actions[0])
            decisions += 1
            obs, reward, terminated, truncated, info = env.step(action)
            total += reward
            if terminated or truncated:
                break
        obs, info = env.reset()
    print(f"20 hands of {rules['profile']}, {rules['players']} players, against the bot: {total:+.2f} chips; advice followed at {followed} of {decisions} decisions")
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
