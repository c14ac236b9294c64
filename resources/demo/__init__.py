"""The synthetic Wikidata-shaped demo snapshot (see README.md)."""

from pathlib import Path

SNAPSHOT_PATH = Path(__file__).with_name("wikidata-demo.nt.gz")
