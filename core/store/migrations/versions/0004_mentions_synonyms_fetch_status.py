"""Entity mentions of references, the session's synonym table, fetch completeness,
server log-probabilities.

- ``reference_mentions``: the human entity mentions of a reference text (enriched
  WebNLG's ``references/reference``: entity, tag, type, words), kept for export and used
  to measure ESA's mention detection.
- ``entity_synonyms``: the ESA paper's dictionary, edited by the user and stored with
  the session; seeded from a bundled starter set (``source='starter'``). ``lang`` is
  ``''`` for "any language" so that the unique constraint holds (SQLite treats NULLs as
  distinct).
- ``categories.fetch_status`` / ``fetch_note``: whether the last fetch of a category's
  members ended complete, and why not (NULL: never fetched by a version that records it).
- ``verbalisations.token_logprobs``: per-token log-probabilities a server returned with
  the reply, so perplexity of a server run needs no local copy of the model.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "reference_mentions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("reference_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("entity", sa.Text(), nullable=False),
        sa.Column("mention", sa.Text(), nullable=False),
        sa.Column("tag", sa.String(), nullable=True),
        sa.Column("mention_type", sa.String(), nullable=True),
        sa.Column("source", sa.String(), server_default=sa.text("'import'"), nullable=False),
        sa.ForeignKeyConstraint(
            ["reference_id"],
            ["unit_references.id"],
            name=op.f("fk_reference_mentions_reference_id_unit_references"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reference_mentions")),
    )
    with op.batch_alter_table("reference_mentions") as batch_op:
        batch_op.create_index(
            batch_op.f("ix_reference_mentions_reference_id"), ["reference_id"], unique=False
        )

    op.create_table(
        "entity_synonyms",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("entity", sa.Text(), nullable=False),
        sa.Column("synonym", sa.Text(), nullable=False),
        sa.Column("lang", sa.String(), server_default=sa.text("''"), nullable=False),
        sa.Column("source", sa.String(), server_default=sa.text("'user'"), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_entity_synonyms")),
        sa.UniqueConstraint(
            "entity", "synonym", "lang", name=op.f("uq_entity_synonyms_entity_synonym_lang")
        ),
    )

    with op.batch_alter_table("categories") as batch_op:
        batch_op.add_column(sa.Column("fetch_status", sa.String(), nullable=True))
        batch_op.add_column(sa.Column("fetch_note", sa.Text(), nullable=True))

    with op.batch_alter_table("verbalisations") as batch_op:
        batch_op.add_column(sa.Column("token_logprobs", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("verbalisations") as batch_op:
        batch_op.drop_column("token_logprobs")
    with op.batch_alter_table("categories") as batch_op:
        batch_op.drop_column("fetch_note")
        batch_op.drop_column("fetch_status")
    op.drop_table("entity_synonyms")
    with op.batch_alter_table("reference_mentions") as batch_op:
        batch_op.drop_index(batch_op.f("ix_reference_mentions_reference_id"))
    op.drop_table("reference_mentions")
