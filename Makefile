# Two entry points for a fresh machine (see README): `make run` and `make test`.
# Both create or reuse .venv and (re)install the project when pyproject.toml changes.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
export VOX_STATE_DIR ?= $(CURDIR)/.vox-state
export DAGSTER_HOME  ?= $(VOX_STATE_DIR)/dagster
# Never reach a model hub at run time (there is no network here; on a GPU box set these to 0 yourself).
export HF_HUB_OFFLINE ?= 1
export HF_DATASETS_OFFLINE ?= 1
export TRANSFORMERS_NO_ADVISORY_WARNINGS ?= 1
export LITELLM_LOCAL_MODEL_COST_MAP ?= True

.PHONY: run test lint install bench clean ui mlflow

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# torch first, pinned, so nothing below can pull a CUDA build
	$(BIN)/python -m pip install -q "torch==2.13.0"
	$(BIN)/python -m pip install -q -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

# telemetry off, run monitoring on (assets/instance_config.py); rewritten when that module changes
$(DAGSTER_HOME)/dagster.yaml: assets/instance_config.py | $(STAMP)
	$(BIN)/python -m assets.instance_config $@

run: $(STAMP) $(DAGSTER_HOME)/dagster.yaml
	$(BIN)/python -m assets.main

# Style gate first (config in pyproject.toml: [tool.ruff], [tool.mypy]), then the suite.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

# The suite on every core this machine has (pytest-xdist; at most TEST_WORKERS workers). A single
# test or file runs in one process as usual: `.venv/bin/python -m pytest tests/x.py`.
TEST_WORKERS ?= 4
test: lint
	$(BIN)/python -m pytest -n auto --maxprocesses $(TEST_WORKERS)

bench: $(STAMP)
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

ui: $(STAMP) $(DAGSTER_HOME)/dagster.yaml
	$(BIN)/dagster dev -w workspace.yaml

mlflow: $(STAMP)
	$(BIN)/mlflow ui --backend-store-uri sqlite:///$(VOX_STATE_DIR)/mlflow/mlflow.db

clean:
	rm -rf $(VOX_STATE_DIR)
