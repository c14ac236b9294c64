"""Smoke test of a built bundle: what a desktop user does first, from another folder.

    python packaging/smoke.py dist/taillens [--data auto|small|FILE]

Runs the bundle's ``taillens`` from a fresh temporary folder with a fresh ``HOME`` and
``TAILLENS_HOME`` (and ``QT_QPA_PLATFORM=offscreen``): ``--version`` (timed), ``gui
--screenshot`` (a non-empty PNG), ``import`` of TailNLG, ``verbalise --model template``,
``score`` with the default metrics, ``report --html`` with ``--figures`` in SVG and PDF.
Prints each step's exit status and time; exits 1 if any step fails.

``--data``: ``auto`` (default) imports TailNLG from ``$TAILLENS_DATA/tailnlg`` or
``shared/data/tailnlg`` beside the checkout, else a small TailNLG-shaped file this script
writes; ``small`` always that small file (the test: seconds, not minutes); or a file.
Standard library only: it runs beside a bundle without TailLens installed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# A model metric absent from the bundle says this (core.heavy.FULL_INSTALL).
FULL_INSTALL = "needs the full install"

_ENTRY = """    <entry category="{category}" eid="Id{n}" shape="" shape_type="chain" size="2" \
unique_id="SMOKE{n}" qid="Q{qid}" type="{type}" subtype="{subtype}">
      <modifiedtripleset>
        <mtriple>{subject} | occupation | {job}</mtriple>
        <mtriple>{subject} | country of citizenship | {country}</mtriple>
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
        )
        for n, (subject, job, country, kind, subtype) in enumerate(_PEOPLE, start=1)
    )
    path.write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n<benchmark>\n  <entries>\n'
        f"{entries}  </entries>\n</benchmark>\n",
        encoding="utf-8",
    )
    return path


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

    def run(self, name: str, *args: str, check: str = "") -> tuple[float, str]:
        """Run ``taillens ARGS`` in the folder; print status and time; a failure is kept.
        ``check``: a text the output must contain."""
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
            code, output = done.returncode, done.stdout + done.stderr
        except subprocess.TimeoutExpired as error:
            code, output = -1, f"timed out after {self.timeout:.0f} s\n{error.stdout or ''}"
        seconds = time.perf_counter() - start
        ok = code == 0 and check in output
        print(f"{'ok  ' if ok else 'FAIL'} {name:<12} exit {code:>3}  {seconds:6.2f} s", flush=True)
        if not ok:
            missing = f" (no {check!r} in the output)" if code == 0 else ""
            self.failures.append(f"{name}: exit {code}{missing}")
            print("     " + output.strip()[-3000:].replace("\n", "\n     "), flush=True)
        return seconds, output

    def expect(self, name: str, condition: bool, what: str) -> None:
        if not condition:
            self.failures.append(f"{name}: {what}")
            print(f"FAIL {name:<12} {what}", flush=True)


def smoke(bundle: Path, data: str, timeout: float) -> int:
    executable = bundle / "taillens"
    if not executable.is_file():
        print(f"smoke: no taillens executable in {bundle}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="taillens-smoke-") as temp:
        folder = Path(temp)
        s = Smoke(executable.resolve(), folder, timeout)
        times = [s.run("--version", "--version", check="taillens")[0] for _ in range(3)]
        print(f"     --version: median {statistics.median(times):.3f} s of {len(times)} runs")

        s.run("gui", "gui", "--screenshot", "shot.png", "--size", "1280x800")
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
        # The default set includes BERTScore and similarity: the bundle has no model stack,
        # so each must be a one-line note, while the other metrics are computed.
        _, output = s.run("score", "score", "--session", session, "--quiet", check="bleu")
        s.expect("score", "Traceback" not in output, "a traceback in score's output")
        s.expect("score", FULL_INSTALL in output, f"no {FULL_INSTALL!r} note for model metrics")
        s.run(
            "report",
            *("report", "--session", session, "--html", "report.html"),
            *("--figures", "figures", "--figure-format", "svg,pdf"),
        )
        html = folder / "report.html"
        s.expect("report", html.is_file() and "<svg" in html.read_text("utf-8"), "no plots")
        figures = folder / "figures"
        for suffix in (".svg", ".pdf"):
            s.expect(
                "report",
                figures.is_dir() and any(figures.glob(f"*{suffix}")),
                f"no {suffix} figure in figures/",
            )
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
