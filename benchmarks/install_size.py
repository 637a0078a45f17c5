"""How big and how slow each install is: a fresh virtualenv per extra, timed, then measured on disk.

    python benchmarks/install_size.py                     # (none), aws, gcp, k8s, all, dev
    python benchmarks/install_size.py aws all dev         # only these

For each extra it builds this checkout's wheel once, creates a virtualenv with the running Python,
installs `inference-infra[<extra>]` from that wheel (dependencies from the configured index, through
pip's cache: a warm cache measures the install, not the download), and prints the seconds the install
took and the virtualenv's size (MiB, as `du -sm` counts them, pip included). `make venv` installs
`[dev]` in editable mode, which is `[all]` plus the test tools; `make plan` uses that virtualenv.
The README's install table quotes these figures with their date.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXTRAS = ("", "aws", "gcp", "k8s", "all", "dev")


def size_mib(folder: Path) -> int:
    """Disk usage in MiB, as `du -sm` reports it (allocated blocks, each hard link once)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            stat = os.lstat(os.path.join(root, name))
            if (stat.st_dev, stat.st_ino) in seen:
                continue
            seen.add((stat.st_dev, stat.st_ino))
            total += stat.st_blocks * 512
    return -(-total // (1024 * 1024))


def build_wheel(into: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(into), str(REPO)],
        check=True,
    )
    return next(into.glob("inference_infra-*.whl"))


def measure(wheel: Path, extra: str, work: Path) -> tuple[float, int]:
    venv = work / f"venv-{extra or 'none'}"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    requirement = f"inference-infra[{extra}] @ {wheel.as_uri()}" if extra else str(wheel)
    start = time.perf_counter()
    subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", requirement], check=True)
    seconds = time.perf_counter() - start
    return seconds, size_mib(venv)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("extras", nargs="*", default=list(EXTRAS), help="extras to measure ('' for none)")
    args = parser.parse_args(argv)
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}")
    with tempfile.TemporaryDirectory(prefix="install-size-") as tmp:
        work = Path(tmp)
        wheel = build_wheel(work)
        print(f"{'extra':<8} {'install s':>9} {'size MiB':>9}")
        for extra in args.extras:
            seconds, mib = measure(wheel, extra, work)
            print(f"{extra or '(none)':<8} {seconds:>9.0f} {mib:>9,}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
