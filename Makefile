# The two commands the README promises: `make demo` and `make test`.
# Each creates .venv when missing and installs what it needs (the demo does not need PyTorch).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo seeds test lint pyright-baseline bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)

$(VENV)/.examples: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e '.[examples]'
	touch $@

$(VENV)/.test: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $@

$(VENV)/.bench: $(VENV)/.test
	$(BIN)/python -m pip install -q -e '.[bench]'
	touch $@

# The seed programs (seconds), then the SRGAN training run (about 3 minutes on 2 cores).
demo: $(VENV)/.examples
	$(BIN)/python examples/run_all.py
	$(BIN)/python examples/srgan/srgan.py --out srgan_out

seeds: $(VENV)/.examples
	$(BIN)/python examples/run_all.py

# One-way imports: the import-linter layers contract (pyproject.toml) and no import cycle at all;
# ruff (lint and format) over the whole repository; pyright's basic checks, failing on any error
# not in .basedpyright/baseline.json.
lint: $(VENV)/.test
	$(BIN)/lint-imports
	$(BIN)/python tools/import_cycles.py
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/basedpyright -p pyproject.toml

# Rewrite the pyright baseline (after fixing recorded errors; never to hide new ones).
pyright-baseline: $(VENV)/.test
	$(BIN)/basedpyright -p pyproject.toml --writebaseline

test: $(VENV)/.test
	$(BIN)/python -m pytest -n 2 --doctest-modules --doctest-glob='*.md' chainrule tests docs

bench: $(VENV)/.bench
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) build *.egg-info srgan_out

# The distributions examples: a VAE on scikit-learn's digits, REINFORCE on CartPole.
.PHONY: vae reinforce
vae: $(VENV)/.examples
	$(BIN)/python examples/vae/vae.py --out vae_out

reinforce: $(VENV)/.examples
	$(BIN)/python examples/reinforce/reinforce.py --out reinforce_out

# Data-parallel SRGAN on 2 processes (chainrule.distributed over MPI; installs the mpi extra).
.PHONY: ddp
$(VENV)/.mpi: $(VENV)/.examples
	$(BIN)/python -m pip install -q -e '.[examples,mpi]'
	touch $@

ddp: $(VENV)/.mpi
	$(BIN)/python examples/srgan/srgan.py --nproc 2 --out srgan_ddp_out
