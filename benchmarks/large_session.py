"""A large session (12,915 units by default): RDF export, opening the window and scoring:
time and peak memory.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/large_session.py [--units 12915]
        [--before TREE] [--limit-s 300] [--keep FILE] [--formats ntriples,turtle]
        [--steps paint,window,score] [--repeat 3]

Builds the session through core: the TailNLG benchmark is imported once
(tailnlg/ in the data folder), then its units (triples and references included) are
copied under new ids (``<uid>#copyN``) until there are --units of them, and one
external model run gets a verbalisation per unit. Each export then runs the real CLI
(`python -m app export OUT --session S --format F`) in a fresh process; the script
prints wall time, peak RSS (VmHWM) and file size. With --before TREE (a checkout of
older code, e.g. `git archive <commit> | tar -x -C TREE`) the same exports run with that
code too, each stopped after --limit-s seconds. --steps also times, on a fresh copy of
the session each run, `python -m app gui S --report-first-paint` (start to the first paint
of the window; peak RSS until it exits), `python -m app gui S --screenshot PNG
--wait-for-jobs 30` (the window opened offscreen until its start-up jobs end, the demo
data's loading included) and `python -m app score --session S
--metrics bleu,chrf++,esa`; --repeat runs each, the median is printed (the machine may be
shared: timings are noisy).

--texts csv,jsonl,parquet times the per-text table (`python -m app export --texts OUT
--session S`) on a copy of the session scored once with bleu,chrf++,esa (the real CLI),
rated by two annotators (synthetic ratings, SQL), its run copied --text-runs times (texts
and scores) so the table has --text-runs × --units rows; wall time, peak RSS and size.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from measure import run_measured

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.shared_data import TAILNLG as TAILNLG_PARTS  # noqa: E402
from tests.shared_data import benchmark_input, data_path  # noqa: E402

TAILNLG = data_path(*TAILNLG_PARTS)


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})") if row[1] != "id"]


def build(path: Path, units: int) -> int:
    from core.formats import import_webnlg
    from core.store import SessionStore

    with SessionStore.create(path) as store:
        import_webnlg(store, TAILNLG, flavour="tailnlg")
    conn = sqlite3.connect(path)
    try:
        base = conn.execute("SELECT count(*) FROM data_units").fetchone()[0]
        unit_cols = _columns(conn, "data_units")
        triple_cols = _columns(conn, "unit_triples")
        ref_cols = _columns(conn, "unit_references")
        copy = 0
        while conn.execute("SELECT count(*) FROM data_units").fetchone()[0] < units:
            copy += 1
            have = conn.execute("SELECT count(*) FROM data_units").fetchone()[0]
            take = min(base, units - have)
            suffix = f"#copy{copy}"
            values = ", ".join("uid || ?" if c == "uid" else c for c in unit_cols)
            conn.execute(
                f"INSERT INTO data_units ({', '.join(unit_cols)}) SELECT {values} "
                "FROM data_units WHERE uid NOT LIKE '%#copy%' ORDER BY id LIMIT ?",
                (suffix, take),
            )
            for table, cols in (("unit_triples", triple_cols), ("unit_references", ref_cols)):
                picked = ", ".join("n.id" if c == "unit_id" else f"t.{c}" for c in cols)
                conn.execute(
                    f"INSERT INTO {table} ({', '.join(cols)}) SELECT {picked} FROM {table} t "
                    "JOIN data_units o ON o.id = t.unit_id JOIN data_units n ON n.uid = o.uid || ? "
                    "WHERE o.uid NOT LIKE '%#copy%'",
                    (suffix,),
                )
        conn.execute(
            "INSERT INTO model_runs (kind, model_id, system_name, status) "
            "VALUES ('external', 'synthetic', 'benchmark', 'finished')"
        )
        run = conn.execute("SELECT max(id) FROM model_runs").fetchone()[0]
        conn.execute(
            "INSERT INTO verbalisations (run_id, unit_id, lang, candidate_index, raw_output, "
            "text, parse_ok) SELECT ?, id, 'en', 0, 'A sentence about ' || uid || '.', "
            "'A sentence about ' || uid || '.', 1 FROM data_units",
            (run,),
        )
        conn.commit()
        return int(conn.execute("SELECT count(*) FROM data_units").fetchone()[0])
    finally:
        conn.close()


def export(tree: Path, session: Path, fmt: str, out: Path, limit_s: float) -> str:
    command = [
        sys.executable,
        "-m",
        "app",
        "export",
        str(out),
        "--session",
        str(session),
        "--format",
        fmt,
        "--quiet",
    ]
    code, elapsed, peak = run_measured(
        command,
        tree,
        {**os.environ, "PYTHONPATH": str(tree)},
        limit_s,
        subprocess.DEVNULL,
        subprocess.DEVNULL,
    )
    size = out.stat().st_size / 1e6 if out.exists() else 0.0
    ended = f"exit {code}" if code is not None else f"killed after {limit_s:.0f} s"
    return f"{fmt:<9} {elapsed:7.1f} s  peak RSS {peak:7.0f} MB  {size:7.1f} MB written  ({ended})"


def timed(
    tree: Path, command: list[str], limit_s: float, repeat: int, session: Path, work: Path
) -> str:
    """Median wall time and peak RSS of ``command`` over ``repeat`` runs, each on a fresh
    copy of the session (scoring writes to it; opening may migrate it)."""
    import shutil
    import statistics

    times, peaks, codes = [], [], []
    for _ in range(repeat):
        copy = work / "run.taillens"
        shutil.copyfile(session, copy)
        argv = [a.replace("{session}", str(copy)) for a in command]
        printed = work / "stdout.txt"
        started = time.time()
        with printed.open("w") as stdout:
            code, elapsed, peak = run_measured(
                argv,
                tree,
                {**os.environ, "PYTHONPATH": str(tree), "QT_QPA_PLATFORM": "offscreen"},
                limit_s,
                stdout,
                subprocess.DEVNULL,
            )
        for line in printed.read_text().splitlines():
            if line.startswith("first_paint_wall_time="):  # --report-first-paint
                elapsed = float(line.split("=", 1)[1]) - started
        times.append(elapsed)
        peaks.append(peak)
        codes.append("killed" if code is None else str(code))
        copy.unlink(missing_ok=True)
    return (
        f"{statistics.median(times):7.1f} s  peak RSS {statistics.median(peaks):7.0f} MB"
        f"  (median of {repeat}: {', '.join(f'{t:.1f}' for t in times)} s;"
        f" exit {'/'.join(codes)})"
    )


def texts_session(tree: Path, session: Path, work: Path, runs: int, limit_s: float) -> Path:
    """A copy of ``session`` scored (bleu, chrf++, esa), rated by two annotators, with its
    run's texts and scores copied into ``runs`` runs in all: the per-text table's input."""
    import shutil

    copy = work / "texts.taillens"
    shutil.copyfile(session, copy)
    argv = [a.replace("{session}", str(copy)) for a in SCORE]
    code, elapsed, _peak = run_measured(
        argv, tree, {**os.environ, "PYTHONPATH": str(tree)}, limit_s, subprocess.DEVNULL, None
    )
    print(f"  scored the copy in {elapsed:.1f} s (exit {code})", flush=True)
    conn = sqlite3.connect(copy)
    try:
        first = conn.execute("SELECT min(id) FROM model_runs").fetchone()[0]
        for n in range(1, runs):
            conn.execute(
                "INSERT INTO model_runs (kind, model_id, system_name, status) "
                "VALUES ('external', 'synthetic', ?, 'finished')",
                (f"benchmark-{n}",),
            )
            run = conn.execute("SELECT max(id) FROM model_runs").fetchone()[0]
            conn.execute(
                "INSERT INTO verbalisations (run_id, unit_id, lang, candidate_index, "
                "raw_output, text, parse_ok) SELECT ?, unit_id, lang, candidate_index, "
                "raw_output, text, parse_ok FROM verbalisations WHERE run_id = ?",
                (run, first),
            )
            conn.execute(
                "INSERT INTO scores (metric, value, details, signature, level, "
                "verbalisation_id, run_id, lang) SELECT s.metric, s.value, s.details, "
                "s.signature, s.level, n.id, ?, s.lang FROM scores s "
                "JOIN verbalisations o ON o.id = s.verbalisation_id "
                "JOIN verbalisations n ON n.run_id = ? AND n.unit_id = o.unit_id "
                "AND n.lang = o.lang AND n.candidate_index = o.candidate_index "
                "WHERE o.run_id = ? AND s.level = 'sentence'",
                (run, run, first),
            )
        for name in ("alice", "bob"):
            conn.execute("INSERT INTO annotators (name) VALUES (?)", (name,))
            conn.execute(
                "INSERT INTO annotations (annotator_id, verbalisation_id, fluency, adequacy) "
                "SELECT a.id, v.id, abs(random()) % 6, abs(random()) % 3 FROM verbalisations v, "
                "annotators a WHERE a.name = ?",
                (name,),
            )
        conn.commit()
        texts = conn.execute("SELECT count(*) FROM verbalisations").fetchone()[0]
        scores = conn.execute("SELECT count(*) FROM scores").fetchone()[0]
    finally:
        conn.close()
    print(f"  texts table input: {texts:,} texts, {scores:,} score rows", flush=True)
    return copy


def export_texts(tree: Path, session: Path, out: Path, limit_s: float) -> str:
    command = [sys.executable, "-m", "app", "export", "--texts", str(out)]
    command += ["--session", str(session), "--quiet"]
    code, elapsed, peak = run_measured(
        command,
        tree,
        {**os.environ, "PYTHONPATH": str(tree)},
        limit_s,
        subprocess.DEVNULL,
        subprocess.DEVNULL,
    )
    size = out.stat().st_size / 1e6 if out.exists() else 0.0
    ended = f"exit {code}" if code is not None else f"killed after {limit_s:.0f} s"
    name = f"texts {out.suffix[1:]}"
    return f"{name:<13} {elapsed:7.1f} s  peak RSS {peak:7.0f} MB  {size:7.1f} MB  ({ended})"


WINDOW = [
    sys.executable,
    "-m",
    "app",
    "gui",
    "{session}",
    "--screenshot",
    "{png}",
    "--wait-for-jobs",
    "30",
]
PAINT = [sys.executable, "-m", "app", "gui", "{session}", "--report-first-paint"]
SCORE = [
    sys.executable,
    "-m",
    "app",
    "score",
    "--session",
    "{session}",
    "--metrics",
    "bleu,chrf++,esa",
    "--quiet",
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=12_915)
    parser.add_argument("--before", type=Path, help="a tree with older code to compare")
    parser.add_argument("--limit-s", type=float, default=300.0)
    parser.add_argument("--keep", type=Path, help="build the session here (kept)")
    parser.add_argument(
        "--formats", default="ntriples,turtle", help="exports to time ('' for none)"
    )
    parser.add_argument(
        "--steps",
        default="paint,window,score",
        help="also time: paint (start to the window's first paint), window "
        "(open the GUI on the session, offscreen, until its start-up "
        "jobs end and a screenshot is taken), score (bleu,chrf++,esa)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per step (median)")
    parser.add_argument(
        "--texts", default="", help="per-text table formats to time, e.g. csv,jsonl,parquet"
    )
    parser.add_argument(
        "--text-runs", type=int, default=1, help="runs of texts in the table's session"
    )
    args = parser.parse_args()
    benchmark_input(*TAILNLG_PARTS)
    print("# PYTHONPATH=$PWD python benchmarks/large_session.py " + " ".join(sys.argv[1:]))
    with tempfile.TemporaryDirectory() as folder:
        session = args.keep or Path(folder) / "large.taillens"
        if not session.exists():
            started = time.perf_counter()
            count = build(session, args.units)
            print(
                f"built {count:,} units in {time.perf_counter() - started:.1f} s "
                f"({session.stat().st_size / 1e6:.0f} MB)",
                flush=True,
            )
        trees = [("after (this tree)", ROOT)]
        if args.before:
            trees.insert(0, (f"before ({args.before})", args.before))
        for name, tree in trees:
            print(name, flush=True)
            for fmt in filter(None, args.formats.split(",")):
                out = Path(folder) / f"out-{len(name)}.{fmt}"
                print("  " + export(tree, session, fmt, out, args.limit_s), flush=True)
                out.unlink(missing_ok=True)
            if args.texts:
                scored = texts_session(tree, session, Path(folder), args.text_runs, args.limit_s)
                for fmt in filter(None, args.texts.split(",")):
                    out = Path(folder) / f"texts.{fmt}"
                    print("  " + export_texts(tree, scored, out, args.limit_s), flush=True)
                    out.unlink(missing_ok=True)
                scored.unlink()
            steps = {"paint": PAINT, "window": WINDOW, "score": SCORE}
            for step in filter(None, args.steps.split(",")):
                command = [a.replace("{png}", str(Path(folder) / "w.png")) for a in steps[step]]
                print(
                    f"  {step:<9}"
                    + timed(tree, command, args.limit_s, args.repeat, session, Path(folder)),
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
