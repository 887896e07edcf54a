"""`vox serve`: which export it serves, and its exit codes (2 for a usage mistake, 1 for a runtime
failure), each with one line on stderr and no traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from serving.cli import app
from serving.commands.serve import resolve_model_dir
from serving.errors import UsageError


def _write_latest(path: Path, passed: bool) -> None:
    from pipeline.paths import exports_dir

    (exports_dir() / "latest.json").write_text(
        json.dumps({"path": str(path), "eval_passed": passed, "model_name": "vox-mens-tiny"})
    )


def test_vox_serve_resolves_latest_passing_export(tiny_export_dir: Path) -> None:
    with pytest.raises(UsageError, match="no exported model"):
        resolve_model_dir(None)
    _write_latest(tiny_export_dir, passed=False)
    with pytest.raises(UsageError, match="did not pass its eval gate"):
        resolve_model_dir(None)
    _write_latest(tiny_export_dir, passed=True)
    assert resolve_model_dir(None) == tiny_export_dir
    assert resolve_model_dir(Path("/x")) == Path("/x")


def _one_error_line(result: Result, expected: str) -> None:
    """stderr ends with one ``error: ...`` line holding ``expected`` (a ``loading ...`` line may
    come first), and no traceback was printed or raised."""
    lines = result.stderr.splitlines()
    assert lines and lines[-1].startswith("error: ") and expected in lines[-1], result.stderr
    assert all(line.startswith("loading ") for line in lines[:-1]), result.stderr
    if "device" in expected or "--threads" in expected:  # checked before the port is bound and weights load
        assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)


@pytest.mark.parametrize(("argv", "expected"), [
    ([], "no exported model"),
    (["{tmp}/missing"], "does not exist"),
    (["{tmp}"], "config.json is missing"),
    (["{export}/config.json"], "is not a directory"),
    (["{export}", "--adapter", "{tmp}/missing"], "not an adapter"),
    (["{export}", "--adapter", "{tmp}"], "not an adapter"),
    (["{export}", "--device", "tpu"], "unknown device 'tpu'"),
    (["{export}", "--device", ""], "unknown device ''"),
    (["{export}", "--host", "no-such-host.invalid"], "cannot listen on no-such-host.invalid"),
    # second new-user trial: 100000 crashed torch's thread pool after the "serving" line,
    # 99999999999 overflowed torch.set_num_threads
    (["{export}", "--threads", "100000"], "--threads 100000: give 0 (automatic) or a count from 1 to"),
    (["{export}", "--threads", "99999999999"], "--threads 99999999999: give 0 (automatic)"),
], ids=["no-export", "missing-dir", "not-a-model-dir", "a-file", "missing-adapter", "not-an-adapter",
        "unknown-device", "empty-device", "bad-host", "threads-above-cores", "threads-overflow"])
def test_usage_mistakes_exit_2_with_one_line(argv: list[str], expected: str, tmp_path: Path,
                                             tiny_export_dir: Path) -> None:
    args = [a.format(tmp=tmp_path, export=tiny_export_dir) for a in argv]
    result = CliRunner().invoke(app, ["serve", *args, "--port", "0"])
    assert result.exit_code == 2, result.output
    _one_error_line(result, expected)


def test_an_absent_device_is_a_usage_mistake(tiny_export_dir: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    result = CliRunner().invoke(app, ["serve", str(tiny_export_dir), "--port", "0", "--device", "cuda"])
    assert result.exit_code == 2, result.output
    _one_error_line(result, "device 'cuda' is not available on this machine")


def test_a_busy_port_is_a_runtime_failure(tiny_export_dir: Path) -> None:
    from serving.server import bind_socket

    busy = bind_socket("127.0.0.1", 0)
    busy.listen()
    try:
        result = CliRunner().invoke(app, ["serve", str(tiny_export_dir), "--port", str(busy.getsockname()[1])])
    finally:
        busy.close()
    assert result.exit_code == 1, result.output
    _one_error_line(result, "cannot listen")


def test_serving_threads_one_for_a_small_model_on_a_cpu() -> None:
    import torch

    from serving.errors import UsageError
    from serving.model_load import serving_threads

    small = torch.nn.Linear(8, 8)
    assert serving_threads(small, "cpu") == 1  # the default export: 1 thread decodes faster than 2
    assert serving_threads(small, "cpu", 3) == 3  # --threads wins
    assert serving_threads(small, "cuda:0") is None  # not a CPU: torch's default
    big = torch.nn.Embedding(60_000_000 // 64, 64, device="meta")
    assert serving_threads(big, "cpu") is None  # every core for a model the size of a real one
    with pytest.raises(UsageError, match="--threads"):
        serving_threads(small, "cpu", -1)


def test_threads_up_to_the_usable_cores_are_accepted() -> None:
    from pipeline.devices import usable_cores
    from serving.commands.serve import check_threads

    for ok in (0, 1, usable_cores()):
        check_threads(ok)
    for bad in (-1, usable_cores() + 1):
        with pytest.raises(UsageError, match=f"a count from 1 to {usable_cores()} "):
            check_threads(bad)


def test_the_startup_line_says_where_the_masks_are_built(tiny_export_dir: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import serving.server
    from pipeline.devices import usable_cores

    monkeypatch.setattr(serving.server, "serve", lambda *args, **kwargs: None)
    runner = CliRunner()
    result = runner.invoke(app, ["serve", str(tiny_export_dir), "--port", "0", "--no-mask-worker",
                                 "--max-tokens", "100000"])
    assert result.exit_code == 0 and ", Vox masks in process); Ctrl-C to stop" in result.stderr, result.stderr
    assert "warning: --max-tokens 100000 is not below the model's context of " in result.stderr
    every = str(usable_cores())
    result = runner.invoke(app, ["serve", str(tiny_export_dir), "--port", "0", "--mask-worker", "--threads", every])
    assert result.exit_code == 0 and ", Vox masks in a second process); Ctrl-C to stop" in result.stderr
    assert f"warning: --mask-worker with no core beside the {every} the model uses" in result.stderr
