"""``python -m chainrule SCRIPT``: unmodified PyTorch programs run with torch -> chainrule."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = """
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.utils.data import DataLoader, TensorDataset

print("argv", sys.argv[1:], __name__, __file__.endswith("prog.py"), sys.path[0] == HERE)
x = torch.linspace(-1, 1, 40).reshape(20, 2).double()
y = x[:, :1] * 2 - x[:, 1:]
model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1)).double()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.arange(p.numel(), dtype=torch.float64).reshape(p.shape) * 0.1 - 0.2 * i)
opt = optim.Adam(model.parameters(), lr=0.05)
for epoch in range(3):
    for xb, yb in DataLoader(TensorDataset(x, y), batch_size=5):
        opt.zero_grad()
        loss = F.mse_loss(model(xb), yb)
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.12f}")
print([round(v, 10) for v in model[0].weight.detach().reshape(-1).tolist()])
"""


def _run(args, cwd, env_extra=None, timeout=120):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(f"HERE = {str(tmp_path)!r}\n" + textwrap.dedent(PROGRAM))
    return path


def test_script_matches_pytorch(script, tmp_path):
    pytest.importorskip("torch")
    ours = _run(["-m", "chainrule", str(script), "a", "--b=1"], cwd=ROOT)
    assert ours.returncode == 0, ours.stderr
    theirs = _run([str(script), "a", "--b=1"], cwd=ROOT)
    assert theirs.returncode == 0, theirs.stderr
    assert ours.stdout.splitlines()[0] == "argv ['a', '--b=1'] __main__ True True"
    assert ours.stdout == theirs.stdout


def test_torch_resolves_to_chainrule_modules(tmp_path):
    code = (
        "import torch, torch.nn.functional as F, torch.utils.data, chainrule\n"
        "import chainrule.nn.functional\n"
        "assert torch is chainrule and F is chainrule.nn.functional\n"
        "assert torch.utils.data is chainrule.utils.data and torch.nn is chainrule.nn\n"
        "from torch.optim.lr_scheduler import StepLR\n"
        "print(StepLR.__module__)\n"
    )
    res = _run(["-m", "chainrule", "-c", code], cwd=str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "chainrule.optim.lr_scheduler"


def test_missing_module_is_an_import_error_naming_it(tmp_path):
    code = (
        "try:\n"
        "    import torch.no_such_part\n"
        "except ImportError as e:\n"
        "    print(type(e).__name__, e.name)\n"
        "import torch._C\n"
    )
    res = _run(["-m", "chainrule", "-c", code], cwd=str(tmp_path))
    assert res.stdout.strip() == "ModuleNotFoundError torch.no_such_part"
    assert res.returncode == 1
    assert "No module named 'torch._C': chainrule does not provide torch._C" in res.stderr


def test_run_module_and_exit_codes(tmp_path):
    (tmp_path / "mod_prog.py").write_text(
        "import sys, torch\nprint(__name__, sys.argv[1:], torch.ones(2).sum().item())\n"
        "raise SystemExit(3)\n"
    )
    res = _run(["-m", "chainrule", "-m", "mod_prog", "x"], cwd=str(tmp_path))
    assert res.stdout.strip() == "__main__ ['x'] 2.0"
    assert res.returncode == 3
    (tmp_path / "bad.py").write_text("import torch\ntorch.ones(2) @ torch.ones(3)\n")
    res = _run(["-m", "chainrule", "bad.py"], cwd=str(tmp_path))
    assert res.returncode == 1
    assert 'File "' in res.stderr and 'bad.py", line 2' in res.stderr
    res = _run(["-m", "chainrule", "missing.py"], cwd=str(tmp_path))
    assert res.returncode == 2 and "can't open file 'missing.py'" in res.stderr
    res = _run(["-m", "chainrule"], cwd=str(tmp_path))
    assert res.returncode == 2 and "usage: python -m chainrule SCRIPT" in res.stdout


def test_install_in_process_and_uninstall():
    from chainrule import _torch_namespace

    saved = {k: v for k, v in sys.modules.items() if k == "torch" or k.startswith("torch.")}
    try:
        _torch_namespace.install()
        import torch  # noqa: F401  (resolved by the finder)
        import torch.nn.functional as F

        import chainrule
        import chainrule.nn.functional

        assert sys.modules["torch"] is chainrule
        assert F is chainrule.nn.functional
    finally:
        _torch_namespace.uninstall()
        sys.modules.update(saved)
    assert sys.modules.get("torch") is saved.get("torch")
    assert _torch_namespace._FINDER not in sys.meta_path


_REPORTS = """
import warnings
import torch

print(__file__)
warnings.warn("a warning names the script's file")
x = torch.ones(2, 3)


def inner():
    return torch.cat([x, torch.ones(2, 4)], dim=0)


inner()
"""


def _without_lib_frames(text):
    """The traceback's lines from the program's frames (the library's own differ: PyTorch's
    error comes from C++, chainrule's from Python frames) and the final line."""
    lines = text.splitlines()
    out, skip = [], False
    for line in lines:
        if line.startswith('  File "'):
            skip = "site-packages" in line or os.path.join(ROOT, "chainrule") in line
        elif not line.startswith(" "):
            skip = False
        if not skip and not line.strip().startswith(("^", "~")):
            out.append(line)
    return out


@pytest.mark.parametrize("cwd_is_dir", [True, False])
def test_file_warnings_and_traceback_as_python_reports_them(tmp_path, cwd_is_dir):
    """`python SCRIPT` runs the script under its absolute path and reports an uncaught error
    with a traceback that starts in the program; `python -m chainrule SCRIPT` does the same."""
    pytest.importorskip("torch")
    (tmp_path / "rep.py").write_text(_REPORTS)
    cwd = str(tmp_path) if cwd_is_dir else str(tmp_path.parent)
    arg = "rep.py" if cwd_is_dir else os.path.join(tmp_path.name, "rep.py")
    ours = _run(["-m", "chainrule", arg], cwd=cwd)
    theirs = _run([arg], cwd=cwd)
    assert ours.returncode == theirs.returncode == 1
    assert ours.stdout == theirs.stdout == str(tmp_path / "rep.py") + "\n"
    mine, ref = _without_lib_frames(ours.stderr), _without_lib_frames(theirs.stderr)
    assert mine[0] == f"{tmp_path / 'rep.py'}:6: UserWarning: a warning names the script's file"
    assert mine == ref
    assert mine[3] == f'  File "{tmp_path / "rep.py"}", line 14, in <module>'
    assert "runpy" not in ours.stderr and "__main__.py" not in ours.stderr


def test_code_string_traceback_starts_in_the_code(tmp_path):
    res = _run(["-m", "chainrule", "-c", "import torch\n1 / 0\n"], cwd=str(tmp_path))
    assert res.returncode == 1
    assert res.stderr.splitlines() == [
        "Traceback (most recent call last):",
        '  File "<string>", line 2, in <module>',
        "ZeroDivisionError: division by zero",
    ]
