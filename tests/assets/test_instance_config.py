"""The instance ``make run``/``make ui`` use: run monitoring on, and a killed ``make run`` does not
leave its run ``STARTED`` forever; the main job's failure lines show the real reason."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import dagster as dg

from assets.instance_config import HOST_TAG, PID_TAG, fail_orphaned_runs, run_tags, write_instance_config


def test_written_config_loads_with_run_monitoring(tmp_path: Path) -> None:
    write_instance_config(tmp_path / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        assert instance.run_monitoring_enabled
        assert instance.run_monitoring_max_runtime_seconds > 0


def test_makefile_writes_the_config_with_this_module() -> None:
    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text()
    assert "-m assets.instance_config $@" in makefile


def test_a_run_whose_process_died_is_marked_failed(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    tags = {**run_tags(), PID_TAG: str(dead.pid)}
    with dg.instance_for_test() as instance:
        orphan = instance.add_run(dg.DagsterRun(job_name="vox_main_job", run_id="orphan",
                                                status=dg.DagsterRunStatus.STARTED, tags=tags))
        alive = instance.add_run(dg.DagsterRun(job_name="vox_main_job", run_id="alive",
                                               status=dg.DagsterRunStatus.STARTED, tags=run_tags()))
        other_host = instance.add_run(dg.DagsterRun(job_name="vox_main_job", run_id="elsewhere",
                                                    status=dg.DagsterRunStatus.STARTED,
                                                    tags={**tags, HOST_TAG: "another-host"}))
        assert fail_orphaned_runs(instance) == [orphan.run_id]
        status = {run_id: getattr(instance.get_run_by_id(run_id), "status", None)
                  for run_id in (orphan.run_id, alive.run_id, other_host.run_id)}
        assert status == {"orphan": dg.DagsterRunStatus.FAILURE, "alive": dg.DagsterRunStatus.STARTED,
                          "elsewhere": dg.DagsterRunStatus.STARTED}


def test_failure_reason_is_the_innermost_error_not_the_wrapper() -> None:
    from assets.main import failure_reason

    @dg.asset
    def broken() -> None:
        raise ValueError("the real reason\nsecond line")

    result = dg.materialize([broken], raise_on_error=False)
    (event,) = result.get_step_failure_events()
    assert failure_reason(event) == "ValueError: the real reason"
