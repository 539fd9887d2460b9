"""The Stable-Baselines3 vector env: its contract against a live server (with SB3's VecEnv when
stable_baselines3 is importable, else the look-alike), and a short MaskablePPO run where
sb3_contrib and torch are importable.

Run: /usr/bin/python3 -m unittest discover -s bridge/python/tests
"""

import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from kratzen_bridge import NUM_ACTIONS, LocalServer  # noqa: E402
from kratzen_bridge.sb3 import HAVE_SB3, KratzenSB3VecEnv  # noqa: E402

try:  # pragma: no cover
    import sb3_contrib  # noqa: F401
    import torch  # noqa: F401

    HAVE_CONTRIB = HAVE_SB3
except ImportError:  # pragma: no cover
    HAVE_CONTRIB = False

SERVER = None


def setUpModule():
    global SERVER
    SERVER = LocalServer()


def tearDownModule():
    SERVER.stop()


def random_actions(rng, masks):
    return np.array([rng.choice(np.flatnonzero(m)) for m in masks])


class ContractTest(unittest.TestCase):
    def setUp(self):
        self.venv = KratzenSB3VecEnv(6, SERVER.url, opponents="heuristic", reward_normalization="pot")

    def tearDown(self):
        self.venv.close()

    def test_spaces_reset_and_seeds(self):
        venv = self.venv
        self.assertEqual(venv.num_envs, 6)
        self.assertEqual(venv.action_space.n, NUM_ACTIONS)
        self.assertEqual(venv.get_attr("render_mode"), [None] * 6)
        self.assertIsNone(venv.render_mode)
        venv.seed(11)
        first = venv.reset()
        self.assertEqual(first.shape, (6, venv.observation_space.shape[0]))
        self.assertEqual(first.dtype, np.float32)
        self.assertTrue(all(venv.observation_space.contains(row) for row in first))
        venv.seed(11)
        np.testing.assert_array_equal(venv.reset(), first)
        venv.seed(12)
        self.assertFalse(np.array_equal(venv.reset(), first))

    def test_seeds_are_checked_as_every_env_class_checks_them(self):
        # 2.7 played seed 2's deals, True and -5 were taken, "2" failed inside with
        # "can only concatenate str" [probe].
        for bad in (2.7, True, "2", np.float64(2.0)):
            with self.subTest(seed=bad), self.assertRaisesRegex(TypeError, "seed must be an integer or None"):
                self.venv.seed(bad)
        with self.assertRaisesRegex(ValueError, "seed must be a non-negative integer"):
            self.venv.seed(-5)
        self.assertEqual(self.venv.seed(np.int64(3))[:2], [3, 4])

    def test_out_of_range_actions_are_illegal_not_too_large_for_the_smallest_message_limit(self):
        # A step of hello's maxEnvs envs, every action 1000, was refused as larger than the
        # server's message limit (1000 took five bytes where hello counts three) [probe].
        with LocalServer(args=["--max-message-bytes", "5029"]) as small:
            with KratzenSB3VecEnv(2, small.url) as probe:
                most = probe._session.client.hello["limits"]["maxEnvs"]
            with KratzenSB3VecEnv(most, small.url) as venv:
                venv.reset()
                _, rewards, dones, _ = venv.step(np.full(most, 1000))
                self.assertEqual(rewards.shape, (most,))

    def test_numbers_are_not_coerced(self):
        # int() made 2.7 envs two and True one (probe round 6).
        for bad in (2.7, True, "3"):
            with self.subTest(num_envs=bad), self.assertRaisesRegex(TypeError, "num_envs must be an integer"):
                KratzenSB3VecEnv(bad, SERVER.url)
        with self.assertRaisesRegex(TypeError, "learner_seat must be an integer"):
            KratzenSB3VecEnv(2, SERVER.url, learner_seat=0.0)

    def test_misuse_is_said_as_the_readme_says(self):
        # A step before reset was the server's not_reset; masks after close were the stale ones;
        # [True, 1] went as two penalised actions [Python probe, session 37].
        venv = KratzenSB3VecEnv(2, SERVER.url)
        with self.assertRaisesRegex(RuntimeError, r"call reset\(\) before step\(\)"):
            venv.step(np.array([0, 0]))
        masks = venv.reset() is not None and venv.action_masks()
        with self.assertRaisesRegex(TypeError, "actions must be integer action ids"):
            venv.step([True, int(np.flatnonzero(masks[1])[0])])
        venv.close()
        for call in (venv.action_masks, lambda: venv.env_method("action_masks"), lambda: venv.step(np.array([0, 0]))):
            with self.assertRaisesRegex(RuntimeError, "the env is closed"):
                call()

    def test_masks_through_env_method_and_has_attr(self):
        venv = self.venv
        venv.reset()
        self.assertTrue(venv.has_attr("action_masks"))
        masks = np.stack(venv.env_method("action_masks"))
        self.assertEqual(masks.shape, (6, NUM_ACTIONS))
        self.assertEqual(masks.dtype, bool)
        self.assertTrue(masks.any(axis=1).all())
        self.assertEqual(len(venv.env_method("action_masks", indices=[1, 3])), 2)
        self.assertEqual(venv.env_is_wrapped(object), [False] * 6)

    def test_step_autoreset_terminal_observation(self):
        venv = self.venv
        rng = np.random.default_rng(3)
        venv.seed(5)
        venv.reset()
        ended = 0
        for _ in range(80):
            venv.step_async(random_actions(rng, venv.env_method("action_masks")))
            obs, rewards, dones, infos = venv.step_wait()
            self.assertEqual(obs.shape[0], 6)
            self.assertEqual(rewards.shape, (6,))
            self.assertEqual(rewards.dtype, np.float32)
            self.assertEqual(dones.dtype, bool)
            self.assertEqual(len(infos), 6)
            for i in np.flatnonzero(dones):
                ended += 1
                self.assertEqual(infos[i]["terminal_observation"].shape, (venv.observation_space.shape[0],))
                self.assertFalse(infos[i]["TimeLimit.truncated"])
                # Autoreset in the same step: the row is already the next episode's first observation.
                self.assertFalse(np.array_equal(infos[i]["terminal_observation"], obs[i]))
        self.assertGreater(ended, 0)

    def test_truncation_and_illegal_actions(self):
        with KratzenSB3VecEnv(2, SERVER.url, max_steps=2) as venv:
            venv.reset()
            for _ in range(2):
                _, _, dones, infos = venv.step([int(np.flatnonzero(m)[0]) for m in venv.env_method("action_masks")])
            self.assertTrue(dones.all())
            self.assertTrue(all(info["TimeLimit.truncated"] for info in infos))
        with KratzenSB3VecEnv(2, SERVER.url, illegal_action_penalty=5) as venv:
            venv.reset()
            illegal = [int(np.flatnonzero(~m)[0]) for m in venv.env_method("action_masks")]
            _, rewards, dones, infos = venv.step(illegal)
            self.assertTrue(dones.all())
            self.assertTrue(all(info["illegal_action"] for info in infos))
            self.assertTrue((rewards <= -5).all())


@unittest.skipUnless(HAVE_CONTRIB, "stable_baselines3, sb3_contrib and torch not all importable")
class MaskablePPOTest(unittest.TestCase):
    def test_learns_a_little_and_acts_legally(self):
        from sb3_contrib import MaskablePPO
        from sb3_contrib.common.maskable.utils import get_action_masks

        with KratzenSB3VecEnv(8, SERVER.url, opponents="random", reward_normalization="pot") as venv:
            model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=128, n_epochs=2, seed=1, verbose=0)
            model.learn(1024)
            obs = venv.reset()
            for _ in range(20):
                masks = get_action_masks(venv)
                actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
                self.assertTrue(masks[np.arange(8), actions].all())
                obs, _, _, _ = venv.step(actions)


if __name__ == "__main__":
    unittest.main()
