"""ESA against WebNLG 2020's metrics and human judgments: the ESA paper's Table 3 row.

Run: ``PYTHONPATH=$PWD .venv/bin/python benchmarks/esa_table3_webnlg2020.py [--cache DIR]
[--configs paper,taillens]``.

Everything goes through the app's own commands, as a user would run them on the data as
published (``../shared/data/webnlg2020``): ``taillens import`` of the test set,
``import-outputs`` of the 16 systems' ``primary.en``, ``import-judgments`` of the
human-evaluation folder, ``score --metrics bleu,chrf++`` once, then for each ESA
configuration ``score --metrics esa --esa-config NAME`` and ``correlate --matrix --json``.
With ``--cache DIR`` the session with BLEU, chrF++ and the judgments is built once into
``DIR/table3-base.taillens`` and reused (each configuration scores a copy).

Printed per configuration: Pearson over the judged texts with at least one undetected
entity (the paper's row), its n (paper 470), each entry beside the paper's and the
difference; then the ≥2 and all-texts rows.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests import shared_data  # noqa: E402

PAPER = {
    "bleu:gold": 0.41,
    "chrf++:gold": 0.45,
    "webnlg:correctness": 0.56,
    "webnlg:data_coverage": 0.57,
    "webnlg:fluency": 0.41,
    "webnlg:relevance": 0.53,
    "webnlg:text_structure": 0.36,
}


def cli(*args: str) -> str:
    from app.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main([*args])
    if status != 0:
        raise SystemExit(f"taillens {' '.join(args)} failed ({status})")
    return out.getvalue()


def build(path: Path) -> None:
    test = shared_data.benchmark_input(*shared_data.WEBNLG2020_TEST)
    submissions = shared_data.benchmark_input(*shared_data.WEBNLG2020_SUBMISSIONS)
    human = shared_data.benchmark_input(*shared_data.WEBNLG2020_HUMAN)
    cli("import", str(test), "--session", str(path))
    for output in sorted(submissions.glob("*/primary.en")):
        cli("import-outputs", str(output), "--system", output.parent.name, "--session", str(path))
    cli("score", "--session", str(path), "--metrics", "bleu,chrf++", "--quiet")
    print(cli("import-judgments", str(human), "--session", str(path)).splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path)
    parser.add_argument("--configs", default="paper,taillens")
    args = parser.parse_args()
    from core.agreement.matrix import column_label

    work = Path(tempfile.mkdtemp(prefix="taillens-table3-"))
    try:
        base = (args.cache or work) / "table3-base.taillens"
        if not base.exists():
            base.parent.mkdir(parents=True, exist_ok=True)
            build(base)
        for config in args.configs.split(","):
            session = work / f"{config}.taillens"
            shutil.copyfile(base, session)
            cli(
                "score",
                "--session",
                str(session),
                "--metrics",
                "esa",
                "--esa-config",
                config,
                "--quiet",
            )
            result = json.loads(
                cli(
                    "correlate",
                    "--session",
                    str(session),
                    "--matrix",
                    "--json",
                    "--quiet",
                    "--against",
                    ",".join(PAPER),
                )
            )
            cells = {(c["subset"], c["column"]): c for c in result["cells"]}
            row_n = {r["subset"]: r["n"] for r in result["row_n"]}
            print(f"\nESA configuration {config!r}: Pearson, judged texts")
            heads = [column_label(c) for c in PAPER]
            print(f"{'':<22} {'n':>5} " + " ".join(f"{h:>13}" for h in heads))
            print(
                f"{'paper, ≥1 undetected':<22} {470:>5} "
                + " ".join(f"{v:>13.2f}" for v in PAPER.values())
            )
            for subset in ("≥1 undetected", "≥2 undetected", "all texts"):
                values = [cells[(subset, c)]["pearson"] for c in PAPER]
                print(f"{subset:<22} {row_n[subset]:>5} " + " ".join(f"{v:>13.3f}" for v in values))
            diffs = [cells[("≥1 undetected", c)]["pearson"] - p for c, p in PAPER.items()]
            print(f"{'≥1 minus paper':<22} {'':>5} " + " ".join(f"{d:>+13.3f}" for d in diffs))
            within = sum(abs(d) <= 0.03 for d in diffs)
            print(f"within 0.03 of the paper: {within} of {len(diffs)}")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
