"""Run files scored on a Ray cluster of three nodes (a head and two workers, started here on
the loopback) give the local results byte for byte, through the library and the CLI.

Skipped when Ray is not installed, unless RAGMETER_REQUIRE_ALL=1 (then it fails).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from llm_fixtures import free_port
from test_evaluate_parallel import _cli, files  # noqa: F401  (a fixture)
from test_evaluate_ray import assert_scored_as_locally

from ragmeter import engine

try:
    import ray
except ImportError:
    if os.environ.get("RAGMETER_REQUIRE_ALL") == "1":
        raise
    pytest.skip("Ray is not installed (pip install 'ragmeter[ray]')", allow_module_level=True)

NODES = 3


def _node(*args: str) -> subprocess.Popen:
    """One node of the cluster: `ray start --block` in a session of its own, so that
    stopping it stops what it started and nothing else on this machine."""
    ray_cli = Path(sys.executable).with_name("ray")
    command = [str(ray_cli), "start", "--block", "--num-cpus=1", "--node-ip-address=127.0.0.1"]
    return subprocess.Popen(
        [*command, *args, "--disable-usage-stats"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _wait_for(ready, what: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        if time.monotonic() > deadline:
            pytest.fail(f"the test's Ray cluster did not come up: {what}")
        time.sleep(0.5)


def _accepts(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _alive() -> int:
    return len([n for n in ray.nodes() if n["Alive"]])


@pytest.fixture(scope="module")
def cluster():
    """A head and two worker nodes of one CPU each, started with `ray start` on this
    machine; the address is the head's, as `ray start --head` prints it."""
    port = free_port()
    address = f"127.0.0.1:{port}"
    nodes = [_node("--head", f"--port={port}", "--include-dashboard=false")]
    try:
        _wait_for(lambda: _accepts(port), "the head's port")
        src = str(Path(__file__).resolve().parents[1] / "src")
        here = str(Path(__file__).resolve().parent)
        env = {"env_vars": {"PYTHONPATH": os.pathsep.join([src, here])}}
        ray.init(address=address, runtime_env=env, log_to_driver=False)
        for count in range(2, NODES + 1):  # one at a time: two joining at once can stall
            nodes.append(_node(f"--address={address}"))
            _wait_for(lambda: _alive() == count, f"{count} nodes")  # noqa: B023
        yield address
    finally:
        ray.shutdown()
        for node in nodes:
            os.killpg(node.pid, signal.SIGTERM)
        for node in nodes:
            node.wait(timeout=60)


def test_six_runs_scored_on_a_three_node_cluster_equal_local_scores_byte_for_byte(
    files,  # noqa: F811
    cluster,
):
    root, runs = files
    assert len(runs) == 6
    on_cluster = engine.make_engine("ray", address=cluster)
    assert _alive() == NODES
    assert on_cluster.workers == NODES  # one task slot a node: the runs spread over all three
    assert_scored_as_locally(files, on_cluster)


def test_evaluate_on_a_cluster_by_its_address_saves_what_the_local_engine_does(
    files,  # noqa: F811
    cluster,
    tmp_path,
):
    root, runs = files
    local = _cli(root, runs, tmp_path / "local")
    remote = _cli(root, runs, tmp_path / "cluster", "--engine", "ray", "--engine-address", cluster)
    assert remote == local
