"""WDV's crowd figures recomputed by TailLens (METHODS §9), beside what WDV stored.

Run: ``.venv/bin/python benchmarks/wdv.py FILE [--partition NAME]``. FILE is either a WDV
JSON file (an array of records, as released on figshare) or the CSV of the WDV repository's
crowdsourced campaign (``crowdsourced_campaign_sampled_df_verbalised_english.csv``: one row
per claim with the five ``fluency`` and ``adequacy`` votes and WDV's own ``fluency_mean``,
``fluency_median``, ``adequacy_maj``, ``adequacy_perc``). A CSV is turned into WDV records
in a temporary folder; either way the records are imported into a fresh session with
``import_wdv`` and aggregated with ``aggregate_annotations``, the app's own path.

Printed: per-item agreement with the figures stored in the file (how many items differ,
field by field: the check that the aggregation is WDV's), then the group figures of each
partition (WebNLG seen / unseen / Wikidata unseen, from the record's ``theme_group`` or its
theme) and overall: items, fluency mean and median, adequacy percentage (share of Yes, 0
when the majority is Not sure), share of items whose majority is Yes, unweighted and
weighted by ``sampling_weight``. Compare them with Table 3 of the WDV paper (Amaral et al.,
2022). The file is read where it is; nothing is written into the repository.
"""

from __future__ import annotations

import argparse
import ast
import csv
import json
import math
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.annotation import aggregate_annotations, aggregates  # noqa: E402
from core.formats.wdv.importer import import_wdv  # noqa: E402
from core.store import SessionStore  # noqa: E402

# WDV's partitions by theme (the themes its bad-quality analysis files list per partition);
# a record's own ``theme_group`` wins when it has one.
PARTITIONS = {
    "WEBNLG_SEEN": (
        "Airport",
        "Astronaut",
        "Building",
        "City",
        "ComicsCharacter",
        "Food",
        "Monument",
        "SportsTeam",
        "University",
        "WrittenWork",
    ),
    "WEBNLG_UNSEEN": ("Athlete", "Artist", "CelestialBody", "MeanOfTransportation", "Politician"),
}
THEME_PARTITION = {theme: name for name, themes in PARTITIONS.items() for theme in themes}
OTHER = "WIKIDATA_UNSEEN"
FIELDS = ("fluency_mean", "fluency_median", "adequacy_majority_voted", "adequacy_percentage")


def _votes(text: str) -> list[int]:
    value = ast.literal_eval(text) if text.strip() else []
    return [int(v) for v in value]


def _number(text: str) -> float | None:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def csv_records(path: Path) -> list[dict[str, Any]]:
    """The repository CSV's rows as WDV records (the fields import needs, and WDV's own
    aggregates under the release's names)."""
    records = []
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            fluency, adequacy = _votes(row["fluency"]), _votes(row["adequacy"])
            records.append(
                {
                    "claim_id": row["claim_id"],
                    "rank": row.get("rank"),
                    "subject_id": row["entity_id"],
                    "property_id": row["property_id"],
                    "subject_label": row["entity_label"],
                    "property_label": row["property_label"],
                    "object_label": row["object_label"],
                    "theme_label": row.get("theme_entity_label"),
                    "theme_group": row.get("theme_group") or None,
                    "verbalisation": row.get("processed_verbalisation") or row["verbalisation"],
                    "sampling_weight": _number(row.get("sampling_weight", "")),
                    "annotations": {
                        "fluency_scores": fluency,
                        "fluency_mean": _number(row.get("fluency_mean", "")),
                        "fluency_median": _number(row.get("fluency_median", "")),
                        "adequacy_scores": adequacy,
                        "adequacy_majority_voted": int(row["adequacy_maj"])
                        if row.get("adequacy_maj", "").strip()
                        else None,
                        "adequacy_percentage": _number(row.get("adequacy_perc", "")),
                    },
                }
            )
    return records


def load_records(path: Path) -> list[dict[str, Any]]:
    if path.suffix.lower() == ".csv":
        return csv_records(path)
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def partition_of(record: dict[str, Any]) -> str:
    return record.get("theme_group") or THEME_PARTITION.get(
        str(record.get("theme_label") or ""), OTHER
    )


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument(
        "--partition",
        help="only records of this partition (e.g. WEBNLG_SEEN, WEBNLG_UNSEEN, WIKIDATA_UNSEEN)",
    )
    args = parser.parse_args()
    records = [
        r
        for r in load_records(args.file)
        if isinstance(r, dict)
        and r.get("annotations")
        and (r["annotations"].get("adequacy_scores") or r["annotations"].get("fluency_scores"))
    ]
    if args.partition:
        records = [r for r in records if partition_of(r) == args.partition]
    if not records:
        print(
            f"{args.file}: no annotated records"
            + (f" in {args.partition}" if args.partition else "")
        )
        return 1
    print(
        f"$ python benchmarks/wdv.py {args.file}"
        + (f" --partition {args.partition}" if args.partition else "")
    )
    # 1. Per item: our aggregates against the ones WDV stored.
    differ: Counter[str] = Counter()
    stored = Counter()
    for record in records:
        notes = record["annotations"]
        ours = aggregates(notes.get("fluency_scores", []), notes.get("adequacy_scores", []))
        for name in FIELDS:
            if notes.get(name) is not None:
                stored[name] += 1
                if not _same(notes[name], ours[name]):
                    differ[name] += 1
    print(f"{len(records)} annotated records")
    for name in FIELDS:
        print(
            f"  {name:<26} {stored[name] - differ[name]:>5} of {stored[name]:>5} stored "
            f"values equal ours ({differ[name]} differ)"
        )
    # 2. Group figures through the app's own path: import, then aggregate by partition.
    with tempfile.TemporaryDirectory() as folder:
        for record in records:
            record["theme_label"] = partition_of(record)  # the group the summary uses
        source = Path(folder) / "wdv.json"
        source.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
        with SessionStore.create(Path(folder) / "wdv.taillens") as store:
            report = import_wdv(store, source)
            if report.errors:
                print(f"  import: {report.summary_line()}")
            plain = aggregate_annotations(store, by=("category",), agreement=False)
            weighted = aggregate_annotations(
                store, by=("category",), agreement=False, weighted=True
            )
    print()
    print(
        f"{'partition':<18} {'items':>5}  {'fluency':>7} {'median':>6} {'adeq%':>6} "
        f"{'maj Yes':>7} | weighted: {'fluency':>7} {'median':>6} {'adeq%':>6} "
        f"{'maj Yes':>7}"
    )
    for group, heavy in zip(
        [*plain.groups, plain.overall], [*weighted.groups, weighted.overall], strict=True
    ):
        name = dict(group.group).get("category", "all")
        print(
            f"{name:<18} {group.items:>5}  {_fmt(group.fluency_mean):>7} "
            f"{_fmt(group.fluency_median, 2):>6} {_fmt(group.adequacy_yes):>6} "
            f"{_fmt(group.majority_yes):>7} | weighted: {_fmt(heavy.fluency_mean):>7} "
            f"{_fmt(heavy.fluency_median, 2):>6} {_fmt(heavy.adequacy_yes):>6} "
            f"{_fmt(heavy.majority_yes):>7}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
