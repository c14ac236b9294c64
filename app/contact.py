"""The contact named in the User-Agent: kept in the app's settings, asked for once.

Wikimedia's User-Agent policy asks every client of the public Wikidata Query Service to
name a contact. TailLens never makes one up: it sends the contact the user gave
(Preferences / this setting, ``--contact`` or ``$TAILLENS_CONTACT``), else a User-Agent
saying that none was given. The first time a live Wikidata fetch starts without one, the
GUI asks for it once, explaining why (``ask_contact``), and keeps the answer.
"""

from __future__ import annotations

from typing import Any

CONTACT_KEY = "network/contact"  # Preferences may edit the same key
ASKED_KEY = "network/contact_asked"


def stored_contact(settings: Any) -> str | None:
    """The contact kept in ``settings`` (a QSettings), or None."""
    value = settings.value(CONTACT_KEY, "") if settings is not None else ""
    return value.strip() if isinstance(value, str) and value.strip() else None


def ask_contact(parent: Any) -> str | None:
    """A dialog that explains why a contact is wanted and asks for one; None when the user
    declines (the fetch then goes ahead, saying honestly that no contact was given)."""
    from PySide6.QtWidgets import QInputDialog, QLineEdit

    from core.wikidata.endpoint import CONTACT_WHY

    text, ok = QInputDialog.getText(
        parent,
        "Contact for Wikidata",
        CONTACT_WHY + "\n\nYour e-mail address or web page (asked once; leave empty to go "
        "on without one, which the service may refuse):",
        QLineEdit.EchoMode.Normal,
        "",
    )
    return (text.strip() or None) if ok else None


def contact_for_live(
    settings: Any, spec: str, parent: Any = None, ask: Any = ask_contact
) -> str | None:
    """The contact to use for ``spec``: the stored one, else ``$TAILLENS_CONTACT``; for the
    public Wikidata service with neither, ``ask`` once (the answer and the fact that we asked
    are stored, so the question is never repeated)."""
    from core.wikidata.open_source import contact_for, needs_contact

    contact = stored_contact(settings)
    if not needs_contact(spec, contact) or settings is None:
        return contact_for(contact)
    if settings.value(ASKED_KEY, False) in (True, "true"):
        return None
    given = (ask(parent) or "").strip() or None
    if given:
        from core.wikidata.endpoint import check_header_value

        check_header_value(given, "The contact")  # refused: asked again next time
        settings.setValue(CONTACT_KEY, given)
    settings.setValue(ASKED_KEY, True)
    return given
