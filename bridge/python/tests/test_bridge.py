"""Drives a real `kratzen serve` (dist/cli/serve.js, built by `npm run build`) with the client.

Run: /usr/bin/python3 -m unittest discover -s bridge/python/tests  (needs websockets, numpy).
"""

import os
import socket
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from kratzen_bridge import (  # noqa: E402
    NUM_ACTIONS,
    BridgeClient,
    BridgeError,
    KratzenAECEnv,
    KratzenEnv,
    KratzenVecEnv,
    LocalServer,
)
from kratzen_bridge._compat import HAVE_GYMNASIUM, HAVE_PETTINGZOO  # noqa: E402

SERVER = None


def setUpModule():
    global SERVER
    SERVER = LocalServer()


def tearDownModule():
    assert SERVER.stop() == 0, "graceful shutdown exits 0"


def first_legal(mask):
    return int(np.flatnonzero(mask)[0])


def random_legal(rng, mask):
    return np.int64(rng.choice(np.flatnonzero(mask)))


class ClientTest(unittest.TestCase):
    def test_errors_name_code_and_field(self):
        with BridgeClient(SERVER.url) as client:
            with self.assertRaises(BridgeError) as caught:
                client.call("env.teleport", {})
            self.assertEqual(caught.exception.code, "unknown_method")
            with self.assertRaises(BridgeError) as caught:
                client.call("env.create", {"config": {"rules": {"players": 9}}})
            self.assertEqual(caught.exception.code, "invalid_params")
            self.assertEqual(caught.exception.field, "params.config.rules.players")
            self.assertEqual(client.call("ping"), {})

    def test_idle_clients_are_closed_whatever_they_pong_and_transport_failures_are_bridge_errors(self):
        import time

        # Only accepted requests count as activity: pongs (which websockets sends by itself) do not.
        with LocalServer(args=["--idle-timeout-ms", "600", "--heartbeat-interval-ms", "200"]) as quick:
            quiet = BridgeClient(quick.url)
            active = BridgeClient(quick.url)
            for _ in range(15):  # 1.5 s: two and a half idle timeouts, seven heartbeats
                time.sleep(0.1)
                self.assertEqual(active.call("ping"), {})
            with self.assertRaises(BridgeError) as caught:
                quiet.call("ping")
            self.assertEqual(caught.exception.code, "connection_closed")
            # 4000 when the close frame was read; None when the socket was already gone (destroyed
            # a second after the close frame went unanswered).
            self.assertIn(caught.exception.details["closeCode"], (4000, None))
            if caught.exception.details["closeCode"] == 4000:
                # Read between calls by the keepalive thread: the message said "(4000)" alone [Python probe, session 39].
                self.assertIn("4000 idle timeout", caught.exception.message)
            quick.stop()
            with self.assertRaises(BridgeError) as caught:
                active.call("ping")
            self.assertEqual(caught.exception.code, "connection_closed")
            self.assertIn("ping", caught.exception.message)
        with self.assertRaises(BridgeError) as caught:
            BridgeClient("ws://127.0.0.1:9")
        self.assertEqual(caught.exception.code, "connection_failed")

    def test_requests_over_the_message_limit_are_not_sent_and_policies_split_their_batches(self):
        from kratzen_bridge import RemotePolicy

        with LocalServer(args=["--max-message-bytes", "65536"]) as small:
            client = BridgeClient(small.url)
            # Every entry a long float: the worst case for JSON, far more bytes per row than maxPolicyRows assumes.
            rng = np.random.default_rng(5)
            observations = rng.random((300, client.hello["observationSize"]), dtype=np.float32)
            # Each row still an observation as far as every policy checks (its one-hot slices).
            for name, s in ((s["name"], s) for s in client.spec()["observation"]["slices"]):
                if name in ("seat", "numPlayers", "profile", "phase", "kind"):
                    observations[:, s["offset"] : s["offset"] + s["size"]] = 0
                    observations[:, s["offset"]] = 1
            masks = np.zeros((300, NUM_ACTIONS), dtype=np.int8)
            masks[np.arange(300), rng.integers(0, NUM_ACTIONS, 300)] = 1
            with self.assertRaises(BridgeError) as caught:
                client.call("policy.act", {"policy": "p0", "observations": observations.tolist(), "masks": masks.tolist()})
            self.assertEqual(caught.exception.code, "limit_exceeded")
            policy = RemotePolicy(client, "random")
            actions, _ = policy.act(observations, masks)
            self.assertEqual(actions.shape, (300,))
            self.assertTrue(np.all(masks[np.arange(300), actions] == 1))
            self.assertEqual(client.call("ping"), {})  # the connection was never closed

    def test_timeout_must_be_a_positive_number(self):
        # None failed as "unsupported operand", 0 as a non-blocking socket's EINPROGRESS [probe round 7].
        for timeout in (None, 0, -1, float("inf"), "5", True):
            with self.subTest(timeout=timeout), self.assertRaisesRegex(ValueError, "timeout must be a positive number of seconds"):
                BridgeClient(SERVER.url, timeout=timeout)
        BridgeClient(SERVER.url, timeout=2.5).close()

    def test_connects_to_a_server_bound_to_ipv6_loopback(self):
        # The Host header lacked the brackets (Host: ::1:PORT) and the server refused it [probe round 7].
        try:
            probe = socket.socket(socket.AF_INET6)
            probe.bind(("::1", 0))
            probe.close()
        except OSError:
            self.skipTest("no IPv6 loopback here")
        server = LocalServer(args=["--host", "::1"])
        try:
            self.assertTrue(server.url.startswith("ws://[::1]:"), server.url)
            client = BridgeClient(server.url)
            client.call("ping")
            client.close()
        finally:
            self.assertEqual(server.stop(), 0)

    def test_local_server_names_a_refused_flag_takes_a_port_and_gives_up_on_a_silent_command(self):
        # The CLI's error report came as raw text beside an empty stdout echo; `--port` in args was
        # refused as given twice (LocalServer passes its own); a command that never printed an
        # address blocked forever; a first line that was JSON but no object escaped as TypeError,
        # its process left running [Python probe, session 39].
        import time

        from kratzen_bridge import ServerDidNotStart

        with self.assertRaises(ServerDidNotStart) as caught:
            LocalServer(args=["--max-envs", "abc"])
        self.assertEqual(caught.exception.field, "max-envs")
        self.assertIn("--max-envs must be an integer", caught.exception.reason)
        self.assertTrue(str(caught.exception).startswith("kratzen serve did not start: max-envs: --max-envs must be"), str(caught.exception))
        with self.assertRaisesRegex(ValueError, "LocalServer\\(port=...\\)"):
            LocalServer(args=["--port", "1"])
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
        probe.close()
        with LocalServer(port=free) as pinned:
            self.assertEqual(pinned.port, free)
            with BridgeClient(pinned.url) as client:
                self.assertEqual(client.call("ping"), {})
        started = time.monotonic()
        with self.assertRaisesRegex(ServerDidNotStart, "printed no address within 0.5 s"):
            LocalServer(command=["sh", "-c", "exec sleep 30"], start_timeout=0.5)
        self.assertLess(time.monotonic() - started, 10)
        with self.assertRaisesRegex(ServerDidNotStart, "did not start: \\[1\\]"):
            LocalServer(command=["sh", "-c", "echo '[1]'; exec sleep 30"])

    def test_a_shared_seed_secret_replays_single_agent_games_across_server_starts(self):
        # The secret is random per start: LocalServer gave seeded KratzenEnv runs other games on
        # every start, and nothing on the Python side said so [Python probe, session 39].
        def first_observation(secret):
            with LocalServer(seed_secret=secret) as server, KratzenEnv(server.url) as env:
                return env.reset(seed=42)[0]

        self.assertTrue(np.array_equal(first_observation("shared secret"), first_observation("shared secret")))
        self.assertFalse(np.array_equal(first_observation("shared secret"), first_observation("another secret")))

    def test_envs_take_a_timeout_beside_a_url(self):
        # The envs always waited 60 s; only a BridgeClient of one's own could change it [Python probe, session 39].
        with KratzenEnv(SERVER.url, timeout=5) as env, KratzenVecEnv(2, SERVER.url, timeout=7.5) as venv:
            self.assertEqual((env._session.client.timeout, venv._session.client.timeout), (5, 7.5))
        aec = KratzenAECEnv(SERVER.url, timeout=3)
        self.assertEqual(aec._session.client.timeout, 3)
        aec.close()
        with BridgeClient(SERVER.url) as client:
            with self.assertRaisesRegex(ValueError, "timeout is for a URL"):
                KratzenEnv(client=client, timeout=5)
        with self.assertRaisesRegex(ValueError, "timeout must be a positive number of seconds"):
            KratzenEnv(SERVER.url, timeout=0)

    def test_token(self):
        with LocalServer(args=["--token", "hunter2"]) as guarded:
            with self.assertRaises(BridgeError) as caught:
                BridgeClient(guarded.url)
            self.assertEqual(caught.exception.code, "unauthorized")
            with BridgeClient(guarded.url, token="hunter2") as client:
                self.assertEqual(client.call("ping"), {})


