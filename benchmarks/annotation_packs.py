"""Annotation packs on a large session: pack, merge, merge again, progress; wall time,
peak RSS and pack size, each step through the real CLI in a fresh process.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/annotation_packs.py [--units 12915]
        [--annotators 3] [--limit-s 300]

The session is ``benchmarks/large_session.py``'s (TailNLG imported, its units copied up to
--units, one run with a text per unit). Each annotator gets a pack of every text; their
ratings are written into the pack by SQL (one per text, as if rated), then the packs are
merged, merged again (idempotent: nothing added), the last merge undone and redone
through `taillens history` (each merge is one recorded edit) and the progress is read.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

from measure import run_measured

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from large_session import build  # noqa: E402


def cli(args: list[str], limit_s: float, out: Path) -> tuple[int | None, float, float, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with out.open("w") as sink:
        code, elapsed, peak = run_measured(
            [sys.executable, "-m", "app", *args], ROOT, env, limit_s, sink, subprocess.DEVNULL
        )
    return code, elapsed, peak, out.read_text()


def rate(pack: Path) -> int:
    conn = sqlite3.connect(pack)
    try:
        conn.execute(
            "INSERT INTO annotations (annotator_id, verbalisation_id, fluency, adequacy, "
            "created_at, updated_at) "
            "SELECT a.id, v.id, abs(random()) % 6, abs(random()) % 3, "
            "datetime('now', '+' || v.id || ' seconds'), "
            "datetime('now', '+' || v.id || ' seconds') "
            "FROM verbalisations v, annotators a"
        )
        conn.commit()
        return int(conn.execute("SELECT count(*) FROM annotations").fetchone()[0])
    finally:
        conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=12915)
    parser.add_argument("--annotators", type=int, default=3)
    parser.add_argument("--limit-s", type=float, default=300.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        session = work / "study.taillens"
        units = build(session, args.units)
        print(f"session: {units:,} units, {units:,} texts, {session.stat().st_size / 1e6:.1f} MB")
        names = [f"annotator{n}" for n in range(1, args.annotators + 1)]
        packs = []
        for name in names:
            pack = work / f"{name}.taillens"
            code, elapsed, peak, _ = cli(
                ["annotations", "pack", "--session", str(session), "--annotator", name,
                 "--out", str(pack), "--blind", "--json"],
                args.limit_s, work / "out.txt",
            )  # fmt: skip
            print(
                f"pack {name}: {elapsed:6.1f} s  peak RSS {peak:6.0f} MB  "
                f"{pack.stat().st_size / 1e6:.1f} MB  (exit {code})"
            )
            print(f"  rated {rate(pack):,} texts in the pack (SQL)")
            packs.append(str(pack))
        for label in ("merge", "merge again"):
            code, elapsed, peak, output = cli(
                ["annotations", "merge", "--session", str(session), *packs, "--json"],
                args.limit_s, work / "out.txt",
            )  # fmt: skip
            added = sum(r["added"] for r in json.loads(output)) if code == 0 else None
            print(
                f"{label} {len(packs)} packs: {elapsed:6.1f} s  peak RSS {peak:6.0f} MB  "
                f"added {added}  (exit {code})"
            )
        # Each pack's merge is one recorded edit: undo and redo of the last one (every
        # rating it added) through the history, as the window's Edit menu does.
        code, _elapsed, _peak, output = cli(
            ["history", "--session", str(session), "--kind", "pack merge", "--json"],
            args.limit_s, work / "out.txt",
        )  # fmt: skip
        merges = json.loads(output) if code == 0 else []
        size = session.stat().st_size / 1e6
        print(f"history: {len(merges)} pack merges recorded; session {size:.1f} MB")
        if merges:
            for action in ("--undo", "--redo"):
                code, elapsed, peak, _ = cli(
                    ["history", "--session", str(session), action, str(merges[-1]["id"])],
                    args.limit_s, work / "out.txt",
                )  # fmt: skip
                print(
                    f"history {action} of one merge: {elapsed:6.1f} s  peak RSS {peak:6.0f} MB  "
                    f"(exit {code})"
                )
        code, elapsed, peak, output = cli(
            ["annotations", "progress", "--session", str(session), "--json"],
            args.limit_s, work / "out.txt",
        )  # fmt: skip
        team = json.loads(output) if code == 0 else {}
        print(
            f"progress: {elapsed:6.1f} s  peak RSS {peak:6.0f} MB  alpha fluency "
            f"{team.get('alpha_fluency')}  (exit {code})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
