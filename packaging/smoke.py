"""Smoke test of a built bundle: what a user does first, from another folder.

    python packaging/smoke.py dist/taillens [--data auto|small|FILE]

Runs the bundle's ``taillens`` from a fresh temporary folder with a fresh ``HOME`` and
``TAILLENS_HOME`` (and ``QT_QPA_PLATFORM=offscreen``), asking for each feature of the
base install: ``--version`` (timed), ``gui --screenshot`` (a non-empty PNG; the first
window's time), ``import`` of TailNLG, ``verbalise --model template``, ``score`` with the
default set (every metric that needs no model weights computed, METEOR where WordNet is
on the machine; the model metrics a one-line note naming what this install can take),
``score`` of a model metric alone (exit 2: nothing scored), ``export`` in every unit
format and the per-text table as CSV, JSON Lines and Parquet, ``report --html`` with
figures in PNG, SVG and PDF (matplotlib's font list kept in the user's cache folder),
``annotations pack`` and ``merge``. Prints each step's exit status and time and the list
of features exercised; exits 1 if any step fails.

``--data``: ``auto`` (default) imports TailNLG from ``$TAILLENS_DATA/tailnlg`` or
``shared/data/tailnlg`` beside the checkout, else a small TailNLG-shaped file this script
writes; ``small`` always that small file (the test: seconds, not minutes); or a file.
Standard library only: it runs beside a bundle without TailLens installed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
# What the base install does without model weights (core.metrics, core.formats): the
# smoke asks the bundle for each. A test holds these lists to the code's registries.
MODEL_FREE_METRICS = ("bleu", "chrf++", "ter", "rouge1", "rouge2", "rougeL", "esa", "hallucination")
EXPORT_FORMATS = (
    ("tailnlg", ".xml"),
    ("webnlg", ".xml"),
    ("wdv", ".json"),
    ("turtle", ".ttl"),
    ("ntriples", ".nt"),
    ("csv", ".csv"),
)
TEXT_TABLES = (".csv", ".jsonl", ".parquet")
FIGURE_FORMATS = ("png", "svg", "pdf")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# A model metric absent from the bundle says this (core.heavy.FULL_INSTALL).
FULL_INSTALL = "needs the full install"

_ENTRY = """    <entry category="{category}" eid="Id{n}" shape="" shape_type="chain" size="{size}" \
unique_id="SMOKE{n}" qid="Q{qid}" type="{type}" subtype="{subtype}">
      <modifiedtripleset>
        <mtriple>{subject} | occupation | {job}</mtriple>{second}
      </modifiedtripleset>
      <lex quality="gold" lid="Id1" lang="en">{subject} is a {job} from {country}.</lex>
      <lex quality="silver" lid="Id2" lang="en">{subject} works as a {job}; {country}.</lex>
      <lex quality="gold" lid="Id3" lang="it">{subject} è un {job} di {country}.</lex>
      <lex quality="gold" lid="Id4" lang="es">{subject} es un {job} de {country}.</lex>
    </entry>
