from tests._fakecupy.plugin import fake_cuda  # noqa: F401