class GymTest(unittest.TestCase):
    def setUp(self):
        self.env = KratzenEnv(SERVER.url, opponents="heuristic", rules={"profile": "didactic4", "players": 4})

    def tearDown(self):
        self.env.close()

    def play(self, seed, steps=80):
        rng = np.random.default_rng(0)
        obs, info = self.env.reset(seed=seed)
        trace = [obs]
        for _ in range(steps):
            obs, reward, terminated, truncated, info = self.env.step(random_legal(rng, info["action_mask"]))
            trace.append((obs, reward, terminated))
            if terminated or truncated:
                obs, info = self.env.reset()
                trace.append(obs)
        return trace

    def test_spaces_dtypes_and_api(self):
        env = self.env
        self.assertIs(env.observation_space, env.observation_space)
        obs, info = env.reset(seed=3, options=None)
        self.assertEqual(obs.dtype, env.observation_space.dtype)
        self.assertEqual(obs.shape, env.observation_space.shape)
        self.assertTrue(env.observation_space.contains(obs))
        mask = info["action_mask"]
        self.assertEqual(mask.dtype, np.int8)
        self.assertEqual(mask.shape, (NUM_ACTIONS,))
        self.assertGreater(mask.sum(), 0)
        ended = False
        for _ in range(200):
            obs, reward, terminated, truncated, info = env.step(first_legal(info["action_mask"]))
            self.assertIs(type(reward), float)
            self.assertIs(type(terminated), bool)
            self.assertIs(type(truncated), bool)
            self.assertTrue(env.observation_space.contains(obs))
            self.assertEqual(info["action_mask"].dtype, np.int8)
            if terminated or truncated:
                ended = True
                self.assertEqual(info["action_mask"].sum(), 0)
                obs, info = env.reset()
        self.assertTrue(ended)

    def test_equal_seeds_equal_trajectories(self):
        a, b = self.play(11), self.play(11)
        for x, y in zip(a, b):
            if isinstance(x, tuple):
                np.testing.assert_array_equal(x[0], y[0])
                self.assertEqual(x[1:], y[1:])
            else:
                np.testing.assert_array_equal(x, y)
        c = self.play(12)
        self.assertFalse(all(np.array_equal(x if not isinstance(x, tuple) else x[0], y if not isinstance(y, tuple) else y[0]) for x, y in zip(a, c)))

    def test_illegal_action_ends_the_episode_with_the_penalty(self):
        _, info = self.env.reset(seed=1)
        illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
        obs, reward, terminated, truncated, info = self.env.step(np.int32(illegal))
        self.assertTrue(terminated)
        self.assertLessEqual(reward, -10.0)
        self.assertTrue(info["illegal_action"])
        self.env.reset(seed=1)
        _, reward, terminated, _, _ = self.env.step(10_000_000_000_000_000_000)
        self.assertTrue(terminated)

    @unittest.skipUnless(HAVE_GYMNASIUM, "gymnasium not installed")
    def test_gymnasium_checker(self):
        from gymnasium.utils.env_checker import check_env

        check_env(self.env, skip_render_check=True)


