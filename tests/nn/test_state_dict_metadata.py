"""``state_dict()._metadata`` (per-module versions), versioned loading of old BatchNorm and
InstanceNorm checkpoints, the local metadata the load hooks receive, and the order and
contract of load post-hooks: the same programs under chainrule and PyTorch."""

from __future__ import annotations

import collections
import io
from typing import Any

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")


def _model(lib: Any) -> Any:
    nn = lib.nn
    return nn.Sequential(
        nn.Linear(2, 3),
        nn.BatchNorm1d(3),
        nn.Sequential(nn.Identity(), nn.InstanceNorm1d(3, track_running_stats=True)),
    )


def test_state_dict_metadata_matches_torch() -> None:
    got = _model(cr).state_dict()._metadata
    ref = _model(torch).state_dict()._metadata
    assert type(got) is collections.OrderedDict
    assert list(got.items()) == list(ref.items())
    assert got["1"] == {"version": 2} and got["2.0"] == {"version": 1}


def test_metadata_survives_save_and_load() -> None:
    sd = _model(cr).state_dict()
    buf = io.BytesIO()
    cr.save(sd, buf)
    buf.seek(0)
    back = cr.load(buf)
    assert dict(back._metadata) == dict(sd._metadata)


def _old_checkpoint(lib: Any, version: int | None) -> tuple[Any, Any]:
    lib.manual_seed(0)
    m = _model(lib)
    sd = m.state_dict()
    old = collections.OrderedDict((k, v) for k, v in sd.items() if "num_batches" not in k)
    if version is not None:
        old._metadata = collections.OrderedDict((k, {"version": version}) for k in sd._metadata)
    fresh = _model(lib)
    fresh[1].num_batches_tracked.fill_(5)  # the module's own count is what an old file keeps
    return fresh, old


@pytest.mark.parametrize("version", [None, 1])
def test_batchnorm_checkpoint_before_version_2_loads(version: int | None) -> None:
    res = []
    for lib in (cr, torch):
        m, old = _old_checkpoint(lib, version)
        r = m.load_state_dict(old)
        res.append((list(r.missing_keys), list(r.unexpected_keys), int(m[1].num_batches_tracked)))
        res[-1] += (int(m[2][1].num_batches_tracked),)
    assert res[0] == res[1] == ([], [], 5, 0)


def test_batchnorm_version_2_checkpoint_without_count_is_missing() -> None:
    msgs = []
    for lib in (cr, torch):
        m, old = _old_checkpoint(lib, 2)
        with pytest.raises(RuntimeError) as e:
            m.load_state_dict(old)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    assert '"1.num_batches_tracked"' in msgs[0]


def test_unversioned_instance_norm_with_running_stats_is_refused() -> None:
    msgs = []
    for lib in (cr, torch):
        src = lib.nn.InstanceNorm2d(2, track_running_stats=True).state_dict()
        plain = collections.OrderedDict(src)  # no _metadata: a pre-0.4 file
        m = lib.nn.InstanceNorm2d(2)
        with pytest.raises(RuntimeError) as e:
            m.load_state_dict(plain)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    assert "track_running_stats=False" in msgs[0]


def _hook_log(lib: Any) -> tuple[list[Any], Any]:
    lib.manual_seed(0)
    m = _model(lib)
    src = _model(lib)
    with lib.no_grad():
        for p in src.parameters():
            p.fill_(0.5)
    sd = src.state_dict()
    log: list[Any] = []

    def pre(name: str) -> Any:
        def hook(mod: Any, state: Any, prefix: str, local: Any, *rest: Any) -> None:
            log.append(("pre", name, prefix, dict(local)))

        return hook

    def post(name: str) -> Any:
        def hook(mod: Any, keys: Any) -> None:
            first = next(iter(mod.parameters()), None)
            seen = None if first is None else float(first.detach().reshape(-1)[0])
            log.append(("post", name, seen, list(keys.missing_keys)))

        return hook

    m.register_load_state_dict_pre_hook(pre("top"))
    m.register_load_state_dict_post_hook(post("top"))
    m[0].register_load_state_dict_post_hook(post("lin"))
    m[1].register_load_state_dict_pre_hook(pre("bn"))
    m[2].register_load_state_dict_post_hook(post("inner"))
    m.load_state_dict(sd)
    m.load_state_dict(sd, assign=True)
    return log, m[0].weight.detach().numpy()


def test_load_hooks_order_metadata_and_loaded_values_match_torch() -> None:
    log, w = _hook_log(cr)
    ref_log, ref_w = _hook_log(torch)
    assert log == ref_log
    # a post-hook runs after its own subtree is loaded: it sees the new values
    assert ("post", "lin", 0.5, []) in log
    assert log[0] == ("pre", "top", "", {"version": 1})
    assert ("pre", "bn", "1.", {"version": 2, "assign_to_params_buffers": True}) in log
    np.testing.assert_array_equal(w, ref_w)


def _clearing_post_hook(lib: Any) -> Any:
    m = lib.nn.Linear(2, 2)
    sd = {"weight": lib.ones(2, 2)}  # bias missing

    def forgive(mod: Any, keys: Any) -> None:
        keys.missing_keys.clear()

    m.register_load_state_dict_post_hook(forgive)
    r = m.load_state_dict(sd)
    return list(r.missing_keys), m.weight.detach().numpy()


def test_post_hook_may_clear_missing_keys_before_the_strict_check() -> None:
    got, ref = _clearing_post_hook(cr), _clearing_post_hook(torch)
    assert got[0] == ref[0] == []
    np.testing.assert_array_equal(got[1], ref[1])
    np.testing.assert_array_equal(got[1], np.ones((2, 2)))


def test_without_post_hooks_a_failed_load_changes_nothing() -> None:
    # chainrule checks every module before the first copy (docs: a difference on purpose).
    m = _model(cr)
    before = [p.detach().numpy().copy() for p in m.parameters()]
    sd = {k: v + 1 for k, v in m.state_dict().items()}
    sd["2.1.running_mean"] = cr.zeros(4)  # wrong size in the last module
    with pytest.raises(RuntimeError, match="size mismatch for 2.1.running_mean"):
        m.load_state_dict(sd)
    for a, p in zip(before, m.parameters()):
        np.testing.assert_array_equal(a, p.detach().numpy())
