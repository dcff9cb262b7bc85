"""The files here are programs that tests/distributed runs under mpirun, not test modules:
pytest (including ``--doctest-modules``) must never import them, since importing one would
start MPI and change global state inside pytest's process."""

collect_ignore_glob = ["*.py"]
