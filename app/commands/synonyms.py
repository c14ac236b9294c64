"""``taillens synonyms list|add|remove|import|seed``: the session's ESA synonym table
(the ESA paper's dictionary; METHODS §7). The Scores panel's "Synonyms…" editor is its
GUI twin."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.io import jsonio


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "synonyms",
        help="edit the ESA synonym table stored in a session",
        description="ESA finds an entity by its label, its aliases and the synonyms listed "
        "here (Spain / Spanish, Texas / TX, United States / U.S.). The table is symmetric "
        "and stored in the session; 'seed' copies the bundled starter set.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    listing = actions.add_parser("list", help="print the table")
    listing.add_argument("--session", type=Path, required=True)
    listing.add_argument("--entity", help="only this entity's rows")
    listing.add_argument("--json", action="store_true", help="print JSON")

    add = actions.add_parser("add", help="add one synonym of an entity")
    add.add_argument("--session", type=Path, required=True)
    add.add_argument("entity", help="the entity as labels show it (Spain, Abilene, Texas)")
    add.add_argument("synonym", help="another name of it (Spanish)")
    add.add_argument("--lang", default="", help="only in this language (default: every one)")

    remove = actions.add_parser("remove", help="remove a synonym of an entity")
    remove.add_argument("--session", type=Path, required=True)
    remove.add_argument("entity")
    remove.add_argument("synonym")
    remove.add_argument("--lang", default=None, help="only the row of this language")

    imported = actions.add_parser(
        "import",
        help="add the rows of a file (tab-separated; .csv: comma-separated)",
        description="Each line: entity, synonym and an optional language; # starts a "
        "comment. A bad row stops the import with its line and reason; nothing is stored.",
    )
    imported.add_argument("--session", type=Path, required=True)
    imported.add_argument("file", type=Path)

    seed = actions.add_parser(
        "seed",
        help="add the bundled starter set (country / demonym, "
        "US states / abbreviations, language names, units)",
    )
    seed.add_argument("--session", type=Path, required=True)

    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from core.metrics.esa import synonyms
    from core.store import SessionStore

    with SessionStore.open(args.session) as store:
        # Bad input is refused before the first-use seeding writes anything.
        if args.action == "add":
            synonyms.check_row(args.entity, args.synonym, args.lang)
        elif args.action == "import":
            synonyms.read_file(args.file)
        elif args.action == "remove":
            synonyms.check_removal(store, args.entity, args.synonym, args.lang)
        if args.action != "seed":
            added = synonyms.ensure_seeded(store, source=f"taillens synonyms {args.action}")
            if added:
                print(
                    f"(first use: the starter set's {added:,} rows were added; "
                    "remove what you do not want)",
                    file=sys.stderr,
                )
        if args.action == "list":
            rows = synonyms.list_synonyms(store, entity=args.entity)
            if args.json:
                print(
                    jsonio.dumps(
                        [
                            {
                                "entity": r.entity,
                                "synonym": r.synonym,
                                "lang": r.lang,
                                "source": r.source,
                            }
                            for r in rows
                        ],
                        indent=2,
                        ensure_ascii=False,
                    )
                )
            elif not rows:
                print(
                    "no synonyms in this session (taillens synonyms seed adds the "
                    "starter set again)"
                )
            else:
                print("entity\tsynonym\tlang\tsource")
                print("\n".join(synonyms.describe(rows)))
        elif args.action == "add":
            added = synonyms.add_synonym(
                store, args.entity, args.synonym, args.lang, source="taillens synonyms add"
            )
            print(
                f"added {args.synonym!r} as a synonym of {args.entity!r}"
                if added
                else f"{args.synonym!r} is already a synonym of {args.entity!r}"
            )
        elif args.action == "remove":
            removed = synonyms.remove_synonym(
                store, args.entity, args.synonym, args.lang, source="taillens synonyms remove"
            )
            print(f"removed {removed} row{'s' if removed != 1 else ''}")
        elif args.action == "import":
            read, added = synonyms.import_file(store, args.file, source="taillens synonyms import")
            print(
                f"{args.file.name}: {read:,} rows read, {added:,} added, "
                f"{read - added:,} already there"
            )
        elif args.action == "seed":
            total, added = synonyms.seed(store, source="taillens synonyms seed")
            print(f"starter set: {total:,} rows, {added:,} added, {total - added:,} already there")
    return 0
