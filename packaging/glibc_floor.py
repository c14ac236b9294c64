"""The oldest glibc a built bundle runs on: the highest ``GLIBC_x.y`` any of its ELF files
asks for.

    python packaging/glibc_floor.py dist/taillens [--verbose]

Reads each ELF file's version-needs section (``.gnu.version_r``) with the standard library
(no objdump or readelf needed): every shared library and the executable, wherever they sit
in the bundle. Prints the floor (e.g. ``glibc 2.28``); ``--verbose`` also lists each file
that needs more than 2.17, newest first.
"""

from __future__ import annotations

import argparse
import re
import struct
import sys
from pathlib import Path

ELF_MAGIC = b"\x7fELF"
SHT_GNU_VERNEED = 0x6FFFFFFE
GLIBC = re.compile(rb"^GLIBC_(\d+)\.(\d+)(?:\.(\d+))?$")


def glibc_needs(path: Path) -> set[tuple[int, ...]]:
    """The ``GLIBC_x.y`` versions ``path`` needs (empty for a non-ELF file)."""
    data = path.read_bytes()
    if data[:4] != ELF_MAGIC or len(data) < 64:
        return set()
    is64, endian = data[4] == 2, "<" if data[5] == 1 else ">"
    if is64:
        (shoff,) = struct.unpack_from(endian + "Q", data, 0x28)
        shentsize, shnum = struct.unpack_from(endian + "HH", data, 0x3A)
        section = endian + "IIQQQQIIQQ"
    else:
        (shoff,) = struct.unpack_from(endian + "I", data, 0x20)
        shentsize, shnum = struct.unpack_from(endian + "HH", data, 0x2E)
        section = endian + "IIIIIIIIII"
    headers = [
        struct.unpack_from(section, data, shoff + i * shentsize)
        for i in range(shnum)
        if shoff + (i + 1) * shentsize <= len(data)
    ]
    found: set[tuple[int, ...]] = set()
    for header in headers:
        if header[1] != SHT_GNU_VERNEED:
            continue
        offset, link, count = header[4], header[6], header[7]
        strings = headers[link][4] if link < len(headers) else 0
        entry = offset
        for _ in range(count):
            _version, aux_count, _file, aux, next_entry = struct.unpack_from(
                endian + "HHIII", data, entry
            )
            at = entry + aux
            for _ in range(aux_count):
                _hash, _flags, _other, name, next_aux = struct.unpack_from(
                    endian + "IHHII", data, at
                )
                start = strings + name
                text = data[start : data.index(b"\0", start)]
                match = GLIBC.match(text)
                if match:
                    found.add(tuple(int(part) for part in match.groups() if part is not None))
                if not next_aux:
                    break
                at += next_aux
            if not next_entry:
                break
            entry += next_entry
    return found


def floor(bundle: Path) -> tuple[tuple[int, ...], dict[Path, tuple[int, ...]]]:
    """The highest version over the bundle, and each ELF file's own highest."""
    per_file: dict[Path, tuple[int, ...]] = {}
    for path in sorted(bundle.rglob("*")):
        if path.is_file() and not path.is_symlink():
            needs = glibc_needs(path)
            if needs:
                per_file[path] = max(needs)
    return (max(per_file.values()) if per_file else ()), per_file


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    if not args.bundle.is_dir():
        print(f"glibc_floor: {args.bundle} is not a folder", file=sys.stderr)
        return 2
    highest, per_file = floor(args.bundle)
    if not highest:
        print("glibc_floor: no ELF file asks for a GLIBC version", file=sys.stderr)
        return 1
    if args.verbose:
        for path, version in sorted(per_file.items(), key=lambda kv: kv[1], reverse=True):
            if version > (2, 17):
                print(f"{'.'.join(map(str, version)):>6}  {path.relative_to(args.bundle)}")
    print(f"glibc {'.'.join(map(str, highest))} ({len(per_file)} ELF files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
