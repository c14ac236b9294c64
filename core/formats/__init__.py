"""File formats a session imports from and exports to, by name.

Each registry entry is ``name -> FormatEntry(description, file_filter, function)``; an
import function returns an ``ImportReport``, an export function an ``ExportReport``; the
GUI builds its file dialogs from the descriptions and filters, the CLI its ``--format``
choices: WebNLG and TailNLG XML, WDV JSON records, RDF (Turtle, N-Triples) and CSV.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from core.formats.common import FormatError, check_readable
from core.formats.csv_export import export_csv
from core.formats.rdf import export_rdf
from core.formats.report import EntryError, ExportReport, ImportReport
from core.formats.wdv import export_wdv, import_wdv
from core.formats.webnlg.importer import import_job, import_webnlg
from core.formats.webnlg.writer import export_job, export_webnlg


class FormatEntry(NamedTuple):
    description: str
    file_filter: str  # Qt file-dialog syntax, e.g. "TailNLG XML (*.xml)"
    function: Callable[..., Any]


IMPORT_FORMATS: dict[str, FormatEntry] = {
    "tailnlg": FormatEntry(
        "TailNLG XML (WebNLG with Spanish/Italian triples and gold/silver references)",
        "TailNLG XML (*.xml)",
        partial(import_webnlg, flavour="tailnlg"),
    ),
    "webnlg": FormatEntry(
        "WebNLG XML", "WebNLG XML (*.xml)", partial(import_webnlg, flavour="webnlg")
    ),
    "wdv": FormatEntry(
        "WDV JSON records (Wikidata claims with crowd-rated verbalisations)",
        "WDV JSON (*.json)",
        import_wdv,
    ),
}

EXPORT_FORMATS: dict[str, FormatEntry] = {
    "tailnlg": FormatEntry(
        "TailNLG XML", "TailNLG XML (*.xml)", partial(export_webnlg, flavour="tailnlg")
    ),
    "webnlg": FormatEntry(
        "WebNLG XML", "WebNLG XML (*.xml)", partial(export_webnlg, flavour="webnlg")
    ),
    "wdv": FormatEntry("WDV JSON records (single-triple units)", "WDV JSON (*.json)", export_wdv),
    "turtle": FormatEntry(
        "RDF Turtle (Wikidata statements and TailLens vocabulary)",
        "Turtle (*.ttl)",
        partial(export_rdf, fmt="turtle"),
    ),
    "ntriples": FormatEntry(
        "RDF N-Triples (Wikidata statements and TailLens vocabulary)",
        "N-Triples (*.nt)",
        partial(export_rdf, fmt="nt"),
    ),
    "csv": FormatEntry("CSV, one row per unit", "CSV (*.csv)", export_csv),
}


def detect_format(path: Path | str) -> str:
    """The import format name for ``path`` from its first bytes (a folder: from its first
    ``.xml`` file, in name order); FormatError if none fits."""
    path = Path(path).expanduser()
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix.lower() == ".xml" and p.is_file())
        if not files:
            raise FormatError(f"Cannot import {path}: the folder holds no .xml files.")
        return detect_format(files[0])
    check_readable(path, "Give a WebNLG/TailNLG XML file, a folder of them, or a WDV JSON file.")
    try:
        with path.open("rb") as handle:
            head = handle.read(65536)
    except OSError as exc:
        raise FormatError(f"Cannot read {path.name}: {exc.strerror or exc}.") from exc
    if b"<benchmark" in head:
        # TailNLG's entries carry unique_id and its lex elements a quality.
        return "tailnlg" if b"unique_id=" in head or b"quality=" in head else "webnlg"
    # WDV is a JSON array of records; the first record names its claim near the start.
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"[") and b'"claim_id"' in head:
        return "wdv"
    raise FormatError(
        f"Cannot tell the format of {path.name}: it does not look like WebNLG or TailNLG XML "
        "(no <benchmark> element near the start) or WDV JSON (no array of records with "
        "claim_id). Choose the format explicitly."
    )


__all__ = [
    "EXPORT_FORMATS",
    "IMPORT_FORMATS",
    "EntryError",
    "ExportReport",
    "FormatEntry",
    "FormatError",
    "ImportReport",
    "detect_format",
    "export_csv",
    "export_job",
    "export_rdf",
    "export_wdv",
    "export_webnlg",
    "import_job",
    "import_wdv",
    "import_webnlg",
]
