"""Hogwild training (pytorch/examples' mnist_hogwild): a module in shared memory trained by
*spawned* processes, with the program run unmodified by ``python -m chainrule``.

The program below is written here in the example's shape: ``mp.set_start_method("spawn")``,
``model.share_memory()``, one ``mp.Process`` per rank given the model. Each child must see
``torch`` as chainrule (the children start under ``chainrule-run``), update the parent's
parameters in place (their memory is shared), and send tensors back through a Queue (shared
ones by descriptor, others by value; as in PyTorch, the sender must live until the receiver has
the descriptor). The children run one after the other, so the result is
deterministic and is compared with PyTorch running the same program.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import chainrule as cr

PROGRAM = textwrap.dedent(
    """
    import json
    import sys

    import torch
    import torch.multiprocessing as mp
    import torch.nn as nn
    import torch.nn.functional as F


    def train(rank, model, queue, received):
        x = torch.linspace(-1.0, 1.0, 48).reshape(12, 4) * (rank + 1)
        y = (x.sum(1) > 0).long()
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
        for _ in range(6):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
        # a shared tensor (a view of the shared weight) and a private one
        queue.put((torch.__name__, model.weight.detach()[0], torch.full((3,), float(rank))))
        # a shared tensor's descriptor is fetched from this process: stay until it is
        received.wait(60)


    if __name__ == "__main__":
        mp.set_start_method("spawn", force=True)
        model = nn.Linear(4, 2)
        with torch.no_grad():
            model.weight.copy_(torch.linspace(-0.5, 0.5, 8).reshape(2, 4))
            model.bias.fill_(0.1)
        model.share_memory()
        queue = mp.Queue()
        got = []
        for rank in range(2):
            received = mp.Event()
            p = mp.Process(target=train, args=(rank, model, queue, received))
            p.start()
            got.append(queue.get(timeout=60))
            received.set()
            p.join(60)
            assert p.exitcode == 0, p.exitcode
        names = [g[0] for g in got]
        row = got[1][1]
        with torch.no_grad():
            row[0] = 7.0  # the received row is the shared weight's memory
        print(json.dumps({
            "names": names,
            "shared": model.weight.is_shared(),
            "weight": model.weight.tolist(),
            "bias": model.bias.tolist(),
            "private": [g[2].tolist() for g in got],
            "write_through": float(model.weight[0, 0]),
        }))
    """
)


def _run(cmd: list[str], tmp_path: os.PathLike[str]) -> dict[str, object]:
    script = os.path.join(tmp_path, "hogwild.py")
    with open(script, "w") as f:
        f.write(PROGRAM)
    out = subprocess.run([*cmd, script], capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(
    not os.access(os.path.join(os.path.dirname(sys.executable), "chainrule-run"), os.X_OK),
    reason="spawned children start under the chainrule-run console script, not installed",
)
def test_spawned_processes_train_a_shared_module_as_in_torch(tmp_path):
    ours = _run([sys.executable, "-m", "chainrule"], tmp_path)
    assert ours["names"] == ["chainrule", "chainrule"]
    torch = pytest.importorskip("torch")
    del torch
    theirs = _run([sys.executable], tmp_path)
    assert theirs["names"] == ["torch", "torch"]
    assert ours["shared"] is True and theirs["shared"] is True
    np.testing.assert_allclose(ours["weight"], theirs["weight"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ours["bias"], theirs["bias"], rtol=1e-6, atol=1e-7)
    assert ours["private"] == theirs["private"] == [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]
    assert ours["write_through"] == theirs["write_through"] == 7.0


def test_share_memory_moves_parameters_and_buffers():
    m = cr.nn.BatchNorm1d(3)
    w = m.weight
    m.share_memory()
    assert m.weight is w
    assert all(p.is_shared() for p in m.parameters())
    assert all(b.is_shared() for b in m.buffers())


def test_tensors_cross_a_spawn_queue(tmp_path):
    """Without ``python -m chainrule``: chainrule imported as itself, a spawned child gets a
    shared tensor (same memory), a private one (a copy) and a Parameter."""
    import multiprocessing

    import chainrule.multiprocessing as crmp

    ctx = multiprocessing.get_context("spawn")
    shared = cr.zeros(4).share_memory_()
    private = cr.arange(3.0)
    param = cr.nn.Parameter(cr.ones(2))
    q_in, q_out = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_child, args=(q_in, q_out))
    p.start()
    try:
        q_in.put((shared, private, param))
        kinds = q_out.get(timeout=120)
    finally:
        p.join(120)
    assert p.exitcode == 0
    assert kinds == ["Tensor", True, "Tensor", False, "Parameter", True]
    assert shared.tolist() == [1.0, 1.0, 1.0, 1.0]  # written by the child
    assert private.tolist() == [0.0, 1.0, 2.0]  # the child's copy changed, not ours
    assert crmp.get_sharing_strategy() == "file_descriptor"


def _child(q_in, q_out):  # runs in the spawned process
    shared, private, param = q_in.get(timeout=120)
    shared.add_(1.0)
    private.add_(1.0)
    q_out.put(
        [
            type(shared).__name__,
            shared.is_shared(),
            type(private).__name__,
            private.is_shared(),
            type(param).__name__,
            param.requires_grad,
        ]
    )


def test_non_leaf_requiring_grad_is_refused_as_in_torch():
    import multiprocessing.reduction as red

    import chainrule.multiprocessing  # noqa: F401 - registers the reducers

    x = cr.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        red.ForkingPickler.dumps(x)


def test_pin_memory_without_accelerator_warns_as_torch():
    """imagenet/main.py passes pin_memory=True; without a GPU PyTorch warns at each iterator."""
    torch = pytest.importorskip("torch")
    for lib in (torch, cr):
        ds = lib.utils.data.TensorDataset(lib.arange(4.0))
        loader = lib.utils.data.DataLoader(ds, batch_size=2, pin_memory=True)
        with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accel"):
            batches = [b[0].tolist() for b in loader]
        assert batches == [[0.0, 1.0], [2.0, 3.0]]
