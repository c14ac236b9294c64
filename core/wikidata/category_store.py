"""Categories of a session: the default table of METHODS §2, edited, plus the user's own.

A session keeps every category it has used in its ``categories`` table. Editing a
category's membership pattern is allowed (the pattern is checked and parsed before it
is saved or sent), but members found with the old pattern are not members of the new
one: saving a changed pattern drops them, and the next fetch starts again.
"""

from __future__ import annotations

from sqlalchemy import select

from core.store import SessionStore
from core.store import models as m
from core.wikidata import queries
from core.wikidata.categories import Category, UnknownCategoryError, default_categories


def session_categories(store: SessionStore | None) -> list[Category]:
    """The default categories (as edited in this session) followed by the user's own."""
    defaults = {c.name: c for c in default_categories()}
    saved: dict[str, Category] = {}
    if store is not None:
        with store.snapshot() as db:
            for name, class_qid, prop, pattern in db.execute(
                select(
                    m.Category.name,
                    m.Category.class_qid,
                    m.Category.membership_property,
                    m.Category.pattern,
                )
            ):
                try:
                    saved[name] = Category(name, class_qid, prop, pattern)
                except ValueError:
                    continue  # a row no version of TailLens would write: leave it out
    ordered = [saved.get(name, category) for name, category in defaults.items()]
    ordered += sorted((c for n, c in saved.items() if n not in defaults), key=lambda c: c.name)
    return ordered


def find_category(store: SessionStore | None, name: str) -> Category:
    for category in session_categories(store):
        if category.name.lower() == name.lower():
            return category
    known = ", ".join(c.name for c in session_categories(store))
    raise UnknownCategoryError(f"no category named {name!r}; known categories: {known}")


def check_category(category: Category) -> None:
    """Refuse (``QueryError``) a category whose pattern may not be saved: it is checked
    and parsed in the real query it goes into. No session is read."""
    queries.members_page(category, 1, 0)


def save_category(store: SessionStore, category: Category, *, source: str = "gui") -> int:
    """Add or update a category after checking its pattern, as a recorded edit from
    ``source`` (`core.edits.categories.CategoryEdit`); returns members dropped (non-zero
    when an existing category's pattern changed)."""
    from core.edits import apply_edit
    from core.edits.categories import CategoryEdit

    check_category(category)
    default_names = {c.name for c in default_categories()}
    edit = CategoryEdit(
        category.name,
        category.class_qid,
        category.membership_property,
        category.pattern,
        is_default=category.name in default_names,
    )
    apply_edit(store, edit, source=source)
    return edit.dropped


LAST_CATEGORY_KEY = "browser:category"  # session meta: the category last viewed


def remember_category(store: SessionStore, name: str) -> None:
    """Keep ``name`` as the session's category last viewed (written only when it changes)."""
    if store.get_meta(LAST_CATEGORY_KEY) != name:
        store.set_meta(LAST_CATEGORY_KEY, name)


def category_to_show(store: SessionStore, names: list[str]) -> str:
    """Which of ``names`` (not empty) to show when the session opens: the one last
    viewed, else the first the session holds members of, else the first."""
    from core.wikidata.cache import fetched_count

    name = store.get_meta(LAST_CATEGORY_KEY)
    if name in names:
        return name
    return next((n for n in names if fetched_count(store, n)), names[0])
