"""Two hosts on one machine: two network namespaces joined by a veth pair, each with its own
host name and /etc/hosts, and ``--hosts hostA,hostB`` across them. Open MPI's ssh launcher is
given a stand-in agent that enters the other namespace instead of logging in, and the ranks talk
over TCP only (``btl=tcp,self``), the path real clusters use. Needs root and ``ip netns``;
skipped, with the reason, without them."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys

import pytest

from tests.distributed._launch import JOBS, ROOT, needs_mpi

pytestmark = [needs_mpi, pytest.mark.slow]

_AGENT = """#!/bin/sh
# Stands in for ssh: "agent [options] HOST COMMAND..." runs COMMAND in HOST's namespace.
while [ $# -gt 0 ]; do case "$1" in -*) shift ;; *) break ;; esac; done
host=$1; shift
exec ip netns exec "{prefix}$host" unshare --uts /bin/sh -c "hostname $host; $*"
"""


def _sh(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True, timeout=30)


def _can_make_namespaces() -> str | None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "needs root to create network namespaces"
    for tool in ("ip", "unshare"):
        if shutil.which(tool) is None:
            return f"needs the {tool!r} command"
    probe = f"crprobe{os.getpid()}"
    r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if r.returncode != 0:
        return f"cannot create a network namespace: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


@pytest.fixture
def two_hosts(tmp_path):
    reason = _can_make_namespaces()
    if reason:
        pytest.skip(reason)
    pid = os.getpid()
    prefix = f"cr{pid}_"
    net = f"10.{200 + pid % 50}.{pid % 250}"
    hosts = {"hostA": f"{net}.1", "hostB": f"{net}.2"}
    names = {h: prefix + h for h in hosts}
    va, vb = f"crA{pid}"[:15], f"crB{pid}"[:15]
    try:
        for ns in names.values():
            _sh("ip", "netns", "add", ns)
        _sh("ip", "link", "add", va, "type", "veth", "peer", "name", vb)
        for (h, ns), dev in zip(names.items(), (va, vb)):
            _sh("ip", "link", "set", dev, "netns", ns)
            _sh("ip", "-n", ns, "addr", "add", f"{hosts[h]}/24", "dev", dev)
            _sh("ip", "-n", ns, "link", "set", dev, "up")
            _sh("ip", "-n", ns, "link", "set", "lo", "up")
            # `ip netns exec` mounts /etc/netns/NAME/hosts over /etc/hosts.
            os.makedirs(f"/etc/netns/{ns}", exist_ok=True)
            with open(f"/etc/netns/{ns}/hosts", "w") as f:
                f.write("127.0.0.1 localhost\n" + "".join(f"{a} {h}\n" for h, a in hosts.items()))
        agent = tmp_path / "agent.sh"
        agent.write_text(_AGENT.format(prefix=prefix))
        agent.chmod(0o755)
        yield names, f"{net}.0/24", str(agent)
    finally:
        for ns in names.values():
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
            shutil.rmtree(f"/etc/netns/{ns}", ignore_errors=True)


def test_allreduce_across_two_namespaced_hosts_over_tcp(two_hosts) -> None:
    names, subnet, agent = two_hosts
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        OMP_NUM_THREADS="1",
        PRTE_MCA_plm_ssh_agent=agent,
        OMPI_MCA_plm_rsh_agent=agent,
        OMPI_MCA_btl="tcp,self",
        OMPI_MCA_btl_tcp_if_include=subnet,
        OMPI_MCA_oob_tcp_if_include=subnet,
        PRTE_MCA_oob_tcp_if_include=subnet,
    )
    launch = (
        f"hostname hostA; exec {sys.executable} -m chainrule.distributed.run "
        f"--nproc-per-node 1 --hosts hostA,hostB {JOBS / 'two_hosts.py'}"
    )
    cmd = ["ip", "netns", "exec", names["hostA"], "unshare", "--uts", "/bin/sh", "-c", launch]
    proc = subprocess.Popen(
        cmd,
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail("the two-host job did not finish in 120 s:\n" + out[-3000:])
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert proc.returncode == 0, out[-3000:]
    assert "HOSTS hostA,hostB" in out, out[-3000:]