class AECTest(unittest.TestCase):
    def setUp(self):
        self.env = KratzenAECEnv(SERVER.url, rules={"profile": "tavern5", "players": 5})

    def tearDown(self):
        self.env.close()

    def test_agent_iter_rewards_and_dead_steps(self):
        env = self.env
        rng = np.random.default_rng(1)
        env.reset(seed=4)
        self.assertEqual(env.agents, env.possible_agents)
        space = env.observation_space("player_0")
        self.assertIs(space, env.observation_space("player_0"))
        received = {a: 0.0 for a in env.possible_agents}
        stepped_dead = []
        for agent in env.agent_iter(10_000):
            observation, reward, termination, truncation, info = env.last()
            self.assertIs(type(termination), bool)
            self.assertIs(type(truncation), bool)
            self.assertEqual(observation["action_mask"].dtype, np.int8)
            self.assertEqual(observation["action_mask"].shape, (NUM_ACTIONS,))
            self.assertEqual(observation["observation"].dtype, np.float32)
            self.assertTrue(space["observation"].contains(observation["observation"]))
            received[agent] += reward
            if termination or truncation:
                stepped_dead.append(agent)
                env.step(None)
            else:
                env.step(random_legal(rng, observation["action_mask"]))
        self.assertEqual(sorted(stepped_dead), sorted(env.possible_agents))
        self.assertEqual(env.agents, [])
        # Rewards collected through last() add up to zero-sum chip flows into and out of the pot.
        self.assertTrue(all(isinstance(v, float) for v in received.values()))

    def test_rewards_sum_since_last_action(self):
        env = self.env
        env.reset(seed=9)
        totals = {a: 0.0 for a in env.possible_agents}
        via_last = {a: 0.0 for a in env.possible_agents}
        for agent in env.agent_iter(10_000):
            _, reward, termination, truncation, _ = env.last()
            via_last[agent] += reward
            if termination or truncation:
                env.step(None)
                continue
            env.step(first_legal(env.observe(agent)["action_mask"]))
            for a, r in env.rewards.items():
                totals[a] += r
        for a in env.possible_agents:
            self.assertAlmostEqual(via_last[a], totals[a], places=4)

    def test_dead_agent_only_takes_none_and_illegal_terminates(self):
        env = self.env
        env.reset(seed=2)
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(np.flatnonzero(mask == 0)[0]))
        self.assertTrue(all(env.terminations.values()))
        self.assertTrue(any(info.get("illegal_action") for info in env.infos.values()))
        with self.assertRaises(ValueError):
            env.step(0)

    def test_last_and_step_before_reset_say_so(self):
        # last() raised a bare KeyError, step() said the episode was over [probe round 7].
        for method, call in (("last", lambda: self.env.last()), ("step", lambda: self.env.step(0))):
            with self.subTest(method), self.assertRaisesRegex(RuntimeError, rf"call reset\(\) before {method}\(\)"):
                call()

    def test_a_step_after_every_agent_is_done_is_refused_and_moves_nothing(self):
        # The action went to the server, whose env had started the next episode (probe round 6).
        env = self.env
        env.reset(seed=2)
        for agent in env.agent_iter(10_000):
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else first_legal(obs["action_mask"]))
        self.assertEqual(env.agents, [])
        before = env._session.client.call("env.view", {"session": env._session.id, "env": 0})
        for action in (0, 33, 73):
            with self.subTest(action=action), self.assertRaisesRegex(RuntimeError, "the episode is over"):
                env.step(action)
        self.assertEqual(env._session.client.call("env.view", {"session": env._session.id, "env": 0}), before)
        # last() says so too: a bare KeyError before (web probe, session 32).
        with self.assertRaisesRegex(RuntimeError, r"the episode is over .* before last\(\)"):
            env.last()

    def test_equal_seeds(self):
        def run(seed):
            self.env.reset(seed=seed)
            out = []
            for agent in self.env.agent_iter(60):
                obs, reward, term, trunc, _ = self.env.last()
                out.append((agent, reward, obs["observation"].tobytes()))
                self.env.step(None if term or trunc else first_legal(obs["action_mask"]))
            return out

        self.assertEqual(run(5), run(5))

    def test_observe_gives_each_agent_its_current_observation(self):
        env = self.env
        env.reset(seed=4)
        checked = 0
        for _ in range(12):
            actor = env.agent_selection
            for other in env.agents:
                if other == actor:
                    continue
                seen = env.observe(other)
                # The server's view of that seat now, not the one it last acted on.
                reply = env._session.client.call("env.observe", {"session": env._session.id, "seat": env.possible_agents.index(other)})
                np.testing.assert_array_equal(seen["observation"], np.asarray(reply["observation"], dtype=np.float32))
                self.assertEqual(int(seen["action_mask"].sum()), 0)
                checked += 1
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                break
            before = {a: env.observe(a)["observation"].copy() for a in env.agents if a != actor}
            env.step(first_legal(obs["action_mask"]))
            if env.terminations.get(actor):
                break
            # After a move everybody's view changes (the card or call is public).
            changed = [a for a, o in before.items() if a in env.agents and not np.array_equal(o, env.observe(a)["observation"])]
            self.assertTrue(changed)
        self.assertGreater(checked, 10)

    def test_after_the_episode_every_agent_sees_the_table_as_it_ended(self):
        # An agent was shown the last observation it had been given: one fetched before the final
        # action (the card just played missing), or all zeros if it had never been observed
        # [bridge probe].
        env = KratzenAECEnv(SERVER.url, rules={"profile": "tavern5", "players": 4}, episode="hand", max_steps=3)
        try:
            slices = {s["name"]: (s["offset"], s["size"]) for s in env._session.client.call("spec", {})["observation"]["slices"]}
            public = ["currentTrick", "playedTrick", "trickNumber", "pot", "phase", "numPlayers"]
            for seed in range(4):
                env.reset(seed=seed)
                never_observed = env.possible_agents[-1]
                before = {a: env.observe(a)["observation"].copy() for a in env.possible_agents if a != never_observed}
                while not any(env.terminations.values()) and not any(env.truncations.values()):
                    obs, _, _, _, _ = env.last()
                    env.step(first_legal(obs["action_mask"]))
                views = {a: env.observe(a)["observation"] for a in env.possible_agents}
                reference = views[env.possible_agents[0]]
                for agent, view in views.items():
                    self.assertTrue(view.any(), agent)
                    self.assertEqual(int(view[slices["seat"][0] + env.possible_agents.index(agent)]), 1, agent)
                    for name in public:
                        offset, size = slices[name]
                        np.testing.assert_array_equal(view[offset:offset + size], reference[offset:offset + size], err_msg=f"seed {seed}, {agent}: {name}")
                    if agent in before:
                        self.assertFalse(np.array_equal(view, before[agent]), agent)
                # The same as asked again: fetched once, kept.
                for agent in env.possible_agents:
                    np.testing.assert_array_equal(env.observe(agent)["observation"], views[agent])
        finally:
            env.close()

    def test_is_a_context_manager_like_every_other_env(self):
        # `with KratzenAECEnv(...)` raised TypeError (PettingZoo's AECEnv is none) [Python probe, session 39].
        with KratzenAECEnv(SERVER.url) as env:
            env.reset(seed=1)
            self.assertIn(env.agent_selection, env.agents)
        with self.assertRaisesRegex(RuntimeError, "closed"):
            env.reset(seed=1)

    def test_a_refused_step_keeps_the_reward_last_has_not_shown(self):
        # step() zeroed the agent's pending reward before it checked the action [Python probe, session 37].
        env = KratzenAECEnv(SERVER.url)
        env.reset(seed=1)
        env.step(first_legal(env.observe(env.agent_selection)["action_mask"]))
        _, pending, _, _, _ = env.last()
        self.assertLess(pending, 0.0)  # the next agent's ante, not shown before
        with self.assertRaises(TypeError):
            env.step(1.0)
        self.assertEqual(env.last()[1], pending)
        env.close()

    def test_on_truncation_the_final_observation_goes_to_the_seat_whose_view_it_is(self):
        # It was stored as the last actor's: that agent was shown the next seat's view, its
        # hand included [Python probe, session 37].
        env = KratzenAECEnv(SERVER.url, max_steps=3)
        seat = next(s for s in env._session.client.spec()["observation"]["slices"] if s["name"] == "seat")
        seat_slice = slice(seat["offset"], seat["offset"] + seat["size"])
        env.reset(seed=1)
        before = {}
        for _ in range(3):
            actor = env.agent_selection
            before[actor] = env.observe(actor)["observation"].copy()
            env.step(first_legal(env.observe(actor)["action_mask"]))
        self.assertTrue(all(env.truncations.values()))
        for agent in env.possible_agents:
            seen = env.observe(agent)["observation"]
            self.assertEqual(int(np.flatnonzero(seen[seat_slice])[0]), env.possible_agents.index(agent), agent)
        # The last actor sees the table after its action, not the one it acted on.
        self.assertFalse(np.array_equal(env.observe(actor)["observation"], before[actor]))
        env.close()

    def test_reset_takes_options_it_does_not_read(self):
        """PettingZoo's api_test resets with options={"options": 1} to check the argument exists
        (it failed on the refusal of unknown options that the Gymnasium envs keep)."""
        env = self.env
        env.reset(seed=0)
        plain = env.observe(env.agent_selection)["observation"].copy()
        env.reset(seed=0, options={"options": 1})
        self.assertTrue(np.array_equal(plain, env.observe(env.agent_selection)["observation"]))
        with self.assertRaises(TypeError):
            env.reset(seed=0, options=["options"])

    @unittest.skipUnless(HAVE_PETTINGZOO, "pettingzoo not installed")
    def test_pettingzoo_api_test(self):
        from pettingzoo.test import api_test

        api_test(self.env, num_cycles=200)

    @unittest.skipUnless(HAVE_PETTINGZOO, "pettingzoo not installed")
    def test_pettingzoo_seed_test(self):
        from pettingzoo.test import seed_test

        seed_test(lambda: KratzenAECEnv(SERVER.url, rules={"profile": "tavern5", "players": 5}), num_cycles=100)


