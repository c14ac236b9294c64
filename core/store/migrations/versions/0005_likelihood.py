"""Model likelihood of entities (LINK, METHODS §3), and the ``model_tail`` sub-tier.

- ``entity_likelihoods``: the mean log-likelihood per token that a local causal model
  gives an entity's label and a short templated statement about it, one row per
  (entity, model, language). ``model`` is the model's folder as resolved when scored;
  ``model_fingerprint`` tells a model retrained in place apart (its rows are re-scored).
- ``category_members.model_tier``: 'model_tail' / 'model_head' by the likelihood
  cut-off the user drew for the category (NULL: unscored, or no cut-off drawn). Kept
  apart from ``tier``/``sub_tier`` so the Wikidata signal and the model's never
  overwrite each other.

Revision ID: 0005_likelihood
Revises: 0004
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_likelihood"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "entity_likelihoods",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("entity_id", sa.Integer(), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("model_fingerprint", sa.String(), nullable=True),
        sa.Column("lang", sa.String(), nullable=False),
        sa.Column("label", sa.Text(), nullable=False),
        sa.Column("label_loglik", sa.Float(), nullable=True),
        sa.Column("label_tokens", sa.Integer(), nullable=False),
        sa.Column("statement", sa.Text(), nullable=True),
        sa.Column("statement_loglik", sa.Float(), nullable=True),
        sa.Column("statement_tokens", sa.Integer(), nullable=True),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["entity_id"],
            ["entities.id"],
            name=op.f("fk_entity_likelihoods_entity_id_entities"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_entity_likelihoods")),
        sa.UniqueConstraint(
            "entity_id", "model", "lang", name=op.f("uq_entity_likelihoods_entity_id_model_lang")
        ),
    )
    with op.batch_alter_table("entity_likelihoods") as batch_op:
        batch_op.create_index("ix_entity_likelihoods_model_lang", ["model", "lang"], unique=False)
    with op.batch_alter_table("category_members") as batch_op:
        batch_op.add_column(sa.Column("model_tier", sa.String(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("category_members") as batch_op:
        batch_op.drop_column("model_tier")
    with op.batch_alter_table("entity_likelihoods") as batch_op:
        batch_op.drop_index("ix_entity_likelihoods_model_lang")
    op.drop_table("entity_likelihoods")
