"""Every collective against a NumPy reference, per ReduceOp and dtype, odd sizes and empty
tensors; run under mpirun by tests/distributed/test_collectives.py. Each rank builds every
rank's input from (rank, case), so it can compute the reference alone."""

from __future__ import annotations

import sys

import numpy as np

import chainrule as torch
import chainrule.distributed as dist
from chainrule.distributed import ReduceOp, _mpi

dist.init_process_group("mpi")
R, N = dist.get_rank(), dist.get_world_size()
DTYPES = ["float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]
SIZES = [0, 1, 7, 13]
checks = 0


def data(rank: int, n: int, dtype: str, salt: int = 0) -> np.ndarray:
    rng = np.random.default_rng(1000 * rank + 17 * n + salt)
    if dtype == "bool":
        return rng.random(n) < 0.5
    if dtype.startswith("float"):
        return rng.integers(-4, 5, n).astype(dtype) / 2  # exact in every float dtype
    hi = 3 if dtype in ("int8", "uint8") else 50
    lo = 0 if dtype == "uint8" else -hi
    return rng.integers(lo, hi + 1, n).astype(dtype)


def ref_reduce(arrs: list, op: ReduceOp) -> np.ndarray:
    st = np.stack(arrs)
    if st.dtype == bool:
        return {
            ReduceOp.SUM: st.any(0),
            ReduceOp.MAX: st.any(0),
            ReduceOp.BOR: st.any(0),
            ReduceOp.PRODUCT: st.all(0),
            ReduceOp.MIN: st.all(0),
            ReduceOp.BAND: st.all(0),
            ReduceOp.BXOR: np.bitwise_xor.reduce(st, 0),
        }[op]
    f = {
        ReduceOp.SUM: np.sum,
        ReduceOp.PRODUCT: np.prod,
        ReduceOp.MIN: np.min,
        ReduceOp.MAX: np.max,
        ReduceOp.AVG: np.sum,
    }
    if op in f:
        out = f[op](st, axis=0).astype(st.dtype)
        return out / N if op is ReduceOp.AVG else out
    g = {ReduceOp.BAND: np.bitwise_and, ReduceOp.BOR: np.bitwise_or, ReduceOp.BXOR: np.bitwise_xor}[
        op
    ]
    return g.reduce(st, 0)


def ok(got, want, what) -> None:
    global checks
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype or not np.array_equal(got, want):
        raise AssertionError(f"rank {R}: {what}: got {got!r}, want {want!r}")
    checks += 1


def ops_for(dtype: str) -> list:
    ops = [ReduceOp.SUM, ReduceOp.PRODUCT, ReduceOp.MIN, ReduceOp.MAX]
    if dtype.startswith("float"):
        ops.append(ReduceOp.AVG)
    else:
        ops += [ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR]
    return ops


def run_all(tag: str, dtypes: list, sizes: list) -> None:
    for dt in dtypes:
        for n in sizes:
            mine = data(R, n, dt)
            everyone = [data(r, n, dt) for r in range(N)]
            for op in ops_for(dt):
                t = torch.from_numpy(mine.copy())
                v0 = t._version
                dist.all_reduce(t, op)
                ok(t.numpy(), ref_reduce(everyone, op), f"{tag} all_reduce {dt} n={n} {op}")
                assert t._version > v0
                for dst in {0, N - 1}:
                    t = torch.from_numpy(mine.copy())
                    dist.reduce(t, dst, op)
                    ok(
                        t.numpy(),
                        ref_reduce(everyone, op) if R == dst else mine,
                        f"{tag} reduce dst={dst} {dt} n={n} {op}",
                    )
                blocks = [data(r, N * n, dt, salt=5) for r in range(N)]
                out = torch.from_numpy(np.zeros(n, dt))
                dist.reduce_scatter_tensor(out, torch.from_numpy(blocks[R].copy()), op)
                ok(
                    out.numpy(),
                    ref_reduce(blocks, op)[R * n : (R + 1) * n],
                    f"{tag} reduce_scatter_tensor {dt} n={n} {op}",
                )
            for src in {0, N - 1}:
                t = torch.from_numpy(mine.copy())
                dist.broadcast(t, src)
                ok(t.numpy(), everyone[src], f"{tag} broadcast src={src} {dt} n={n}")
            out = torch.from_numpy(np.zeros(N * n, dt))
            dist.all_gather_into_tensor(out, torch.from_numpy(mine.copy()))
            ok(out.numpy(), np.concatenate(everyone), f"{tag} all_gather_into_tensor {dt} {n}")
            lst = [torch.from_numpy(np.zeros(n, dt)) for _ in range(N)]
            dist.all_gather(lst, torch.from_numpy(mine.copy()))
            for r in range(N):
                ok(lst[r].numpy(), everyone[r], f"{tag} all_gather {dt} n={n} from {r}")
            dst = N - 1
            lst = [torch.from_numpy(np.zeros(n, dt)) for _ in range(N)] if R == dst else None
            dist.gather(torch.from_numpy(mine.copy()), lst, dst=dst)
            if R == dst:
                for r in range(N):
                    ok(lst[r].numpy(), everyone[r], f"{tag} gather {dt} n={n} from {r}")
            src_lists = [[data(s, n, dt, salt=9 + r) for r in range(N)] for s in range(N)]
            out = torch.from_numpy(np.zeros(n, dt))
            src = N - 1
            sl = [torch.from_numpy(a.copy()) for a in src_lists[R]] if R == src else None
            dist.scatter(out, sl, src=src)
            ok(out.numpy(), src_lists[src][R], f"{tag} scatter {dt} n={n}")
            # all_to_all_single with uneven splits: rank r sends (r + j) % 3 rows to rank j.
            rows = lambda r, j: (r + j + n) % 3  # noqa: E731
            ins = [
                data(r, sum(rows(r, j) for j in range(N)) * 2, dt, salt=3).reshape(-1, 2)
                for r in range(N)
            ]
            in_split = [rows(R, j) for j in range(N)]
            out_split = [rows(j, R) for j in range(N)]
            out = torch.from_numpy(np.zeros((sum(out_split), 2), dt))
            dist.all_to_all_single(out, torch.from_numpy(ins[R].copy()), out_split, in_split)
            want = []
            for j in range(N):
                off = sum(rows(j, k) for k in range(R))
                want.append(ins[j][off : off + rows(j, R)])
            ok(out.numpy(), np.concatenate(want), f"{tag} all_to_all_single {dt} n={n}")
    # A non-contiguous tensor is reduced through a copy written back into its own storage.
    base = torch.from_numpy(np.arange(12.0).reshape(3, 4) * (R + 1))
    col = base[:, 1]
    dist.all_reduce(col)
    ok(
        base.numpy()[:, 1],
        np.arange(12.0).reshape(3, 4)[:, 1] * sum(range(1, N + 1)),
        f"{tag} strided all_reduce",
    )
    # Point to point in a ring, with tags, sizes past the chunk limit and src=None.
    for n in (0, 5, 23):
        nxt, prv = (R + 1) % N, (R - 1) % N
        buf = torch.from_numpy(np.zeros(n))
        w = dist.isend(torch.from_numpy(data(R, n, "float64")), nxt, tag=n)
        src = dist.recv(buf, None if n == 5 else prv, tag=n)
        w.wait()
        ok(buf.numpy(), data(prv, n, "float64"), f"{tag} ring send/recv n={n}")
        ok(src, prv, f"{tag} recv source n={n}")
    # async_op: several collectives in flight at once, waited in reverse order.
    ts = [torch.from_numpy(data(R, 9, "float64", salt=k)) for k in range(4)]
    works = [dist.all_reduce(t, async_op=True) for t in ts]
    for w in reversed(works):
        assert w.wait() is True and w.is_completed()
    for k, t in enumerate(ts):
        ok(t.numpy(), sum(data(r, 9, "float64", salt=k) for r in range(N)), f"{tag} async {k}")
    objs = [None] * N
    dist.all_gather_object(objs, {"rank": R, "s": "x" * R})
    ok(objs == [{"rank": r, "s": "x" * r} for r in range(N)], True, f"{tag} all_gather_object")
    got = [None] * N if R == 0 else None
    dist.gather_object(("g", R), got, dst=0)
    if R == 0:
        ok(got == [("g", r) for r in range(N)], True, f"{tag} gather_object")
    out_obj = [None]
    dist.scatter_object_list(out_obj, [{"to": r} for r in range(N)] if R == 0 else None, src=0)
    ok(out_obj[0] == {"to": R}, True, f"{tag} scatter_object_list")
    ins = [torch.from_numpy(data(R, 5, "float64", salt=20 + j)) for j in range(N)]
    out = torch.from_numpy(np.zeros(5))
    dist.reduce_scatter(out, ins)
    ok(
        out.numpy(),
        sum(data(r, 5, "float64", salt=20 + R) for r in range(N)),
        f"{tag} reduce_scatter",
    )
    lst = [R, "a", None] if R == 1 else [None, None, None]
    dist.broadcast_object_list(lst, src=1)
    ok(lst == [1, "a", None], True, f"{tag} broadcast_object_list")
    # A sub-group of the even ranks: its own ranks, collectives only among its members.
    evens = dist.new_group([r for r in range(N) if r % 2 == 0])
    t = torch.from_numpy(np.array([float(R)]))
    dist.all_reduce(t, group=evens)
    if R % 2 == 0:
        ok(t.numpy(), np.array([float(sum(range(0, N, 2)))]), f"{tag} new_group all_reduce")
        ok(dist.get_rank(evens), R // 2, f"{tag} group rank")
    else:
        ok(evens is dist.GroupMember.NON_GROUP_MEMBER, True, f"{tag} non-member")
        ok(t.numpy(), np.array([float(R)]), f"{tag} non-member untouched")
    dist.barrier()


def subgroups() -> None:
    """new_group with its arguments, and collectives on groups that are not the world."""
    import datetime

    f64 = np.float64
    # Ranks 1..N-1 (global), listed backwards: group ranks follow the sorted global ranks.
    high = dist.new_group(list(range(N - 1, 0, -1)), timeout=datetime.timedelta(seconds=30))
    if R == 0:
        ok(high is dist.GroupMember.NON_GROUP_MEMBER, True, "non-member of high")
        ok(dist.get_rank(high), -1, "rank outside the group")
    else:
        ok(dist.get_rank(high), R - 1, "group rank of high")
        ok(dist.get_world_size(high), N - 1, "size of high")
        ok(dist.get_process_group_ranks(high), list(range(1, N)), "ranks of high")
        ok(dist.get_global_rank(high, 0), 1, "global rank of group rank 0")
        ok(dist.get_group_rank(high, N - 1), N - 2, "group rank of the last rank")
        t = torch.from_numpy(np.array([f64(R)]))
        dist.broadcast(t, src=N - 1, group=high)  # src is a global rank
        ok(t.numpy(), np.array([f64(N - 1)]), "broadcast on high")
        t = torch.from_numpy(np.array([f64(R), -f64(R)]))
        dist.all_reduce(t, ReduceOp.MAX, group=high)
        ok(t.numpy(), np.array([f64(N - 1), -1.0]), "all_reduce MAX on high")
        outs = [torch.from_numpy(np.zeros(2)) for _ in range(N - 1)]
        dist.all_gather(outs, torch.from_numpy(np.array([f64(R), 2.0 * R])), group=high)
        for j, o in enumerate(outs):
            ok(o.numpy(), np.array([f64(j + 1), 2.0 * (j + 1)]), "all_gather on high")
        t = torch.from_numpy(np.array([f64(R)]))
        dist.reduce(t, dst=1, group=high)
        if R == 1:
            ok(t.numpy(), np.array([f64(sum(range(1, N)))]), "reduce on high")
        if N > 2 and R in (1, N - 1):
            t = torch.from_numpy(np.array([f64(R)]) if R == 1 else np.zeros(1))
            if R == 1:
                dist.send(t, N - 1, group=high)
            else:
                ok(dist.recv(t, 1, group=high), 1, "recv on high: the sender's global rank")
                ok(t.numpy(), np.array([1.0]), "send/recv on high")
        dist.barrier(group=high)
        dist.monitored_barrier(group=high, wait_all_ranks=True)
    # Only the members take part in use_local_synchronization=True (MPI Comm_create_group).
    if R in (0, N - 1):
        ends = dist.new_group([0, N - 1], use_local_synchronization=True, backend="gloo")
        t = torch.from_numpy(np.array([f64(R)]))
        dist.all_reduce(t, group=ends)
        ok(t.numpy(), np.array([f64(N - 1)]), "all_reduce on a locally synchronised group")
        ok(dist.get_rank(ends), 0 if R == 0 else 1, "rank in the locally synchronised group")
    dist.monitored_barrier(timeout=datetime.timedelta(seconds=30))
    for bad, err in ((5, TypeError), (None, ValueError)):
        try:
            if bad is None:
                dist.new_group([0] if R == 0 else [0, 1])  # ranks disagree: all raise
            else:
                dist.new_group([0], timeout=bad)
        except err as e:
            want = "passed other ranks" if bad is None else "of type datetime.timedelta"
            ok(want in str(e), True, f"new_group error {e}")
        else:
            raise AssertionError(f"no {err.__name__} from new_group")
    dist.barrier()
    print(f"rank {R}/{N}: subgroups done", flush=True)


subgroups()
if sys.argv[1:] == ["quick"]:
    # Four ranks on two cores: a cross-section of the grid (all dtypes run on two ranks).
    DTYPES, SIZES = ["float64", "float16", "int64", "uint8", "bool"], [0, 7]
run_all("whole", DTYPES, SIZES)
# The same again with messages split every 3 elements (the 2**31 - 1 limit made small).
_mpi.max_count = 3
run_all("split", ["float64", "int32", "bool"], [0, 13])
_mpi.max_count = 2**31 - 1
try:
    dist.all_reduce(torch.tensor([1, 2]), ReduceOp.AVG)
except ValueError as e:
    assert "AVG needs a floating-point" in str(e)
    checks += 1
print(f"rank {R}/{N}: {checks} checks passed", flush=True)
dist.destroy_process_group()
sys.exit(0)