class LookAlikeTest(unittest.TestCase):
    """The stand-ins used without Gymnasium answer as Gymnasium's classes do."""

    def test_discrete_contains_takes_0_d_integer_arrays(self):
        # Gymnasium's Discrete(74).contains(np.array(3)) is True; the look-alike's was False [Python probe, session 37].
        from kratzen_bridge import _compat

        space = _compat.Discrete(NUM_ACTIONS)
        self.assertTrue(space.contains(np.array(3)))
        self.assertTrue(space.contains(np.int16(3)))
        self.assertFalse(space.contains(np.array(3.0)))
        self.assertFalse(space.contains(np.array([3])))
        self.assertFalse(space.contains(NUM_ACTIONS))

    def test_autoreset_mode_and_reprs_read_as_gymnasiums(self):
        # The metadata said "same-step" without Gymnasium, AutoresetMode.SAME_STEP with it; the
        # batched spaces printed as <... object at 0x...> [Python probe, session 39].
        from kratzen_bridge import _compat

        mode = _compat.SAME_STEP
        self.assertEqual((mode.name, mode.value), ("SAME_STEP", "SameStep"))
        self.assertEqual(repr(_compat.MultiDiscrete([74, 74])), "MultiDiscrete([74 74])")
        self.assertEqual(repr(_compat.Dict({"mask": _compat.Discrete(2)})), "Dict('mask': Discrete(2))")
        with KratzenVecEnv(2, url=SERVER.url) as venv:
            self.assertIs(venv.metadata["autoreset_mode"], mode)


class InstallTest(unittest.TestCase):
    def test_pip_installs_offline(self):
        """The README's install: a venv over Debian's packages, `pip install` with no index.

        Dependencies are resolved (no --no-deps), so a requirement Debian does not provide
        fails here. The venv borrows Debian's pip (--without-pip: no ensurepip needed).
        """
        import subprocess
        import tempfile

        here = os.path.join(os.path.dirname(__file__), "..")
        with tempfile.TemporaryDirectory() as target:
            venv = os.path.join(target, "venv")
            made = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv], capture_output=True, text=True)
            self.assertEqual(made.returncode, 0, made.stderr)
            python = os.path.join(venv, "bin", "python")
            run = subprocess.run(
                [python, "-m", "pip", "install", "--no-build-isolation", "--no-index", here],
                capture_output=True,
                text=True,
                timeout=300,
                cwd=target,
            )
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            probe = subprocess.run(
                [python, "-c", "import kratzen_bridge, sys; print(kratzen_bridge.__file__)"],
                capture_output=True,
                text=True,
                cwd=target,
            )
            self.assertEqual(probe.returncode, 0, probe.stderr)
            self.assertTrue(probe.stdout.strip().startswith(venv), probe.stdout)


