"""Module methods around state dicts and submodules, each compared with torch: state-dict and
load-state-dict hooks (arguments, order, replacement), set_submodule, to_empty, xpu/ipu/mtia."""

from __future__ import annotations

from typing import Any, Callable

import torch

import chainrule


def _both(scenario: Callable[[Any], Any]) -> None:
    assert scenario(chainrule) == scenario(torch)


def _net(lib: Any) -> Any:
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU(), lib.nn.Linear(3, 1))


def test_state_dict_hooks() -> None:
    def scenario(lib: Any) -> Any:
        log: list[Any] = []
        net = _net(lib)
        net[0].register_state_dict_pre_hook(lambda m, p, kv: log.append(("pre0", p, kv)))
        net.register_state_dict_pre_hook(lambda m, p, kv: log.append(("pre", p, kv)))
        h = net[2].register_state_dict_post_hook(
            lambda m, sd, p, meta: log.append(("post2", p, list(sd), meta.get("version")))
        )

        def old(m: Any, sd: Any, p: str, meta: Any) -> Any:
            log.append(("old", list(sd)))
            return {"only": 1}

        net._register_state_dict_hook(old)
        log.append(list(net.state_dict()))
        h.remove()
        net.state_dict(prefix="x.")
        return log

    _both(scenario)


def test_load_state_dict_hooks() -> None:
    def scenario(lib: Any) -> Any:
        log: list[Any] = []
        net = _net(lib)
        sd = {k: v.clone() for k, v in net.state_dict().items()}

        def pre(
            m: Any, state: Any, prefix: str, meta: Any, strict: Any, mk: Any, uk: Any, em: Any
        ) -> None:
            log.append(("pre", type(m).__name__, prefix, strict))
            state.pop(prefix + "bias", None)

        net[0].register_load_state_dict_pre_hook(pre)
        net[2]._register_load_state_dict_pre_hook(
            lambda state, prefix, *a: log.append(("priv", prefix, len(a)))
        )

        def post(m: Any, keys: Any) -> None:
            log.append(("post", list(keys.missing_keys), list(keys.unexpected_keys)))
            keys.missing_keys.clear()

        net.register_load_state_dict_post_hook(post)
        r = net.load_state_dict(sd)
        log.append((list(r.missing_keys), len(sd)))
        return log

    _both(scenario)


def test_set_submodule_and_errors() -> None:
    def scenario(lib: Any) -> Any:
        net = _net(lib)
        out = []
        net.set_submodule("1", lib.nn.Tanh())
        net.set_submodule("2.extra", lib.nn.ReLU())
        out.append(repr(net))
        for args in [
            ("0.x", lib.nn.ReLU(), True),
            ("0.weight", lib.nn.ReLU(), False),
            ("", lib.nn.ReLU(), False),
            ("a", 3, False),
            ("q.a", lib.nn.ReLU(), False),
        ]:
            try:
                net.set_submodule(*args)
            except Exception as e:
                out.append((type(e).__name__, str(e).replace("<class 'torch.", "<class '")))
        return out

    _both(scenario)


def test_to_empty_and_missing_devices() -> None:
    def scenario(lib: Any) -> Any:
        net = _net(lib)
        w = net[0].weight
        net.to_empty(device="cpu")
        out: list[Any] = [
            net[0].weight is w,
            tuple(net[0].weight.shape),
            str(net[2].bias.dtype).split(".")[-1],
        ]
        net.to_empty(device="cpu", recurse=False)
        for name in ("xpu", "ipu", "mtia"):
            try:
                getattr(net, name)()
            except Exception as e:
                out.append((type(e).__name__, str(e)))
        out.append(lib.nn.ReLU().xpu() is not None)
        return out

    _both(scenario)


def test_extra_state() -> None:
    def scenario(lib: Any) -> Any:
        log: list[Any] = []

        class E(lib.nn.Linear):
            def get_extra_state(self) -> Any:
                return {"a": 1}

            def set_extra_state(self, state: Any) -> None:
                log.append(("set", state))

        for f, a in (("get_extra_state", ()), ("set_extra_state", (1,))):
            try:
                getattr(lib.nn.Linear(1, 1), f)(*a)
            except RuntimeError as e:
                log.append(str(e))
        e = E(1, 1)
        sd = e.state_dict()
        log.append((list(sd), sd["_extra_state"]))
        e.load_state_dict(sd)
        del sd["_extra_state"]
        try:
            e.load_state_dict(sd)
        except RuntimeError as err:
            log.append(str(err))
        log.append(list(lib.nn.Sequential(E(1, 1)).state_dict()))
        return log

    _both(scenario)


def test_load_from_state_dict_override() -> None:
    def scenario(lib: Any) -> Any:
        log: list[Any] = []

        class Old(lib.nn.Linear):
            def _load_from_state_dict(self, sd: Any, prefix: str, meta: Any, *rest: Any) -> None:
                log.append((prefix, sorted(k for k in sd if k.startswith(prefix)), rest[0]))
                if prefix + "w" in sd:
                    sd[prefix + "weight"] = sd.pop(prefix + "w")
                super()._load_from_state_dict(sd, prefix, meta, *rest)

        lib.manual_seed(0)
        net = lib.nn.Sequential(Old(2, 1))
        sd = {"0.w": lib.tensor([[5.0, 6.0]]), "0.bias": lib.tensor([7.0])}
        r = net.load_state_dict(sd)
        log.append((net[0].weight.tolist(), net[0].bias.tolist(), list(r.missing_keys)))
        try:
            net.load_state_dict({"0.w": lib.ones(3, 3), "0.bias": lib.ones(1)})
        except RuntimeError as e:
            log.append(str(e).replace("torch.Size", "Size").replace("chainrule.Size", "Size"))
        return log

    _both(scenario)
