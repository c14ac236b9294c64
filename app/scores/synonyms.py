"""The ESA synonym table (Scores panel ▸ Synonyms…; CLI twin: taillens synonyms): one
short write per edit through the session writer, then the table again.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.changes import Topic
from core.errors import UserFacingError

SYNONYMS_READ = "scores.synonyms"  # the table's view read (app.session_io)

if TYPE_CHECKING:
    from app.context import PanelContext
    from core.store import SessionStore
    from widgets.scores import ScoresPanel


def open_synonyms(app: PanelContext, panel: ScoresPanel) -> Any:
    """Open the editor on the session's table (its first use seeds the starter set)."""
    if app.store is None:
        return None
    dialog = panel.open_synonym_dialog()
    dialog.add_requested.connect(lambda e, s, lang: _synonyms(app, dialog, "add", e, s, lang))
    dialog.remove_requested.connect(lambda rows: _synonyms(app, dialog, "remove", rows))
    dialog.import_requested.connect(lambda path: _synonyms(app, dialog, "import", path))
    dialog.seed_requested.connect(lambda: _synonyms(app, dialog, "seed"))
    # Closed (and deleted): a read of its table on its way is not shown.
    dialog.finished.connect(lambda _result: app.reads.drop(SYNONYMS_READ))

    def reverted(entry: Any) -> None:
        """Edit ▸ Undo or Redo of a synonym edit: the table as the session holds it now."""
        from core.metrics.esa import synonyms

        if entry.kind == "synonyms" and dialog.isVisible():
            app.reads.request(
                SYNONYMS_READ,
                synonyms.list_synonyms,
                lambda rows: dialog.show_rows(
                    [(r.entity, r.synonym, r.lang, r.source) for r in rows]
                ),
            )

    for signal in (app.undo.undone, app.undo.redone):
        signal.connect(reverted)
        dialog.finished.connect(lambda _result, s=signal: s.disconnect(reverted))
    _synonyms(app, dialog, "first use")
    return dialog


def _synonyms(app: PanelContext, dialog: Any, action: str, *args: Any) -> None:
    """One short transaction on the session's synonym table, then the table again."""
    from core.metrics.esa import synonyms

    if app.store is None:
        return

    def apply(store: SessionStore) -> tuple[str, bool]:
        """(what to tell, whether the table changed): one short transaction."""
        if action == "add":
            entity, synonym, lang = args
            if synonyms.add_synonym(store, entity, synonym, lang):
                return f"Added {synonym.strip()!r} as a synonym of {entity.strip()!r}.", True
            return f"{synonym.strip()!r} is already a synonym of {entity.strip()!r}.", True
        if action == "remove":
            removed = sum(synonyms.remove_synonym(store, e, s, lang) for e, s, lang in args[0])
            return f"Removed {removed} row{'s' if removed != 1 else ''}.", True
        if action == "import":
            read, added = synonyms.import_file(store, args[0])
            return f"{Path(args[0]).name}: {read:,} rows read, {added:,} added.", True
        if action == "seed":
            total, added = synonyms.seed(store)
            return f"Starter set: {added:,} of {total:,} rows added.", True
        added = synonyms.ensure_seeded(store)  # first use
        return "", bool(added)

    def show_rows() -> None:
        # A view read (off the UI thread; a newer one supersedes it).
        app.reads.request(
            SYNONYMS_READ,
            synonyms.list_synonyms,
            lambda rows: dialog.show_rows([(r.entity, r.synonym, r.lang, r.source) for r in rows]),
        )

    def done(result: tuple[str, bool]) -> None:
        message, changed = result
        if action == "add":
            dialog.clear_fields()
        if message:
            dialog.show_message(message + " Score ESA again to use the table.")
        elif action == "first use" and changed:
            dialog.show_message(
                "First use: the starter set's rows were added; remove what you do not want."
            )
        if changed:
            app.changes.announce({Topic.SYNONYMS})
        show_rows()

    def refused(error: UserFacingError) -> None:
        dialog.show_message(str(error), error=True)
        show_rows()

    # Edits on the session's undo stack (core.metrics.esa.synonyms applies them as recorded edits).
    landed = app.undo.write(
        "the synonym table" if action == "first use" else f"the synonym table ({action})",
        apply,
        panel="scores",
        on_done=done,
        on_error=refused,
    )
    if landed is None:
        dialog.show_message("The session is busy: the change is saved as soon as it is free.")
        show_rows()
