"""`python3 -m kratzen_bridge.bench [--seconds S] [--url ws://...] [--token T] [--json]`: the Python client's speed.

Measured in one run against one server (started here unless --url is given), each figure in
interleaved turns and reported as its median, so the ratios compare figures taken seconds apart:

* `python.client.roundTripsPerSec`: `BridgeClient.call("ping")` round trips;
* `python.websockets.roundTripsPerSec`: the same pings from a bare `websockets` (asyncio) client,
  when that library is installed; `python.ratio.clientOverWebsockets` (target >= 0.8);
* `python.batched.n256.stepsPerSec`: env steps/s of a 256-env multi-agent session from numpy
  (binary replies decoded to dense observations, a random legal action per row);
* `js.batched.n256.stepsPerSec`: the same with the TypeScript client (`node dist/bench/bridge-client.js`)
  against the same server; `python.ratio.batchedOverJs` (target >= 0.5).

A server started with a token takes it from --token or, kept off the command line (which `ps`
shows), from the environment variable KRATZEN_BRIDGE_TOKEN, as `kratzen serve` does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from statistics import median
from typing import Callable, Dict, List, Optional

import numpy as np

from .client import PROTOCOL_VERSION, BridgeClient, LocalServer, NoServerToStart
from .session import Session

ROUNDS = 5
TOKEN_ENV = "KRATZEN_BRIDGE_TOKEN"
# Under MIN_SECONDS a turn could count no work at all, and a ratio divided by zero.
MIN_SECONDS = 0.05
MAX_SECONDS = 600.0


def _rate(body: Callable[[], int], seconds: float) -> float:
    done = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        done += body()
    return done / (time.perf_counter() - start)


def _websockets_pinger(url: str, token: Optional[str]):
    """A bare websockets client doing ping round trips; None when websockets is not installed."""
    try:
        import websockets
    except ImportError:
        return None
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)  # websockets 10 binds to the current loop
    ws = loop.run_until_complete(websockets.connect(url, max_size=None, compression=None, ping_interval=None))
    hello = {"protocolVersion": PROTOCOL_VERSION, **({"token": token} if token is not None else {})}
    loop.run_until_complete(ws.send(json.dumps({"id": 0, "method": "hello", "params": hello})))
    reply = json.loads(loop.run_until_complete(ws.recv()))
    if "error" in reply:
        loop.run_until_complete(ws.close())
        loop.close()
        raise RuntimeError(f"the bare websockets client's hello was refused: {reply['error'].get('message')}")
    message = json.dumps({"id": 1, "method": "ping"})

    async def trips(seconds: float) -> float:
        done = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            await ws.send(message)
            await ws.recv()
            done += 1
        return done / (time.perf_counter() - start)

    def run(seconds: float) -> float:
        return loop.run_until_complete(trips(seconds))

    def close() -> None:
        loop.run_until_complete(ws.close())
        loop.close()

    return run, close


def _batched(client: BridgeClient, num_envs: int):
    session = Session(None, client, None, {"mode": "multi", "numEnvs": num_envs, "config": {"rules": {"profile": "didactic4", "players": 4}}})
    rng = np.random.default_rng(7)
    state = {"batch": session.reset(1)}

    def step() -> int:
        masks = state["batch"].masks
        actions = np.argmax(rng.random(masks.shape) * masks, axis=1)
        state["batch"] = session.step(actions.tolist())
        return num_envs

    return (lambda seconds: _rate(step, seconds)), session.close


def _js_batched(url: str, seconds: float, token: Optional[str]) -> Optional[List[float]]:
    script = Path(__file__).resolve().parents[3] / "dist" / "bench" / "bridge-client.js"
    if not script.exists():
        return None
    # The token goes by the environment, off the command line.
    env = {**os.environ, TOKEN_ENV: token} if token is not None else {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    run = subprocess.run(["node", str(script), url, "256", str(seconds), str(ROUNDS)], capture_output=True, text=True, timeout=300, env=env)
    if run.returncode != 0:
        raise RuntimeError(f"the TypeScript client bench failed: {run.stderr}")
    return json.loads(run.stdout.strip().splitlines()[-1])["stepsPerSec"]


def bench(url: str, seconds: float, token: Optional[str] = None) -> Dict[str, float]:
    client = BridgeClient(url, token=token)
    runners: Dict[str, Callable[[float], float]] = {}
    closers = [client.close]
    runners["python.client.roundTripsPerSec"] = lambda s: _rate(lambda: (client.call("ping"), 1)[1], s)
    pinger = _websockets_pinger(url, token)
    if pinger:
        runners["python.websockets.roundTripsPerSec"] = pinger[0]
        closers.insert(0, pinger[1])
    batched, close_batched = _batched(client, 256)
    runners["python.batched.n256.stepsPerSec"] = batched
    closers.insert(0, close_batched)
    rates: Dict[str, List[float]] = {name: [] for name in runners}
    try:
        for run in runners.values():
            run(0.3)  # warm-up
        for _ in range(ROUNDS):
            for name, run in runners.items():
                rates[name].append(run(seconds / ROUNDS))
    finally:
        for close in closers:
            close()
    metrics = {name: round(median(values)) for name, values in rates.items()}
    if pinger:
        ratios = [a / b for a, b in zip(rates["python.client.roundTripsPerSec"], rates["python.websockets.roundTripsPerSec"])]
        metrics["python.ratio.clientOverWebsockets"] = round(median(ratios), 3)
    js = _js_batched(url, seconds, token)
    if js is None:
        # Left out without a word before (an installed package has no checkout beside it).
        print("js.batched.n256.stepsPerSec and python.ratio.batchedOverJs left out: dist/bench/bridge-client.js is not beside this package (run the bench from a built checkout)", file=sys.stderr)
    if js:
        metrics["js.batched.n256.stepsPerSec"] = round(median(js))
        metrics["python.ratio.batchedOverJs"] = round(metrics["python.batched.n256.stepsPerSec"] / median(js), 3)
    return metrics


def _seconds(text: str) -> float:
    """--seconds as a number of seconds within bounds: 0 divided by zero, and nan ran no turn."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r:.40}") from None
    if not (math.isfinite(value) and MIN_SECONDS <= value <= MAX_SECONDS):
        raise argparse.ArgumentTypeError(f"expected {MIN_SECONDS} to {MAX_SECONDS:g} seconds, got {text!r:.40}")
    return value


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(prog="python3 -m kratzen_bridge.bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=_seconds, default=2.0, help=f"time per figure, split over the turns, {MIN_SECONDS} to {MAX_SECONDS:g} (default 2)")
    parser.add_argument("--url", help="a running kratzen serve (default: start one from this checkout)")
    parser.add_argument("--token", help=f"the server's token (default: ${TOKEN_ENV}, if set and not empty)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    token = args.token if args.token is not None else (os.environ.get(TOKEN_ENV) or None)
    if token == "":
        parser.error("argument --token: empty (leave it out for a server without a token)")
    # The server started here serves with the same token (through the environment, as
    # `kratzen serve` reads it): it inherited KRATZEN_BRIDGE_TOKEN, and the bench refused to run.
    try:
        server = None if args.url else LocalServer(args=["--max-envs", "4096"], env={TOKEN_ENV: token} if token is not None else None)
    except NoServerToStart as e:
        parser.error(f"{e} with --url")
    try:
        metrics = bench(args.url or server.url, args.seconds, token)
    finally:
        if server:
            server.stop()
    if args.json:
        print(json.dumps(metrics))
    else:
        for name, value in metrics.items():
            print(f"{name:44} {value:,}")


if __name__ == "__main__":
    main()
