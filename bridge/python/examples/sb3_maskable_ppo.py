"""Train sb3-contrib's MaskablePPO on the batched SB3 vector env, then play it against random and
heuristic opponents over the same seeds as a random player (paired), and report steps/s.

    npm run build && python3 bridge/python/examples/sb3_maskable_ppo.py [--steps 100000] [--envs 16] [--url ws://...]

Needs stable_baselines3, sb3_contrib and torch (with gymnasium); without a url it starts a local
`kratzen serve`. `--compare` also times the unbatched path (SB3's DummyVecEnv over KratzenEnv).
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from kratzen_bridge import KratzenEnv, LocalServer  # noqa: E402
from kratzen_bridge.sb3 import KratzenSB3VecEnv  # noqa: E402


def evaluate(url, model, opponents, episodes, seed):
    """Mean chips per hand of the model, and of uniformly random play, over the same deals."""
    from sb3_contrib.common.maskable.utils import get_action_masks

    results = {}
    for who in ("model", "random"):
        venv = KratzenSB3VecEnv(8, url, opponents=opponents)
        venv.seed(seed)
        obs = venv.reset()
        rng = np.random.default_rng(seed)
        total, finished = 0.0, 0
        while finished < episodes:
            masks = get_action_masks(venv)
            if who == "model":
                actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
            else:
                actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            obs, rewards, dones, _ = venv.step(actions)
            total += float(rewards.sum())
            finished += int(dones.sum())
        venv.close()
        results[who] = total / finished
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url")
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--envs", type=int, default=16)
    parser.add_argument("--compare", action="store_true")
    args = parser.parse_args()
    # Without them the run began with a traceback naming the first one missing only.
    import importlib.util

    missing = [name for name in ("gymnasium", "torch", "stable_baselines3", "sb3_contrib") if importlib.util.find_spec(name) is None]
    if missing:
        sys.exit(f"this example needs {', '.join(missing)} (pip install gymnasium torch stable-baselines3 sb3-contrib)")
    from sb3_contrib import MaskablePPO

    server = None if args.url else LocalServer()
    url = args.url or server.url
    try:
        venv = KratzenSB3VecEnv(args.envs, url, opponents="heuristic", reward_normalization="pot")
        model = MaskablePPO("MlpPolicy", venv, n_steps=256, batch_size=512, seed=1, verbose=0)
        started = time.perf_counter()
        model.learn(args.steps)
        seconds = time.perf_counter() - started
        print(f"batched: {args.steps} steps in {seconds:.0f} s = {args.steps / seconds:.0f} steps/s ({args.envs} envs)")
        venv.close()
        if args.compare:
            from stable_baselines3.common.vec_env import DummyVecEnv

            single = DummyVecEnv([lambda: KratzenEnv(url, opponents="heuristic", reward_normalization="pot") for _ in range(args.envs)])
            baseline = MaskablePPO("MlpPolicy", single, n_steps=256, batch_size=512, seed=1, verbose=0)
            started = time.perf_counter()
            steps = min(args.steps, 20_000)
            baseline.learn(steps)
            print(f"unbatched (DummyVecEnv of KratzenEnv): {steps / (time.perf_counter() - started):.0f} steps/s")
            single.close()
        for opponents in ("random", "heuristic"):
            r = evaluate(url, model, opponents, episodes=400, seed=99)
            print(f"vs {opponents}: model {r['model']:+.3f} chips/hand, random play {r['random']:+.3f} (same deals)")
    finally:
        if server:
            server.stop()


if __name__ == "__main__":
    main()
