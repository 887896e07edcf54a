"""The main job (``make run``): until the pipeline graph exists, check the example programs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main() -> int:
    """Run ``vox check --strict`` over ``examples/*.vox``; return its exit code."""
    root = Path(__file__).resolve().parents[1]
    files = sorted(str(p) for p in (root / "examples").glob("*.vox"))
    return subprocess.call([sys.executable, "-m", "serving.cli", "check", "--strict", *files])


if __name__ == "__main__":
    raise SystemExit(main())
