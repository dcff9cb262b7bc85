"""``chainrule.hub``: PyTorch Hub needs the network, which chainrule never reaches."""

from __future__ import annotations

from typing import Any

__all__ = [
    "load",
    "list",
    "help",
    "load_state_dict_from_url",
    "download_url_to_file",
    "get_dir",
    "set_dir",
]

_DIR: str | None = None


def _no_network(what: str) -> RuntimeError:
    return RuntimeError(
        f"torch.hub.{what}: chainrule does not download models or weights (no network access "
        "from the library). Build the model in Python and load weights from a local file with "
        "torch.load(path) / model.load_state_dict(...)."
    )


def load(repo_or_dir: str, model: str, *args: Any, **kwargs: Any) -> Any:
    """Refuses: loading from the hub needs the network."""
    raise _no_network("load")


def list(github: str, force_reload: bool = False, **kwargs: Any) -> Any:  # noqa: A001
    """Refuses: listing a hub repository needs the network."""
    raise _no_network("list")


def help(github: str, model: str, force_reload: bool = False, **kwargs: Any) -> Any:  # noqa: A001
    """Refuses: reading a hub entry point's docs needs the network."""
    raise _no_network("help")


def load_state_dict_from_url(url: str, *args: Any, **kwargs: Any) -> Any:
    """Refuses: downloading weights needs the network."""
    raise _no_network("load_state_dict_from_url")


def download_url_to_file(url: str, dst: str, *args: Any, **kwargs: Any) -> None:
    """Refuses: downloading needs the network."""
    raise _no_network("download_url_to_file")


def get_dir() -> str:
    """The hub cache directory (``$TORCH_HOME/hub``, default ``~/.cache/torch/hub``)."""
    import os

    if _DIR is not None:
        return _DIR
    home = os.environ.get("TORCH_HOME", os.path.join(os.path.expanduser("~"), ".cache", "torch"))
    return os.path.join(home, "hub")


def set_dir(d: str) -> None:
    """Set the hub cache directory."""
    global _DIR
    _DIR = str(d)
