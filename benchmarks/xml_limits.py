"""Time of the WebNLG reader against one huge attribute (before the size limit, 64 MB took 184 s).

Run: ``.venv/bin/python benchmarks/xml_limits.py``. For each size, a one-entry file whose
``category`` attribute holds that many bytes is imported into a fresh session; sizes at
or under ``MAX_TOKEN_BYTES`` are read (time should grow linearly), larger ones refused.
For comparison, the same file through ``ElementTree.iterparse`` (16 KiB feeds, as the
reader did before) for the sizes where that stays short.
"""

from __future__ import annotations

import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.formats import FormatError, import_webnlg  # noqa: E402
from core.formats.webnlg.reader import MAX_TOKEN_BYTES  # noqa: E402
from core.store import SessionStore  # noqa: E402

SIZES_MIB = (2, 4, 8, 15, 64)
OLD_WAY_UP_TO_MIB = 8


def write(path: Path, mib: int) -> None:
    with path.open("wb") as handle:
        handle.write(
            b'<?xml version="1.0" encoding="utf-8"?>\n<benchmark><entries>\n'
            b'<entry eid="Id1" size="1" category="'
        )
        handle.write(b"x" * (mib << 20))
        handle.write(
            b'"><modifiedtripleset><mtriple>A | p | B</mtriple></modifiedtripleset>'
            b'<lex lid="Id1">A p B.</lex></entry>\n</entries></benchmark>\n'
        )


def main() -> int:
    print(f"cap: {MAX_TOKEN_BYTES >> 20} MiB per tag")
    with tempfile.TemporaryDirectory() as folder:
        for mib in SIZES_MIB:
            source = Path(folder) / f"attr{mib}.xml"
            write(source, mib)
            with SessionStore.create(Path(folder) / f"s{mib}.taillens") as store:
                started = time.perf_counter()
                try:
                    outcome = import_webnlg(store, source).summary_line()
                except FormatError as error:
                    outcome = f"refused: {str(error)[:70]}…"
                elapsed = time.perf_counter() - started
            line = f"{mib:3d} MiB attribute: {elapsed:6.2f} s  {outcome}"
            if mib <= OLD_WAY_UP_TO_MIB:
                started = time.perf_counter()
                for _event, _element in ET.iterparse(str(source)):
                    pass
                line += f"   (ElementTree.iterparse: {time.perf_counter() - started:.2f} s)"
            print(line)
            source.unlink()
    print("command: python benchmarks/xml_limits.py")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
