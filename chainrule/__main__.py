"""``python -m chainrule SCRIPT [ARGS]``: run an unmodified PyTorch program on chainrule.

``torch`` and every ``torch.<x>`` the program imports resolve to chainrule's modules
(``chainrule._torch_namespace``). ``sys.argv``, ``sys.path[0]``, ``__name__ == "__main__"`` and
``__file__`` are set as ``python SCRIPT ARGS`` would set them (``__file__``, and so the file
named in warnings and tracebacks, is the script's absolute path, ``sys.argv[0]`` as given). An
uncaught exception is reported as ``python`` reports it: ``sys.excepthook`` with a traceback
that starts in the program (this runner's and ``runpy``'s frames left out), exit status 1.
``-m MODULE`` and ``-c CODE`` work as they do for ``python``. The console script
``chainrule-run`` is the same command.

Processes the program starts with the *spawn* or *forkserver* method (``mp.set_start_method(
"spawn")``, ``DataLoader(multiprocessing_context="spawn")``) run under ``chainrule-run`` too
(``multiprocessing.set_executable``), so their ``import torch`` is chainrule's as well; the
command line multiprocessing gives such a child (interpreter flags, ``-c CODE``) is read as
``python`` reads it.
"""

from __future__ import annotations

import os
import runpy
import sys
from typing import Callable

__all__ = ["main"]

_USAGE = """\
usage: python -m chainrule SCRIPT [ARGS ...]
       python -m chainrule -m MODULE [ARGS ...]
       python -m chainrule -c CODE [ARGS ...]

Runs a PyTorch program with `torch` resolved to chainrule (no edit to the program).
"""


def _children_run_here() -> None:
    """Start spawned children under this command (when it is installed beside the interpreter)
    so that ``torch`` resolves to chainrule in them too."""
    import multiprocessing

    exe = os.path.join(os.path.dirname(sys.executable), "chainrule-run")
    if os.access(exe, os.X_OK):
        multiprocessing.set_executable(exe)


def main(argv: list[str] | None = None) -> int:
    """Run the program named in ``argv`` (default ``sys.argv[1:]``) with torch -> chainrule."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        sys.stdout.write(_USAGE)
        return 0 if args else 2

    if args[0].startswith("-") and args[0] not in ("-m", "-c") and "-c" in args:
        # A child of multiprocessing (see the module's docstring): its interpreter flags
        # (``-X dev``, ``-W...``, ``-O``) precede ``-c``; this process already runs with the
        # interpreter the parent chose, so they are dropped.
        args = args[args.index("-c") :]

    from chainrule import _torch_namespace

    _torch_namespace.install()
    _children_run_here()
    if args[0] == "-m":
        if len(args) < 2:
            sys.stderr.write("chainrule: -m needs a module name\n" + _USAGE)
            return 2
        sys.argv = [args[1], *args[2:]]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    elif args[0] == "-c":
        if len(args) < 2:
            sys.stderr.write("chainrule: -c needs code to run\n" + _USAGE)
            return 2
        sys.argv = ["-c", *args[2:]]
        sys.path[0] = ""
        globs = {"__name__": "__main__", "__builtins__": __builtins__}
        code = compile(args[1], "<string>", "exec")
        return _report_uncaught(lambda: exec(code, globs))  # noqa: S102 - the user's own code
    else:
        script = args[0]
        if not os.path.exists(script):
            sys.stderr.write(f"chainrule: can't open file {script!r}: no such file\n")
            return 2
        sys.argv = [script, *args[1:]]
        # `python -m chainrule` put the working directory first on sys.path; `python SCRIPT`
        # puts the script's directory there instead.
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        # `python SCRIPT` runs the script under its absolute path (Python >= 3.9): that is
        # the __file__ the program sees and the file its warnings and tracebacks name.
        return _report_uncaught(
            lambda: runpy.run_path(os.path.abspath(script), run_name="__main__")
        )
    return 0


def _report_uncaught(run: Callable[[], object]) -> int:
    """Run the program; an exception it lets escape goes to ``sys.excepthook`` as ``python``
    hands it over, with the frames above the program's (this module's, ``runpy``'s) dropped
    from its traceback, and the exit status is 1. ``SystemExit`` and ``KeyboardInterrupt``
    pass through (the interpreter handles them as for ``python SCRIPT``)."""
    try:
        run()
    except Exception as e:  # noqa: BLE001 - reported as the interpreter reports it
        tb = e.__traceback__
        while tb is not None and _is_runner_frame(tb.tb_frame.f_code.co_filename):
            tb = tb.tb_next
        sys.excepthook(type(e), e.with_traceback(tb), tb)
        return 1
    return 0


def _is_runner_frame(filename: str) -> bool:
    return filename in (__file__, runpy.__file__) or filename == "<frozen runpy>"


if __name__ == "__main__":
    sys.exit(main())