"""
_PEOPLE = (
    ("Ada Lovelace", "mathematician", "United Kingdom", "head", "head"),
    ("Marie Curie", "physicist", "France", "head", "head"),
    ("Alan Turing", "computer scientist", "United Kingdom", "head", "head"),
    ("Maidarzhavyn Ganzorig", "research cosmonaut", "Mongolia", "long_tail", "long_tail_en"),
    ("Ericailcane", "street artist", "Italy", "long_tail", "long_tail_it"),
    ("Lucia Joyce", "dancer", "Ireland", "long_tail", "long_tail_es"),
)


def small_tailnlg(path: Path) -> Path:
    """A TailNLG-shaped file: head and long-tail entries, gold and silver references."""
    entries = "".join(
        _ENTRY.format(
            n=n,
            qid=1000 + n,
            category="Person",
            subject=subject,
            job=job,
            country=country,
            type=kind,
            subtype=subtype,
            # Every other unit has one triple: the WDV format holds only those.
            size=1 + n % 2,
            second=(
                f"\n        <mtriple>{subject} | country of citizenship | {country}</mtriple>"
                if n % 2
                else ""
            ),
        )
        for n, (subject, job, country, kind, subtype) in enumerate(_PEOPLE, start=1)
    )
    path.write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n<benchmark>\n  <entries>\n'
        f"{entries}  </entries>\n</benchmark>\n",
        encoding="utf-8",
    )
    return path


def _wordnet() -> str:
    """A WordNet folder on this machine for METEOR (Debian's wordnet-base, or
    ``$TAILLENS_WORDNET``), else ""."""
    for folder in (os.environ.get("TAILLENS_WORDNET", ""), "/usr/share/wordnet"):
        if folder and (Path(folder) / "data.noun").is_file():
            return folder
    return ""


def find_tailnlg() -> Path | None:
    """TailNLG where the project's one data resolver finds it (``tests/shared_data.py``:
    ``$TAILLENS_DATA``, else ``shared/data`` beside the checkout), else None."""
    if str(REPOSITORY) not in sys.path:
        sys.path.insert(0, str(REPOSITORY))
    from tests.shared_data import TAILNLG, data_path

    path = data_path(*TAILNLG)
    return path if path.is_file() else None


class Smoke:
    def __init__(self, executable: Path, folder: Path, timeout: float) -> None:
        self.executable = executable
        self.folder = folder
        self.timeout = timeout
        self.failures: list[str] = []
        self.env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("PYTHON", "QT_", "TAILLENS", "XDG_", "VIRTUAL_ENV"))
        }
        self.env.update(
            HOME=str(folder / "home"),
            TAILLENS_HOME=str(folder / "home" / "taillens"),
            QT_QPA_PLATFORM="offscreen",
        )
        (folder / "home").mkdir()

    def run(self, name: str, *args: str, check: str = "", code: int = 0) -> tuple[float, str]:
        """Run ``taillens ARGS`` in the folder; print status and time; a failure is kept.
        ``check``: a text the output must contain; ``code``: the exit status expected."""
        start = time.perf_counter()
        try:
            done = subprocess.run(
                [str(self.executable), *args],
                cwd=self.folder,
                env=self.env,
                capture_output=True,
                text=True,
                timeout=self.timeout,
            )
            status, output = done.returncode, done.stdout + done.stderr
        except subprocess.TimeoutExpired as error:
            status, output = -1, f"timed out after {self.timeout:.0f} s\n{error.stdout or ''}"
        seconds = time.perf_counter() - start
        ok = status == code and check in output
        print(
            f"{'ok  ' if ok else 'FAIL'} {name:<15} exit {status:>3}  {seconds:6.2f} s", flush=True
        )
        if not ok:
            missing = f" (no {check!r} in the output)" if status == code else ""
            self.failures.append(f"{name}: exit {status}{missing}")
            print("     " + output.strip()[-3000:].replace("\n", "\n     "), flush=True)
        return seconds, output

    def expect(self, name: str, condition: bool, what: str) -> None:
        if not condition:
            self.failures.append(f"{name}: {what}")
            print(f"FAIL {name:<15} {what}", flush=True)


def smoke(bundle: Path, data: str, timeout: float) -> int:
    executable = bundle / "taillens"
    if not executable.is_file():
        print(f"smoke: no taillens executable in {bundle}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="taillens-smoke-") as temp:
        folder = Path(temp)
        s = Smoke(executable.resolve(), folder, timeout)
        features: list[str] = []
        times = [s.run("--version", "--version", check="taillens")[0] for _ in range(3)]
        print(f"     --version: median {statistics.median(times):.3f} s of {len(times)} runs")

        first_window, _ = s.run("gui", "gui", "--screenshot", "shot.png", "--size", "1280x800")
        print(f"     first window (gui --screenshot): {first_window:.2f} s")
        features.append("window (offscreen screenshot)")
        shot = folder / "shot.png"
        s.expect(
            "gui",
            shot.is_file() and shot.read_bytes()[:8] == PNG_MAGIC and shot.stat().st_size > 1000,
            "shot.png is not a non-empty PNG",
        )
        if os.environ.get("TAILLENS_SMOKE_SHOT") and shot.is_file():
            shutil.copyfile(shot, os.environ["TAILLENS_SMOKE_SHOT"])

        source = Path(data) if data not in ("auto", "small") else None
        if data == "auto":
            source = find_tailnlg()
        if source is None:
            source = small_tailnlg(folder / "tailnlg-small.xml")
        print(f"     data: {source}")
        session = "smoke.taillens"
        s.run("import", "import", "--session", session, str(source), "--quiet")
        s.run("verbalise", "verbalise", "--session", session, "--model", "template", "--quiet")
        features.append("import (TailNLG XML)")
        features.append("verbalise (templates)")

        # Every metric that needs no model weights, with the default set; the model
        # metrics in it (BERTScore, similarity) are one-line notes in the bundle.
        wordnet = _wordnet()
        if wordnet:
            s.env["TAILLENS_WORDNET"] = wordnet
        _, output = s.run("score", "score", "--session", session, "--quiet", "--json")
        try:
            scored = json.loads(output[: output.rindex("}") + 1])
        except ValueError:
            scored = {"corpus": [], "notes": []}
        computed = {row["metric"] for row in scored["corpus"] if row["value"] is not None}
        wanted = set(MODEL_FREE_METRICS) | ({"meteor"} if wordnet else set())
        s.expect("score", wanted <= computed, f"not computed: {sorted(wanted - computed)}")
        s.expect("score", "Traceback" not in output, "a traceback in score's output")
        s.expect(
            "score",
            any(FULL_INSTALL in note for note in scored["notes"]),
            f"no {FULL_INSTALL!r} note for model metrics",
        )
        s.expect(
            "score",
            any("has no model stack" in note for note in scored["notes"]),
            "the note does not say what this install (the bundle) can and cannot take",
        )
        features.append("score: " + ", ".join(sorted(computed & wanted)))
        if not wordnet:
            print("     meteor: no WordNet on this machine (wordnet-base), not asked for")
        # A script can tell that nothing was scored.
        s.run(
            "score-none",
            *("score", "--session", session, "--metrics", "bertscore", "--quiet"),
            code=2,
            check="nothing scored",
        )
        features.append("score exit 2 when nothing can be computed")

        for name, suffix in EXPORT_FORMATS:
            target = f"units-{name}{suffix}"
            s.run(f"export {name}", "export", "--session", session, "--format", name, target)
            s.expect(f"export {name}", (folder / target).is_file(), f"no {target}")
        features.append("export units: " + ", ".join(name for name, _ in EXPORT_FORMATS))
        for suffix in TEXT_TABLES:
            target = f"texts{suffix}"
            s.run(f"texts {suffix}", "export", "--session", session, "--texts", target)
            written = folder / target
            s.expect(f"texts {suffix}", written.is_file() and written.stat().st_size > 0, target)
        parquet = folder / "texts.parquet"
        s.expect(
            "texts .parquet",
            parquet.is_file() and parquet.read_bytes()[:4] == b"PAR1",
            "texts.parquet is not Parquet",
        )
        features.append("export texts: " + ", ".join(TEXT_TABLES))

        s.run(
            "report",
            *("report", "--session", session, "--html", "report.html"),
            *("--figures", "figures", "--figure-format", ",".join(FIGURE_FORMATS)),
        )
        html = folder / "report.html"
        s.expect("report", html.is_file() and "<svg" in html.read_text("utf-8"), "no plots")
        figures = folder / "figures"
        for suffix in FIGURE_FORMATS:
            s.expect(
                "report",
                figures.is_dir() and any(figures.glob(f"*.{suffix}")),
                f"no .{suffix} figure in figures/",
            )
        features.append("report HTML, figures: " + ", ".join(FIGURE_FORMATS))
        # Matplotlib's font list is kept in the user's cache folder between runs
        # (packaging/rth_mplconfig.py), not rebuilt in a temporary folder every time.
        fonts = folder / "home" / "taillens" / "cache" / "matplotlib"  # TAILLENS_HOME/cache
        s.expect("report", any(fonts.glob("fontlist-*.json")), f"no font list in {fonts}")

        s.run(
            "pack",
            *("annotations", "pack", "--session", session, "--annotator", "smoke"),
            *("--out", "pack.taillens"),
        )
        s.run(
            "merge",
            *("annotations", "merge", "--session", session, "pack.taillens"),
            check="nothing new",
        )
        features.append("annotation pack and merge")
        print("smoke: features exercised: " + "; ".join(features))
        if s.failures:
            print(f"smoke: {len(s.failures)} failed: " + "; ".join(s.failures))
            return 1
        print("smoke: every step passed")
        return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle", type=Path, help="the bundle folder (dist/taillens)")
    parser.add_argument("--data", default="auto", help="auto (default), small, or a file")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per step (default 600)")
    args = parser.parse_args()
    return smoke(args.bundle, args.data, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