class ExamplesTest(unittest.TestCase):
    def test_numpy_example_runs_as_documented(self):
        import re
        import subprocess

        script = os.path.join(os.path.dirname(__file__), "..", "examples", "numpy_batched.py")
        run = subprocess.run([sys.executable, script, SERVER.url, "3000"], capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 0, run.stderr)
        match = re.search(r"(\d+) steps, (\d+) episodes, \d+ steps/s; observations \(64, (\d+)\) float32, rewards \(64, 4\)", run.stdout)
        self.assertIsNotNone(match, run.stdout)
        self.assertGreaterEqual(int(match.group(1)), 3000)
        self.assertGreater(int(match.group(2)), 0)


    def test_vs_pretrained_plays_the_checkpoints_own_rules(self):
        # Its rules were didactic4 whatever the checkpoint: the tavern5 one ended in checkpoint_error.
        import subprocess

        root = os.path.join(os.path.dirname(__file__), "..", "..", "..")
        script = os.path.join(os.path.dirname(__file__), "..", "examples", "vs_pretrained.py")
        checkpoint = os.path.join(root, "checkpoints", "pretrained", "tavern5-p4", "checkpoint")
        run = subprocess.run([sys.executable, script, checkpoint, SERVER.url], capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertRegex(run.stdout, r"20 hands of tavern5, 4 players, against the bot: [+-]\d+\.\d\d chips; advice followed at \d+ of \d+ decisions")

    def test_bench_checks_its_flags_and_takes_a_token(self):
        import contextlib
        import io
        import json

        from kratzen_bridge import bench

        for args in (["--seconds", "0"], ["--seconds", "nan"], ["--seconds", "1e-9"], ["--seconds", "-1"], ["--token", "", "--url", SERVER.url]):
            with self.subTest(args=args), contextlib.redirect_stderr(io.StringIO()) as err, self.assertRaises(SystemExit) as caught:
                bench.main(args)
            self.assertEqual(caught.exception.code, 2)
            self.assertRegex(err.getvalue(), r"argument --(seconds|token)")
        # A server with a token is measured with it, taken from the environment as kratzen serve
        # takes it, by every client of the bench (the TypeScript one included).
        with LocalServer(args=["--token", "hunter2", "--max-envs", "4096"]) as guarded:
            os.environ["KRATZEN_BRIDGE_TOKEN"] = "hunter2"
            try:
                with contextlib.redirect_stdout(io.StringIO()) as out:
                    bench.main(["--url", guarded.url, "--seconds", "0.25", "--json"])
                # And a server the bench starts itself serves with that token (it refused to run).
                with contextlib.redirect_stdout(io.StringIO()) as local:
                    bench.main(["--seconds", "0.25", "--json"])
            finally:
                del os.environ["KRATZEN_BRIDGE_TOKEN"]
        for printed in (out.getvalue(), local.getvalue()):
            metrics = json.loads(printed)
            self.assertGreater(metrics["python.client.roundTripsPerSec"], 0)
            self.assertGreater(metrics["python.batched.n256.stepsPerSec"], 0)
            if "js.batched.n256.stepsPerSec" in metrics:
                self.assertGreater(metrics["js.batched.n256.stepsPerSec"], 0)


    def test_bench_from_an_installed_package_says_what_it_needs(self):
        # Installed, it failed as FileNotFoundError 'kratzen', and with --url it left the
        # TypeScript comparison out without a word [docs probe, session 37].
        import shutil
        import subprocess
        import tempfile

        site = tempfile.mkdtemp(prefix="kratzen-site-")
        shutil.copytree(os.path.join(os.path.dirname(__file__), "..", "kratzen_bridge"), os.path.join(site, "kratzen_bridge"))
        env = {**os.environ, "PYTHONPATH": site, "PATH": "/usr/bin:/bin"}
        env.pop("KRATZEN_BRIDGE_TOKEN", None)
        bare = subprocess.run([sys.executable, "-m", "kratzen_bridge.bench", "--seconds", "0.25"], capture_output=True, text=True, env=env, cwd=site, timeout=120)
        self.assertEqual(bare.returncode, 2, bare.stderr)
        self.assertIn("no server to start", bare.stderr)
        self.assertIn("with --url", bare.stderr)
        given = subprocess.run([sys.executable, "-m", "kratzen_bridge.bench", "--seconds", "0.25", "--url", SERVER.url, "--json"], capture_output=True, text=True, env=env, cwd=site, timeout=120)
        self.assertEqual(given.returncode, 0, given.stderr)
        self.assertIn("python.ratio.batchedOverJs left out", given.stderr)
        shutil.rmtree(site)


class VecTest(unittest.TestCase):
    def test_batched_numpy(self):
        rng = np.random.default_rng(2)
        with KratzenVecEnv(8, SERVER.url, mode="single", opponents="random") as venv:
            obs, infos = venv.reset(seed=7)
            self.assertEqual(obs.shape, (8, venv.single_observation_space.shape[0]))
            self.assertEqual(obs.dtype, np.float32)
            self.assertEqual(infos["action_mask"].dtype, np.int8)
            self.assertEqual(infos["action_mask"].shape, (8, NUM_ACTIONS))
            finals = 0
            trace = []
            for _ in range(60):
                actions = np.array([random_legal(rng, m) for m in infos["action_mask"]])
                obs, rewards, terminated, truncated, infos = venv.step(actions)
                self.assertEqual(rewards.shape, (8,))
                self.assertEqual(terminated.dtype, bool)
                trace.append(obs.copy())
                self.assertTrue(infos["_action_mask"].all() and infos["_seat"].all())
                if "final_obs" in infos:
                    finals += int(infos["_final_obs"].sum())
                    for i in np.flatnonzero(infos["_final_obs"]):
                        self.assertEqual(infos["final_obs"][i].dtype, np.float32)
                    # Gymnasium's layout (SyncVectorEnv's): a dict of arrays over the envs, each with its mask.
                    final_info = infos["final_info"]
                    self.assertIsInstance(final_info, dict)
                    np.testing.assert_array_equal(final_info["_balances"], infos["_final_info"])
                    np.testing.assert_array_equal(final_info["_hands"], infos["_final_info"])
                    self.assertEqual(final_info["balances"].shape, (8, venv.num_players))
                    self.assertEqual(final_info["balances"].dtype, np.float64)
                    self.assertFalse(final_info["balances"][~infos["_final_info"]].any())
                    self.assertTrue((final_info["hands"][infos["_final_info"]] >= 1).all())
            self.assertGreater(finals, 0)
            self.assertTrue(venv.observation_space.contains(obs))

    def test_a_refused_action_is_named_as_the_caller_gave_it(self):
        # Out of range went as -1, and the server's refusal named -1 (bridge probe 2, session 32).
        with KratzenVecEnv(2, SERVER.url, mode="multi", rules={"players": 3}) as venv:
            _, infos = venv.reset(seed=1)
            actions = np.array([first_legal(m) for m in infos["action_mask"]])
            actions[1] = NUM_ACTIONS
            with self.assertRaisesRegex(BridgeError, rf"env 1.*\b{NUM_ACTIONS}\b") as caught:
                venv.step(actions)
            self.assertNotIn("-1", str(caught.exception))

    def test_a_step_before_reset_is_a_runtime_error(self):
        # It was the server's BridgeError "not_reset"; the README promises RuntimeError (Python probe, session 33).
        for mode in ("single", "multi"):
            with self.subTest(mode), KratzenVecEnv(2, SERVER.url, mode=mode) as venv:
                with self.assertRaisesRegex(RuntimeError, r"call reset\(\) before step\(\)"):
                    venv.step(np.zeros(2, dtype=np.int64))
                venv.reset(seed=1)

    def test_multi_mode_rewards_per_seat(self):
        with KratzenVecEnv(4, SERVER.url, mode="multi", rules={"players": 3}) as venv:
            _, infos = venv.reset(seed=1)
            _, rewards, _, _, infos = venv.step(np.array([first_legal(m) for m in infos["action_mask"]]))
            self.assertEqual(rewards.shape, (4, 3))
            self.assertTrue(set(infos["seat"].tolist()) <= {0, 1, 2})


class HostileArgumentsTest(unittest.TestCase):
    """Bad arguments are refused on the client, naming what was wrong (probe round 3)."""

    def test_actions_must_be_integers_everywhere(self):
        # Floats were truncated to a legal id in the vector env and from 0-d arrays.
        with KratzenVecEnv(2, SERVER.url, mode="multi") as venv:
            _, infos = venv.reset(seed=1)
            legal = np.array([first_legal(m) for m in infos["action_mask"]])
            for bad in (legal + 0.9, legal.astype(complex), legal.astype(bool), np.array(["a", "b"])):
                with self.subTest(dtype=str(bad.dtype)), self.assertRaisesRegex(TypeError, "actions must be integer action ids"):
                    venv.step(bad)
            venv.step(legal.astype(np.int32))  # any integer dtype is fine
        env = KratzenEnv(SERVER.url)
        _, info = env.reset(seed=1)
        legal_one = first_legal(info["action_mask"])
        for bad in (np.array(legal_one + 0.9), np.float32(legal_one), float(legal_one), True):
            with self.subTest(action=repr(bad)), self.assertRaisesRegex(TypeError, "an action is an integer id"):
                env.step(bad)
        env.step(np.array(legal_one))  # a 0-d integer array is an action
        env.close()

    def test_integers_past_int64_are_actions_in_the_vector_env_too(self):
        # KratzenEnv.step(2**70) is an illegal action (the penalty); the vector env called the
        # object array numpy makes of it a TypeError.
        with KratzenVecEnv(2, SERVER.url, mode="single") as venv:
            _, infos = venv.reset(seed=1)
            legal = first_legal(infos["action_mask"][1])
            _, rewards, terminated, _, infos = venv.step(np.array([2**70, legal], dtype=object))
            self.assertEqual(terminated.tolist(), [True, False])
            self.assertLessEqual(float(rewards[0]), -10.0)
            self.assertTrue(infos["final_info"]["illegalAction"][0])  # README: `illegalAction`
            for bad in ([2**70, "a"], [2**70, 1.5], [2**70, True]):
                with self.subTest(actions=bad), self.assertRaisesRegex(TypeError, "actions must be integer action ids"):
                    venv.step(np.array(bad, dtype=object))
        with KratzenVecEnv(2, SERVER.url, mode="multi") as venv:
            _, infos = venv.reset(seed=1)
            legal = first_legal(infos["action_mask"][1])
            with self.assertRaisesRegex(BridgeError, "env 0"):
                venv.step(np.array([-(2**70), legal], dtype=object))

    def test_lists_of_actions_are_judged_element_by_element(self):
        # numpy merged them first: [True, 35] went as [1, 35], [35, np.uint64(33)] was "an array
        # of float64" [Python probe, session 37].
        with KratzenVecEnv(2, SERVER.url, mode="multi") as venv:
            _, infos = venv.reset(seed=1)
            legal = [first_legal(m) for m in infos["action_mask"]]
            for bad in ([True, legal[1]], [legal[0], 1.0], [legal[0], "1"]):
                with self.subTest(actions=bad), self.assertRaisesRegex(TypeError, "actions must be integer action ids"):
                    venv.step(bad)
            venv.step([legal[0], np.uint64(legal[1])])

    def test_a_single_mode_vec_env_that_throws_names_the_action_given(self):
        # Ids outside 0..73 went as -1, as for an env that penalises them: "illegal action -1" [Python probe, session 37].
        with KratzenVecEnv(2, SERVER.url, illegal_action="throw") as venv:
            _, infos = venv.reset(seed=5)
            with self.assertRaisesRegex(BridgeError, rf"env 1: illegal action {NUM_ACTIONS}\b"):
                venv.step([first_legal(infos["action_mask"][0]), NUM_ACTIONS])

    def test_a_multi_mode_vec_env_refuses_single_mode_arguments(self):
        # opponents and learner_seat (2.5 too) were ignored without a word [Python probe, session 37].
        for kwargs in (dict(opponents="heuristic"), dict(learner_seat=2.5), dict(learner_seat=1)):
            with self.subTest(**kwargs), self.assertRaisesRegex(ValueError, "for mode='single'"):
                KratzenVecEnv(2, SERVER.url, mode="multi", **kwargs)
        with KratzenEnv(SERVER.url, learner_seat=np.int8(1)) as env:
            _, info = env.reset(seed=1)
            self.assertIs(type(info["seat"]), int)

    def test_a_policy_refuses_masks_that_are_not_numbers(self):
        from kratzen_bridge import RemotePolicy

        with RemotePolicy(SERVER.url, "random") as policy:
            size = policy.client.hello["observationSize"]
            with self.assertRaisesRegex(TypeError, "masks must be numbers"):
                policy.act(np.zeros((1, size), dtype=np.float32), np.ones((1, NUM_ACTIONS)).astype(str))

    def test_values_that_are_not_json_are_refused_naming_their_field(self):
        cases = {
            "params.config.illegalActionPenalty": dict(illegal_action_penalty=float("nan")),
            "params.config.rewardScale": dict(reward_scale=float("inf")),
        }
        for field, kwargs in cases.items():
            with self.subTest(field=field), self.assertRaises(BridgeError) as caught:
                KratzenEnv(SERVER.url, **kwargs)
            self.assertEqual((caught.exception.code, caught.exception.field), ("invalid_params", field))
        # numpy numbers, as RL code holds them, are JSON numbers (int64 failed inside json.dumps).
        env = KratzenEnv(SERVER.url, learner_seat=np.int64(1), rules={"players": np.int64(5)}, reward_scale=np.float32(0.5))
        self.assertEqual(env.learner_seat, 1)
        env.close()

    def test_arguments_of_the_wrong_kind_name_themselves(self):
        cases = [
            ("rules must be a dict", lambda: KratzenEnv(SERVER.url, rules="x")),
            ("opponents must be an agent name", lambda: KratzenEnv(SERVER.url, opponents=5)),
            ("url must be a ws:// URL string", lambda: KratzenEnv(5)),
        ]
        for message, make in cases:
            with self.subTest(message), self.assertRaisesRegex(TypeError, message):
                make()
        env = KratzenEnv(SERVER.url)
        for seed in ("abc", [1, 2], 1.5):
            with self.subTest(seed=seed), self.assertRaisesRegex(TypeError, "seed must be an integer or None"):
                env.reset(seed=seed)
        env.close()
        aec = KratzenAECEnv(SERVER.url)
        aec.reset(seed=1)
        for agent in ("player_9", 5):
            # The spaces raised a bare KeyError [probe].
            for call in (aec.observe, aec.observation_space, aec.action_space):
                with self.subTest(agent=agent, call=call.__name__), self.assertRaisesRegex(ValueError, "unknown agent"):
                    call(agent)
        aec.close()

    def test_numbers_are_not_coerced_and_reset_takes_no_options(self):
        # int() and float() made 2.7 envs two, True one, "3" three, and max_steps 2.5 two (probe round 6).
        cases = [
            ("num_envs must be an integer", lambda: KratzenVecEnv(2.7, SERVER.url)),
            ("num_envs must be an integer", lambda: KratzenVecEnv(True, SERVER.url)),
            ("num_envs must be an integer", lambda: KratzenVecEnv("3", SERVER.url)),
            ("max_steps must be an integer", lambda: KratzenEnv(SERVER.url, max_steps=2.5)),
            ("illegal_action_penalty must be a number", lambda: KratzenEnv(SERVER.url, illegal_action_penalty="10")),
            ("learner_seat must be an integer", lambda: KratzenEnv(SERVER.url, learner_seat=1.0)),
        ]
        for message, make in cases:
            with self.subTest(message), self.assertRaisesRegex(TypeError, message):
                make()
        with self.assertRaisesRegex(ValueError, "num_envs must be at least 1"):
            KratzenVecEnv(0, SERVER.url)
        with KratzenVecEnv(3, SERVER.url, max_steps=np.int64(5)) as venv:
            first, _ = venv.reset(seed=1)
            # A partial reset (Gymnasium's reset_mask) reset every env; other options were ignored.
            for options in ({"reset_mask": np.array([False, True, False])}, {"bogus": 1}):
                with self.subTest(options=options), self.assertRaises(ValueError):
                    venv.reset(options=options)
            # Negative seeds: numpy's error, not naming the seed, in two classes; the third took them.
            with self.assertRaisesRegex(ValueError, "seed must be a non-negative integer"):
                venv.reset(seed=-5)
            again, _ = venv.reset(seed=1)
            np.testing.assert_array_equal(first, again)
            # Seeds go as decimal strings of at most 256 characters: a longer one was the server's
            # "params.seed: expected string to have <=256 characters" [Python probe, session 37].
            with self.assertRaisesRegex(ValueError, "seed must have at most 256 digits, not 401"):
                venv.reset(seed=10**400)
            venv.reset(seed=10**256 - 1)
        aec = KratzenAECEnv(SERVER.url)
        with self.assertRaisesRegex(ValueError, "seed must be a non-negative integer"):
            aec.reset(seed=-5)
        aec.close()

    def test_policy_masks_are_read_as_the_server_reads_them_and_errors_name_the_callers_row(self):
        from kratzen_bridge import RemotePolicy

        client = BridgeClient(SERVER.url)
        policy = RemotePolicy(client, "random")
        with KratzenVecEnv(8, client=client, mode="multi") as venv:
            observations, infos = venv.reset(seed=3)
            masks = infos["action_mask"]
            # Nonzero is legal: astype(int) made 0.5 illegal ("no legal action") and NaN legal.
            actions, _ = policy.act(observations, masks * 0.5)
            self.assertTrue(np.all(masks[np.arange(8), actions] == 1))
            with_nan = masks.astype(np.float32)
            with_nan[3, int(np.flatnonzero(masks[3] == 0)[0])] = np.nan
            with self.assertRaisesRegex(ValueError, r"masks\[3\] holds NaN"):
                policy.act(observations, with_nan)
            with self.assertRaisesRegex(ValueError, "masks has 7 rows, observations 8"):
                policy.act(observations, masks[:7])
        # A bad row past the first request's rows is named as the caller numbered it (row 49 of
        # the third request was row 400 of the batch).
        max_rows = client.hello["limits"]["maxPolicyRows"]
        rows = 2 * max_rows + 10
        many = np.tile(observations[:1], (rows, 1))
        many_masks = np.tile(masks[:1], (rows, 1))
        many[2 * max_rows + 5, 0] = -3.0
        with self.assertRaises(BridgeError) as caught:
            policy.act(many, many_masks)
        self.assertEqual(caught.exception.field, f"params.observations[{2 * max_rows + 5}][0]")
        self.assertIn(f"params.observations[{2 * max_rows + 5}][0]", caught.exception.message)
        client.close()

    def test_a_policy_asked_for_no_rows_answers_none(self):
        from kratzen_bridge import RemotePolicy

        client = BridgeClient(SERVER.url)
        policy = RemotePolicy(client, "heuristic")
        size = client.spec()["observation"]["size"]
        actions, probabilities = policy.act(np.zeros((0, size), dtype=np.float32), np.zeros((0, NUM_ACTIONS), dtype=np.int8))
        self.assertEqual((actions.shape, probabilities), ((0,), None))
        client.close()


class MisuseTest(unittest.TestCase):
    """Misuse the client can see itself is said as such [probe round 14]."""

    def test_an_env_refused_by_the_server_closes_its_own_connection(self):
        # Each refused constructor kept its connection open (its keepalive thread held it):
        # two of them locked the next client out of a server taking two [probe].
        with LocalServer(args=["--max-connections", "2"]) as small:
            for make in (
                lambda: KratzenVecEnv(5000, url=small.url),
                lambda: KratzenEnv(url=small.url, opponents="grandmaster"),
                lambda: KratzenAECEnv(url=small.url, rules={"players": 9}),
            ):
                with self.assertRaises(BridgeError):
                    make()
            with KratzenEnv(url=small.url) as env:
                env.reset(seed=1)

    def test_an_env_takes_a_client_or_a_url_and_a_token_only_with_a_url(self):
        # A URL given as the client failed as "'str' object has no attribute 'call'" [probe].
        for make in (KratzenEnv, lambda **kw: KratzenVecEnv(2, **kw), KratzenAECEnv):
            with self.assertRaisesRegex(TypeError, "client must be a BridgeClient"):
                make(client=SERVER.url)
        with BridgeClient(SERVER.url) as client:
            # The token went unused without a word.
            with self.assertRaisesRegex(ValueError, "token is for a URL"):
                KratzenEnv(client=client, token="x")
            self.assertEqual(client.call("ping"), {})

    def test_a_vec_env_seeds_its_np_random_with_reset_with_or_without_gymnasium(self):
        # Without Gymnasium, reset(seed=...) left the look-alike's shared generator unseeded [probe].
        with KratzenVecEnv(2, url=SERVER.url) as venv:
            draws = []
            for _ in range(2):
                venv.reset(seed=7)
                draws.append(int(venv.np_random.integers(2**31)))
            self.assertEqual(draws[0], draws[1])
            venv.reset(seed=8)
            self.assertNotEqual(int(venv.np_random.integers(2**31)), draws[0])

    def test_np_random_seed_is_the_reset_seed_and_keeps_the_seeded_generator(self):
        # With Gymnasium, np_random_seed replaced the generator reset(seed=5) had made [Python probe, session 37].
        with KratzenVecEnv(2, url=SERVER.url) as venv:
            venv.reset(seed=5)
            expected = np.random.default_rng(5).integers(1000, size=3).tolist()
            self.assertEqual(venv.np_random_seed, 5)
            self.assertEqual(venv.np_random.integers(1000, size=3).tolist(), expected)
            self.assertIsNone(venv.render())

    def test_an_env_dropped_without_close_frees_its_connection(self):
        # The keepalive thread held the connection: three envs made and dropped locked a server
        # taking two out ("the server has as many clients as it takes") [Python probe, session 37].
        import gc
        import threading
        import time

        def keepalives():
            return sum(1 for t in threading.enumerate() if t.name == "kratzen-keepalive" and t.is_alive())

        before = keepalives()
        with LocalServer(args=["--max-connections", "2"]) as small:
            for _ in range(4):
                env = KratzenEnv(url=small.url)
                env.reset(seed=1)
                del env
                gc.collect()
                time.sleep(0.3)  # the server sees the socket close
            with KratzenEnv(url=small.url) as env:
                env.reset(seed=1)
        deadline = time.monotonic() + 5
        while keepalives() > before and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertLessEqual(keepalives(), before)

    def test_an_idle_client_answers_a_server_that_pings_more_than_twice_a_second(self):
        # The keepalive looked every 0.5 s, fixed: a server pinging every 0.45 s dropped an idle env [Python probe, session 37].
        import time

        with LocalServer(args=["--heartbeat-interval-ms", "150"]) as quick:
            with KratzenEnv(url=quick.url) as env:
                self.assertEqual(env._session.client.hello["limits"]["heartbeatIntervalMs"], 150)
                _, info = env.reset(seed=1)
                time.sleep(1.5)
                env.step(first_legal(info["action_mask"]))

    def test_a_call_interrupted_before_its_reply_closes_the_connection_and_later_calls_say_why(self):
        client = BridgeClient(SERVER.url)
        original = client._wire._next_message

        def interrupted():
            client._wire._next_message = original
            raise KeyboardInterrupt

        # The request is sent, its reply not read: as Ctrl-C while the server works.
        client._wire._next_message = interrupted
        with self.assertRaises(KeyboardInterrupt):
            client.call("ping")
        # It read the interrupted call's reply as its own ("reply id 1 does not match request 2",
        # an internal_error blaming the server).
        with self.assertRaises(BridgeError) as caught:
            client.call("ping")
        self.assertEqual(caught.exception.code, "connection_closed")
        self.assertIn("earlier ping call failed or was interrupted", caught.exception.message)
        self.assertTrue(client.closed)
        with BridgeClient(SERVER.url) as fresh:
            self.assertEqual(fresh.call("ping"), {})

    def test_remote_policy_takes_a_url_or_a_client_and_closes_once_and_a_client_takes_only_a_string_token(self):
        from kratzen_bridge import RemotePolicy

        # A URL failed as "'str' object has no attribute 'call'".
        policy = RemotePolicy(SERVER.url, "heuristic")
        with KratzenVecEnv(4, url=SERVER.url, mode="multi") as venv:
            observations, infos = venv.reset(seed=5)
            actions, _ = policy.act(observations, infos["action_mask"])
            self.assertTrue(np.all(infos["action_mask"][np.arange(4), actions] == 1))
        policy.close()
        self.assertTrue(policy.client.closed)
        policy.close()  # a second close raised unknown_policy
        with self.assertRaisesRegex(TypeError, "client must be a BridgeClient or a ws:// URL string"):
            RemotePolicy(42, "heuristic")
        with RemotePolicy(SERVER.url, "random") as scoped:
            pass
        self.assertTrue(scoped.client.closed)
        client = BridgeClient(SERVER.url)
        with self.assertRaisesRegex(ValueError, "token is for a URL"):
            RemotePolicy(client, "random", token="x")
        shared = RemotePolicy(client, "random")
        shared.close()
        shared.close()
        self.assertFalse(client.closed)  # the caller's connection stays theirs
        client.close()
        with self.assertRaisesRegex(TypeError, "token must be a string"):
            BridgeClient(SERVER.url, token=123)

    def test_envs_used_after_close_or_observed_before_reset_say_so(self):
        env = KratzenEnv(SERVER.url)
        env.reset(seed=1)
        env.close()
        # action_masks() gave the last mask, as if the env could still be stepped [probe].
        for call in (lambda: env.step(0), lambda: env.reset(seed=1), env.action_masks):
            with self.assertRaisesRegex(RuntimeError, r"the env is closed: (step|reset|action_masks)\(\) after close\(\)"):
                call()
        venv = KratzenVecEnv(2, url=SERVER.url, mode="multi")
        venv.close()
        with self.assertRaisesRegex(RuntimeError, "the env is closed"):
            venv.step(np.zeros(2, dtype=np.int64))
        aec = KratzenAECEnv(SERVER.url)
        # An all-zero observation came back before the first reset, where step() and last() raise.
        with self.assertRaisesRegex(RuntimeError, r"call reset\(\) before observe\(\)"):
            aec.observe("player_0")
        aec.reset(seed=2)
        self.assertEqual(aec.observe(aec.agent_selection)["observation"].shape, (aec._session.obs_size,))
        aec.close()
        with self.assertRaisesRegex(RuntimeError, "the env is closed"):
            aec.last()


if __name__ == "__main__":
    unittest.main()
