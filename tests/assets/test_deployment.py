"""deploy/: the same definitions load with the k8s and Celery executors configured, their configs
validate against the executors' own schemas, deploy/dagster.yaml is a valid Kubernetes instance
config, and misconfiguration is one line naming the variable and key at definitions load.

Needs the ``deploy`` extra (dagster-k8s, dagster-celery, dagster-postgres, dagster-aws); no cluster.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml

pytest.importorskip("dagster_k8s")
pytest.importorskip("dagster_celery")
pytestmark = pytest.mark.filterwarnings("ignore:Found version mismatch")

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def _defs() -> dg.Definitions:
    from assets.definitions import defs

    return defs()


def _executor(defs: dg.Definitions) -> Any:
    return defs.resolve_implicit_global_asset_job_def().executor_def


@pytest.fixture
def k8s_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("VOX_EXECUTOR", "k8s")
    monkeypatch.setenv("VOX_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("VOX_EXECUTOR_CONFIG", str(DEPLOY / "executor-k8s.yaml"))


def test_default_keeps_dagsters_executor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VOX_EXECUTOR", raising=False)
    assert _executor(_defs()).name == "multi_or_in_process_executor"


def test_definitions_load_with_k8s_job_executor(k8s_env: None) -> None:
    defs = _defs()
    job = defs.resolve_implicit_global_asset_job_def()
    assert job.executor_def.name == "vox_k8s"
    assert "qlora_adapter" in {k.to_user_string() for k in defs.resolve_asset_graph().get_all_asset_keys()}
    # the configured executor accepts an empty run-config section (the file's values are its defaults)
    assert dg.validate_run_config(job, {}) is not None


def test_definitions_load_with_celery_executor(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("VOX_EXECUTOR", "celery")
    monkeypatch.setenv("VOX_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("VOX_EXECUTOR_CONFIG", str(DEPLOY / "executor-celery.yaml"))
    monkeypatch.setenv("CELERY_BROKER_URL", "redis://localhost:6379/0")
    monkeypatch.setenv("CELERY_BACKEND_URL", "redis://localhost:6379/1")
    assert _executor(_defs()).name == "vox_celery"


def test_multiprocess_max_concurrent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOX_EXECUTOR", "multiprocess")
    monkeypatch.setenv("VOX_MAX_CONCURRENT", "2")
    assert _executor(_defs()).name == "vox_multiprocess"


@pytest.mark.parametrize(("env", "message"), [
    ({"VOX_EXECUTOR": "k8z"}, "VOX_EXECUTOR=k8z: unknown executor"),
    ({"VOX_EXECUTOR": "k8s", "VOX_STATE_DIR": ""}, "VOX_STATE_DIR is not set"),
    ({"VOX_EXECUTOR": "k8s", "VOX_EXECUTOR_CONFIG": "max_concurent: 3"},
     'VOX_EXECUTOR_CONFIG (k8s executor): Received unexpected config entry "max_concurent"'),
    ({"VOX_EXECUTOR": "k8s", "VOX_EXECUTOR_CONFIG": "max_concurrent: lots"},
     "VOX_EXECUTOR_CONFIG (k8s executor): Invalid scalar at path root:execution:config:max_concurrent"),
    ({"VOX_EXECUTOR": "celery", "VOX_EXECUTOR_CONFIG": "broker: {env: VOX_TEST_UNSET_BROKER}"},
     'environment variable "VOX_TEST_UNSET_BROKER" which is not set'),
    ({"VOX_EXECUTOR": "k8s", "VOX_EXECUTOR_CONFIG": "/nonexistent/executor.yaml"}, "cannot read it"),
    ({"VOX_EXECUTOR": "k8s", "VOX_EXECUTOR_CONFIG": "max_concurrent: 3\nmax_concurrent: 4"},
     "VOX_EXECUTOR_CONFIG: not valid YAML (line 2, column 1: duplicate key max_concurrent (lines 1 and 2)"),
    ({"VOX_EXECUTOR": "multiprocess", "VOX_MAX_CONCURRENT": "many"}, "VOX_MAX_CONCURRENT=many"),
])
def test_misconfiguration_is_one_line_at_load(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                              env: dict[str, str], message: str) -> None:
    from assets.defs.deployment import DeploymentError

    monkeypatch.setenv("VOX_STATE_DIR", str(tmp_path))
    monkeypatch.delenv("VOX_TEST_UNSET_BROKER", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(Exception) as info:  # Dagster may wrap the loader's error; ours is in the chain
        _defs()
    err: BaseException | None = info.value
    while err is not None and not isinstance(err, DeploymentError):
        err = err.__cause__ or err.__context__
    assert err is not None, info.value
    assert message in str(err) and "\n" not in str(err)


def _process(cls: Any, config: dict[str, Any]) -> None:
    from dagster._config import process_config  # the instance loader's own check (no public API for it)

    result = process_config(cls.config_type(), config)
    assert result.success, [e.message for e in result.errors or ()]


def test_k8s_instance_config_validates(monkeypatch: pytest.MonkeyPatch) -> None:
    from dagster._core.instance.config import dagster_instance_config

    for var in ("VOX_IMAGE", "DAGSTER_PG_HOST", "DAGSTER_PG_USERNAME", "DAGSTER_PG_PASSWORD", "DAGSTER_PG_DB",
                "VOX_S3_BUCKET", "VOX_S3_ENDPOINT"):
        monkeypatch.setenv(var, "x")
    config, _ = dagster_instance_config(str(DEPLOY))  # the top-level instance schema
    for section in ("run_launcher", "compute_logs", "run_coordinator"):
        spec = config[section]
        _process(getattr(importlib.import_module(spec["module"]), spec["class"]), spec["config"])
    from dagster_postgres import PostgresRunStorage

    _process(PostgresRunStorage, config["storage"]["postgres"])


def test_helm_values_match_the_image_and_executor_config() -> None:
    values = yaml.safe_load((DEPLOY / "helm" / "values.yaml").read_text())
    deployment = values["dagster-user-deployments"]["deployments"][0]
    assert deployment["dagsterApiGrpcArgs"] == ["-m", "assets.definitions"]
    env = {e["name"]: e["value"] for e in deployment["env"]}
    assert env["VOX_EXECUTOR"] == "k8s"
    assert (DEPLOY / Path(env["VOX_EXECUTOR_CONFIG"]).name).is_file()
    assert values["runLauncher"]["type"] == "K8sRunLauncher"
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "assets.definitions" in dockerfile and "deploy/executor-k8s.yaml" in dockerfile
