"""Which Dagster executor runs the steps, chosen by configuration only (``deploy/`` uses it).

``VOX_EXECUTOR``: unset or ``default`` keeps Dagster's default (multiprocess); ``in_process``,
``multiprocess``, ``k8s`` (``dagster_k8s.k8s_job_executor``: one Kubernetes Job per step) or
``celery`` (``dagster_celery.celery_executor``). ``VOX_EXECUTOR_CONFIG`` is that executor's config
as a YAML file path or inline YAML (e.g. ``deploy/executor-k8s.yaml``); ``VOX_MAX_CONCURRENT``
sets ``max_concurrent`` of the multiprocess executor. The config is validated here, at definitions
load, against the executor's own schema; the k8s and Celery executors also need the storage root
``VOX_STATE_DIR`` set (a volume every step's pod mounts), since a step in another pod reads its
inputs from there. Any problem is one :class:`DeploymentError` line naming the variable and key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg
import yaml

from pipeline.errors import PipelineError
from pipeline.yaml_input import load_yaml

EXECUTOR_ENV = "VOX_EXECUTOR"
CONFIG_ENV = "VOX_EXECUTOR_CONFIG"
MAX_CONCURRENT_ENV = "VOX_MAX_CONCURRENT"
STORAGE_ENV = "VOX_STATE_DIR"
#: executor name -> (module, attribute, pip extra that provides it)
EXECUTORS: dict[str, tuple[str, str, str]] = {
    "in_process": ("dagster", "in_process_executor", ""),
    "multiprocess": ("dagster", "multiprocess_executor", ""),
    "k8s": ("dagster_k8s", "k8s_job_executor", "deploy"),
    "celery": ("dagster_celery", "celery_executor", "deploy"),
}
#: executors whose steps run in other processes on other machines: they need a shared storage root
REMOTE = frozenset({"k8s", "celery"})


class DeploymentError(PipelineError):
    """The executor or storage configuration is wrong (one line naming the variable and key)."""


def _load_config(environ: Mapping[str, str]) -> dict[str, Any]:
    raw = environ.get(CONFIG_ENV, "").strip()
    if not raw:
        return {}
    path = Path(raw)
    try:
        text = path.read_text(encoding="utf-8") if "\n" not in raw and path.suffix in (".yaml", ".yml") else raw
        data = load_yaml(text)
    except OSError as exc:
        raise DeploymentError(f"{CONFIG_ENV}={raw}: cannot read it ({exc.strerror})") from exc
    except yaml.YAMLError as exc:
        raise DeploymentError(f"{CONFIG_ENV}: not valid YAML ({' '.join(str(exc).split())})") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise DeploymentError(f"{CONFIG_ENV}: expected a mapping of executor config keys, got {type(data).__name__}")
    return data


def _validate(name: str, executor: dg.ExecutorDefinition, config: dict[str, Any]) -> None:
    """Check ``config`` against ``executor``'s schema by validating run config of a one-op job."""

    @dg.op
    def _probe() -> None:
        """Never runs: the job exists only to validate the executor config."""

    job = dg.GraphDefinition(name="executor_config_probe", node_defs=[_probe]).to_job(executor_def=executor)
    try:
        dg.validate_run_config(job, {"execution": {"config": config}})
    except dg.DagsterInvalidConfigError as exc:
        first = " ".join((exc.errors[0].message if exc.errors else str(exc)).split())
        # Dagster appends the whole expected schema or a stack trace: keep the sentence naming the key
        first = first.split(" Expected: ")[0].split(" Stack Trace:")[0].replace("dagster._config.errors.", "")
        more = f" ... and {len(exc.errors) - 1} more" if len(exc.errors) > 1 else ""
        raise DeploymentError(f"{CONFIG_ENV} ({name} executor): {first}{more}") from None


def executor_from_env(environ: Mapping[str, str] | None = None) -> dg.ExecutorDefinition | None:
    """The configured executor, or None for Dagster's default.

    Args:
        environ: variables to read (default ``os.environ``).

    Raises:
        DeploymentError: unknown ``VOX_EXECUTOR``, its package missing, an invalid config key or
            value, a bad ``VOX_MAX_CONCURRENT``, or ``VOX_STATE_DIR`` unset for k8s/Celery.
    """
    import importlib

    env = os.environ if environ is None else environ
    name = env.get(EXECUTOR_ENV, "").strip() or "default"
    if name == "default":
        return None
    if name not in EXECUTORS:
        raise DeploymentError(f"{EXECUTOR_ENV}={name}: unknown executor; use default, {', '.join(EXECUTORS)}")
    if name in REMOTE and not env.get(STORAGE_ENV, "").strip():
        raise DeploymentError(f"{STORAGE_ENV} is not set: {EXECUTOR_ENV}={name} runs steps in other pods, which "
                              "read their inputs from this storage root (a volume mounted in every pod)")
    module, attr, extra = EXECUTORS[name]
    try:
        executor: dg.ExecutorDefinition = getattr(importlib.import_module(module), attr)
    except ImportError as exc:
        raise DeploymentError(f"{EXECUTOR_ENV}={name} needs {module.replace('_', '-')}: "
                              f"pip install 'vox-mens[{extra}]'") from exc
    config = _load_config(env)
    if name == "multiprocess" and env.get(MAX_CONCURRENT_ENV, "").strip():
        value = env[MAX_CONCURRENT_ENV].strip()
        if not value.isdigit():
            raise DeploymentError(f"{MAX_CONCURRENT_ENV}={value}: expected a whole number of processes (0 = CPUs)")
        config = {**config, "max_concurrent": int(value)}
    _validate(name, executor, config)
    return executor.configured(config, name=f"vox_{name}") if config else executor


@dg.definitions
def deployment() -> dg.Definitions:
    """The executor from the environment (none set: Dagster's default)."""
    return dg.Definitions(executor=executor_from_env())
