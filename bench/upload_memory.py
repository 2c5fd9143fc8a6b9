"""Upload memory and time: the server's peak memory growth per upload, divided by the file's
size, and the time to answer.

Starts ``python -m app`` (no workers, a temporary data directory, a free port on 127.0.0.1)
afresh for every file, so that no heap left over from an earlier upload hides a growth. Before
each upload the server's peak resident size (VmHWM in /proc/PID/status) is reset to its
current size (``echo 5 > /proc/PID/clear_refs``); after the answer, peak minus the size before
is the growth. A small upload first loads the code paths an upload uses. Files:

* 10 MB and 50 MB: numeric CSVs as exported by pandas (20 features, 6 decimals);
* 8 MB single line: ``1,1,1,...`` without a newline (refused at the line limit);
* 20 MB of one-digit cells: the worst case per byte (a float64 per 2 bytes of file);
* four 10 MB uploads at once, while /healthz is polled: answers and the slowest /healthz.

    python bench/upload_memory.py [--root PATH] [--files numeric_10MB,concurrent,...]

``--root`` runs another checkout's app (e.g. ``git archive`` of an older commit) to compare.

Linux only (/proc). Every loop is bounded; nothing leaves the loopback interface.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MB = 1_000_000
DEADLINE_SECONDS = 600.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def numeric_csv(path: Path, size: int, seed: int = 0) -> Path:
    """Numbers with 6 decimals, 20 features and a target, about ``size`` bytes."""
    rng = np.random.default_rng(seed)
    with path.open("w") as out:
        out.write(",".join(f"x{j}" for j in range(20)) + ",y\n")
        while out.tell() < size:
            X = rng.normal(size=(2000, 21))
            out.write("\n".join(",".join(f"{v:.6f}" for v in row) for row in X) + "\n")
    return path


def digits_csv(path: Path, size: int) -> Path:
    """One-digit cells: the most cells, so the most float64s, per byte of file."""
    rows = [",".join(str((i * 7 + j * 3) % 10) for j in range(10)) + "\n" for i in range(10)]
    block = "".join(rows)
    with path.open("w") as out:
        out.write(",".join(f"x{j}" for j in range(9)) + ",y\n")
        out.write(block * (size // len(block)))
    return path


def single_line(path: Path, size: int) -> Path:
    path.write_bytes(b"1," * (size // 2 - 1) + b"y")
    return path


class Server:
    def __init__(self, root: Path, data_dir: Path) -> None:
        self.port = free_port()
        env = {
            **os.environ,
            "DATA_DIR": str(data_dir),
            "WORKERS": "0",
            "SEED_SAMPLES": "false",
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
            "MAX_UPLOAD_MB": "60",
            "PYTHONPATH": str(root),
        }
        env.pop("DATABASE_URL", None)
        self.proc = subprocess.Popen([sys.executable, "-m", "app"], cwd=root, env=env)
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{self.base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the app did not start")
            time.sleep(0.1)

    def status(self, key: str) -> int:
        """VmRSS or VmHWM of the server, in bytes."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
        raise KeyError(key)

    def reset_peak(self) -> int:
        Path(f"/proc/{self.proc.pid}/clear_refs").write_text("5")
        return self.status("VmRSS")

    def upload(self, path: Path, target: str = "y") -> tuple[int, float, str]:
        start = time.perf_counter()
        with path.open("rb") as fh:
            response = httpx.post(
                f"{self.base}/api/datasets",
                files={"file": (path.name, fh, "text/csv")},
                data={"target": target},
                timeout=DEADLINE_SECONDS,
            )
        elapsed = time.perf_counter() - start
        body = response.json()
        if response.status_code == 201:
            note = f"{body['n_samples']} x {body['n_features']}"
        else:
            detail = body["detail"]
            note = (detail if isinstance(detail, str) else detail[0]["msg"])[:60]
        return response.status_code, elapsed, note

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def measure(root: Path, work: Path, path: Path, warm: Path) -> str:
    server = Server(root, work / f"data-{path.stem}")
    try:
        server.upload(warm)
        before = server.reset_peak()
        status, seconds, note = server.upload(path)
        growth = server.status("VmHWM") - before
    finally:
        server.stop()
    size = path.stat().st_size
    return (
        f"| {path.stem} | {size / MB:.1f} MB | {status} | {growth / MB:.0f} MB | "
        f"{growth / size:.2f} | {(growth - 4 * size) / MB:+.0f} MB | {seconds:.2f} s | {note} |"
    )


def concurrent(root: Path, work: Path, path: Path, warm: Path, uploads: int = 4) -> str:
    server = Server(root, work / "data-concurrent")
    results: list[tuple[int, float, str]] = []
    latencies: list[float] = []
    done = threading.Event()

    def probe() -> None:
        deadline = time.monotonic() + DEADLINE_SECONDS
        while not done.is_set() and time.monotonic() < deadline:
            start = time.perf_counter()
            httpx.get(f"{server.base}/healthz", timeout=DEADLINE_SECONDS)
            latencies.append(time.perf_counter() - start)
            time.sleep(0.05)

    try:
        server.upload(warm)
        before = server.reset_peak()
        prober = threading.Thread(target=probe)
        prober.start()
        threads = [
            threading.Thread(target=lambda: results.append(server.upload(path)))
            for _ in range(uploads)
        ]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - start
        done.set()
        prober.join()
        growth = server.status("VmHWM") - before
    finally:
        server.stop()
    statuses = ", ".join(str(s) for s, _, _ in sorted(results))
    return (
        f"{uploads} x {path.stat().st_size / MB:.0f} MB at once: answers {statuses} in "
        f"{wall:.1f} s; peak growth {growth / MB:.0f} MB "
        f"({growth / path.stat().st_size:.2f} x one file); /healthz slowest "
        f"{max(latencies) * 1000:.0f} ms, median {np.median(latencies) * 1000:.0f} ms "
        f"over {len(latencies)} probes"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout whose app to run")
    parser.add_argument(
        "--files",
        default="numeric_10MB,numeric_50MB,single_line_8MB,digits_20MB,concurrent",
        help="comma-separated: which of the measurements to make",
    )
    args = parser.parse_args()
    wanted = set(args.files.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        print("making the files...", file=sys.stderr)
        warm = numeric_csv(work / "warm.csv", 200_000, seed=9)
        files = [
            numeric_csv(work / "numeric_10MB.csv", 10 * MB, seed=1),
            numeric_csv(work / "numeric_50MB.csv", 50 * MB - 200_000, seed=2),
            single_line(work / "single_line_8MB.csv", 8 * MB),
            digits_csv(work / "digits_20MB.csv", 20 * MB),
        ]
        print(f"app: {args.root}; load average before: {os.getloadavg()}")
        print()
        print(
            "| file | size | status | peak growth | growth / size | growth - 4 x size | time "
            "| answer |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for path in files:
            if path.stem in wanted:
                print(measure(args.root, work, path, warm), flush=True)
        if "concurrent" in wanted:
            print()
            print(concurrent(args.root, work, files[0], warm))
        print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
