"""Model pulls: download throughput from a hub on 127.0.0.1, and resuming after a kill.

A local hub (``tests/fixtures/hub_server.py``, the hub's own API and file layout) serves a
repository of ``--mb`` MB (a config.json and one weights file of random bytes). Figures:

1. throughput: ``core.local_models.hub.pull`` (what ``taillens models pull`` and the Models dialog
   run) against ``huggingface_hub.snapshot_download`` itself, each into a fresh cache,
   pairs interleaved, median of ``--runs``;
2. resume: ``taillens models pull`` in a subprocess, SIGKILLed once half the weights
   are on disk, then run again: bytes fetched again and wall time of the second pull,
   next to ``snapshot_download`` killed the same way (it keeps no partial file after a
   kill: its second run fetches the whole file again).

    .venv/bin/python benchmarks/models_pull.py [--mb 256] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fixtures.hub_server import FakeHub  # noqa: E402

REPO = "bench/weights"


def build_repo(folder: Path, megabytes: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text('{"architectures": ["LlamaForCausalLM"]}')
    with (folder / "model.safetensors").open("wb") as handle:
        for _ in range(megabytes):
            handle.write(os.urandom(1 << 20))
    return folder


def env_for(server: FakeHub, cache: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(
        PYTHONPATH=str(ROOT),
        HF_ENDPOINT=server.url,
        HF_HUB_CACHE=str(cache),
        HF_HOME=str(home),
        HF_HUB_DISABLE_PROGRESS_BARS="1",
    )
    return env


TAILLENS_PULL = [sys.executable, "-m", "app", "models", "pull", REPO, "--quiet"]
HUB_PULL = [
    sys.executable,
    "-c",
    "import sys; from huggingface_hub import snapshot_download; "
    f"snapshot_download({REPO!r}, max_workers=1)",
]


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True)
    return time.perf_counter() - started


def partial_bytes(cache: Path) -> int:
    return sum(p.stat().st_size for p in cache.rglob("*") if p.is_file() and "blobs" in p.parts)


def killed_then_resumed(
    command: list[str], server: FakeHub, work: Path, half: int
) -> tuple[int, int, float]:
    """(bytes on disk after the kill, bytes sent by the second run, its wall time)."""
    cache = work / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    env = env_for(server, cache, work / "home")
    server.stall_after, server.release = half, __import__("threading").Event()
    sent_before = server.bytes_sent
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 300
    while server.bytes_sent - sent_before < half and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # let the last chunk reach the disk
    process.send_signal(signal.SIGKILL)
    process.wait()
    kept = partial_bytes(cache)
    server.stall_after = None
    server.release.set()
    sent = server.bytes_sent
    seconds = timed(command, env)
    return kept, server.bytes_sent - sent, seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=256, help="size of the weights file")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="taillens-pull-bench-") as tmp:
        work = Path(tmp)
        folder = build_repo(work / "repo", args.mb)
        size = sum(p.stat().st_size for p in folder.iterdir())
        with FakeHub() as server:
            server.add(REPO, folder)
            times: dict[str, list[float]] = {"taillens models pull": [], "snapshot_download": []}
            for _ in range(args.runs):
                for name, command in (
                    ("taillens models pull", TAILLENS_PULL),
                    ("snapshot_download", HUB_PULL),
                ):
                    cache = work / "cache"
                    shutil.rmtree(cache, ignore_errors=True)
                    times[name].append(timed(command, env_for(server, cache, work / "home")))
            print(f"repository: {size / 2**20:.0f} MiB in 2 files, hub on {server.url}")
            print(f"download (fresh cache, process start included, median of {args.runs}):")
            for name, values in times.items():
                median = statistics.median(values)
                print(f"  {name:<22} {median:6.2f} s  {size / 2**20 / median:7.1f} MiB/s")
            # What a pull pays before its first byte: the interpreter and imports.
            start_ups = {
                "taillens models pull": [sys.executable, "-m", "app", "models", "--help"],
                "snapshot_download": [sys.executable, "-c", "import huggingface_hub"],
            }
            env = env_for(server, work / "cache", work / "home")
            for name, command in start_ups.items():
                median = statistics.median(timed(command, env) for _ in range(args.runs))
                print(f"  {name:<22} process start alone {median:5.2f} s")
            half = size // 2
            print(f"killed (SIGKILL) after {half / 2**20:.0f} MiB were sent, then run again:")
            for name, command in (
                ("taillens models pull", TAILLENS_PULL),
                ("snapshot_download", HUB_PULL),
            ):
                kept, again, seconds = killed_then_resumed(command, server, work, half)
                print(
                    f"  {name:<22} kept {kept / 2**20:6.1f} MiB, fetched again "
                    f"{again / 2**20:6.1f} MiB, second run {seconds:5.2f} s"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
