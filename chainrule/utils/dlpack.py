"""``torch.utils.dlpack``: ``from_dlpack`` and ``to_dlpack`` (see chainrule/_dlpack.py)."""

from chainrule._dlpack import from_dlpack, to_dlpack

__all__ = ["from_dlpack", "to_dlpack"]
