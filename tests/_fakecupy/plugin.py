"""The pytest fixture that registers the stand-in as the ``cuda`` device.

``fake_cuda`` goes through chainrule's documented hook, ``chainrule.backends.set_cupy_module``,
and restores the previous module (and the stand-in's global state) afterwards. A conftest
opts in with ``from tests._fakecupy.plugin import fake_cuda  # noqa: F401``. A whole run can
instead set ``CHAINRULE_CUPY_MODULE=tests._fakecupy``, which the backends read on first use.
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from chainrule import backends


@pytest.fixture
def fake_cuda() -> Iterator[Any]:
    """The stand-in module, registered as ``cupy`` for the duration of a test."""
    import tests._fakecupy as fake
    from tests._fakecupy import _core, cupyx

    prev = backends.set_cupy_module(fake)
    try:
        yield fake
    finally:
        backends.set_cupy_module(prev)
        _core.CURRENT[0] = 0
        _core.ALLOCATOR[0] = None
        cupyx.LINALG[0] = "ignore"
        fake.cuda._STREAMS.clear()
