"""One rating per annotator and item, held by the schema (``core.edits.rating_rule``).

- two unique indexes on ``annotations``: ``(annotator_id, verbalisation_id)`` and
  ``(annotator_id, reference_id)``, each over ratings only (``is_golden`` false; golden
  answers are answer keys with a rule of their own) and over rows naming that item;
- ``ratings_superseded``: the rows an older session held beyond the first for one
  annotator and item. The app always read and updated the first by id (the rating rule),
  so the others were never shown nor counted as that annotator's rating; they are moved
  here whole (their own id, fields, times, and their ``annotation_origins`` row as JSON
  when a pack merge made them), with ``kept_id`` the rating that stays, and nothing is
  deleted. A downgrade puts them back.

Revision ID: 0008_one_rating
Revises: 0007_edits
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_one_rating"
down_revision: str | Sequence[str] | None = "0007_edits"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RATING_COLUMNS = (
    "annotator_id, verbalisation_id, reference_id, fluency, adequacy, blame, blame_other, "
    "checks, error_taxonomy, corrected_text, created_at, updated_at"
)
ORIGIN_KEYS = (
    "pack_uid",
    "pack_file",
    "annotator",
    "pack_annotation_id",
    "pack_updated_at",
    "merged_at",
)
# A rating row with an earlier rating of the same annotator and item: the index it would
# break is the one of the item column it names (a damaged row naming both is checked
# against both, as the indexes check it).
EARLIER = (
    "SELECT min(b.id) FROM annotations AS b WHERE b.is_golden = 0 AND b.id < a.id "
    "AND b.annotator_id = a.annotator_id AND ("
    "(a.verbalisation_id IS NOT NULL AND b.verbalisation_id = a.verbalisation_id) OR "
    "(a.reference_id IS NOT NULL AND b.reference_id = a.reference_id))"
)


def upgrade() -> None:
    op.create_table(
        "ratings_superseded",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("kept_id", sa.Integer(), nullable=False),
        sa.Column("annotator_id", sa.Integer(), nullable=False),
        sa.Column("verbalisation_id", sa.Integer(), nullable=True),
        sa.Column("reference_id", sa.Integer(), nullable=True),
        sa.Column("fluency", sa.Integer(), nullable=True),
        sa.Column("adequacy", sa.Integer(), nullable=True),
        sa.Column("blame", sa.String(), nullable=True),
        sa.Column("blame_other", sa.Text(), nullable=True),
        sa.Column("checks", sa.JSON(), nullable=True),
        sa.Column("error_taxonomy", sa.JSON(), nullable=True),
        sa.Column("corrected_text", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("origin", sa.JSON(), nullable=True),
        sa.Column(
            "superseded_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ratings_superseded")),
    )
    op.create_index(
        op.f("ix_ratings_superseded_kept_id"), "ratings_superseded", ["kept_id"], unique=False
    )
    op.execute(
        f"INSERT INTO ratings_superseded (id, kept_id, {RATING_COLUMNS}, origin) "
        f"SELECT a.id, ({EARLIER}), "
        + ", ".join(f"a.{c.strip()}" for c in RATING_COLUMNS.split(","))
        + ", (SELECT json_object("
        + ", ".join(f"'{key}', o.{key}" for key in ORIGIN_KEYS)
        + ") FROM annotation_origins AS o WHERE o.annotation_id = a.id) "
        f"FROM annotations AS a WHERE a.is_golden = 0 AND ({EARLIER}) IS NOT NULL"
    )
    # The upgrade runs with foreign keys off (core.store.migrate): the origins of the
    # moved rows go by hand, as ON DELETE CASCADE would take them.
    op.execute(
        "DELETE FROM annotation_origins WHERE annotation_id IN (SELECT id FROM ratings_superseded)"
    )
    op.execute("DELETE FROM annotations WHERE id IN (SELECT id FROM ratings_superseded)")
    for column in ("verbalisation_id", "reference_id"):
        op.create_index(
            f"uq_annotations_rating_{column}",
            "annotations",
            ["annotator_id", column],
            unique=True,
            sqlite_where=sa.text(f"is_golden = 0 AND {column} IS NOT NULL"),
        )


def downgrade() -> None:
    for column in ("verbalisation_id", "reference_id"):
        op.drop_index(f"uq_annotations_rating_{column}", table_name="annotations")
    op.execute(
        f"INSERT INTO annotations (id, is_golden, {RATING_COLUMNS}) "
        f"SELECT id, 0, {RATING_COLUMNS} FROM ratings_superseded"
    )
    op.execute(
        f"INSERT INTO annotation_origins (annotation_id, {', '.join(ORIGIN_KEYS)}) "
        "SELECT id, "
        + ", ".join(f"json_extract(origin, '$.{key}')" for key in ORIGIN_KEYS)
        + " FROM ratings_superseded WHERE origin IS NOT NULL"
    )
    op.drop_index(op.f("ix_ratings_superseded_kept_id"), table_name="ratings_superseded")
    op.drop_table("ratings_superseded")
