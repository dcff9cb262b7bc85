"""Collectives of picklable Python objects, carried as uint8 tensors over the tensor
collectives (so they share their timeouts). Arrays inside the objects are pickled, as in
PyTorch; send tensors with the tensor collectives instead."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np

from chainrule._creation import from_numpy
from chainrule.distributed._collectives import all_gather_into_tensor, broadcast
from chainrule.distributed._group import resolve

__all__ = ["broadcast_object_list", "all_gather_object", "gather_object", "scatter_object_list"]


def _bytes(obj: Any) -> np.ndarray:
    return np.frombuffer(pickle.dumps(obj), dtype=np.uint8).copy()


def _gather_bytes(payload: np.ndarray, group: Any) -> list[bytes]:
    """Every rank's ``payload``, in rank order (lengths first, then blocks padded to the
    longest)."""
    pg = resolve(group, "all_gather_object")
    assert pg is not None
    n = pg.size()
    lengths = from_numpy(np.zeros(n, np.int64))
    all_gather_into_tensor(lengths, from_numpy(np.array([payload.size], np.int64)), group)
    width = int(lengths._data.max()) if n else 0
    block = np.zeros(width, np.uint8)
    block[: payload.size] = payload
    out = from_numpy(np.zeros(n * width, np.uint8))
    all_gather_into_tensor(out, from_numpy(block), group)
    rows = out._data.reshape(n, width)
    return [rows[r, : int(lengths._data[r])].tobytes() for r in range(n)]


def all_gather_object(object_list: list[Any], obj: Any, group: Any = None) -> None:
    """Fill ``object_list`` (of world-size length) with every rank's ``obj``."""
    pg = resolve(group, "all_gather_object")
    if pg is None:
        return
    if len(object_list) != pg.size():
        raise ValueError(
            f"all_gather_object: object_list must have world_size ({pg.size()}) entries, got "
            f"{len(object_list)}"
        )
    for r, raw in enumerate(_gather_bytes(_bytes(obj), group)):
        object_list[r] = pickle.loads(raw)


def gather_object(
    obj: Any,
    object_gather_list: list[Any] | None = None,
    dst: int | None = None,
    group: Any = None,
    group_dst: int | None = None,
) -> None:
    """Collect every rank's ``obj`` into ``object_gather_list`` on rank ``dst`` (default 0)."""
    pg = resolve(group, "gather_object")
    if pg is None:
        return
    root = (
        group_dst
        if group_dst is not None
        else pg._to_group_rank(0 if dst is None else dst, "gather_object")
    )
    raws = _gather_bytes(_bytes(obj), group)
    if pg.rank() == root:
        if object_gather_list is None or len(object_gather_list) != pg.size():
            raise ValueError(
                "gather_object: object_gather_list must have world_size entries on "
                "the destination rank"
            )
        for r, raw in enumerate(raws):
            object_gather_list[r] = pickle.loads(raw)


def broadcast_object_list(
    object_list: list[Any],
    src: int | None = None,
    group: Any = None,
    device: Any = None,
    group_src: int | None = None,
) -> None:
    """Replace ``object_list``'s entries on every rank with those of rank ``src`` (default 0)."""
    pg = resolve(group, "broadcast_object_list")
    if pg is None:
        return
    root_global = (
        pg._global_ranks[group_src] if group_src is not None else (0 if src is None else src)
    )
    me = pg._global_ranks[pg.rank()]
    payload = _bytes(list(object_list)) if me == root_global else np.zeros(0, np.uint8)
    length = from_numpy(np.array([payload.size], np.int64))
    broadcast(length, root_global, group)
    buf = from_numpy(payload if me == root_global else np.zeros(int(length._data[0]), np.uint8))
    broadcast(buf, root_global, group)
    if me != root_global:
        got = pickle.loads(buf._data.tobytes())
        if len(got) != len(object_list):
            raise ValueError(
                f"broadcast_object_list: rank {root_global} sent {len(got)} objects, this rank's "
                f"list has {len(object_list)}"
            )
        object_list[:] = got


def scatter_object_list(
    scatter_object_output_list: list[Any],
    scatter_object_input_list: list[Any] | None = None,
    src: int | None = None,
    group: Any = None,
    group_src: int | None = None,
) -> None:
    """Put rank ``src``'s ``scatter_object_input_list[r]`` into
    ``scatter_object_output_list[0]`` on rank r."""
    pg = resolve(group, "scatter_object_list")
    if pg is None:
        return
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError(
            "Expected argument scatter_object_output_list to be a list of size at least 1."
        )
    root_global = (
        pg._global_ranks[group_src] if group_src is not None else (0 if src is None else src)
    )
    me = pg._global_ranks[pg.rank()]
    holder = [scatter_object_input_list if me == root_global else None]
    broadcast_object_list(holder, root_global, group)
    objs = holder[0]
    scatter_object_output_list[0] = objs[pg.rank()]
