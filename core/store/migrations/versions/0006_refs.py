"""References made by machine (METHODS §11, TailNLG §3.4 and Appendix F).

- ``reference_derivations``: one row per silver reference translated from another: the
  source reference and languages, the model, its fingerprint and parameters (``key``
  identifies them, for resuming), the raw translation, the quality estimate (score, band,
  error spans, QE model) and the post-edit (text, explanation, model, raw reply) with
  which version the reference's text now is (``kept``).

Revision ID: 0006_refs
Revises: 0006_packs
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_refs"
down_revision: str | Sequence[str] | None = "0006_packs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "reference_derivations",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("reference_id", sa.Integer(), nullable=False),
        sa.Column("source_reference_id", sa.Integer(), nullable=True),
        sa.Column("source_lang", sa.String(), nullable=False),
        sa.Column("lang", sa.String(), nullable=False),
        sa.Column("step", sa.String(), server_default=sa.text("'translate'"), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("model_fingerprint", sa.String(), nullable=True),
        sa.Column("parameters", sa.JSON(), nullable=True),
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("mt_text", sa.Text(), nullable=False),
        sa.Column("qe_score", sa.Float(), nullable=True),
        sa.Column("qe_band", sa.String(), nullable=True),
        sa.Column("qe_spans", sa.JSON(), nullable=True),
        sa.Column("qe_model", sa.String(), nullable=True),
        sa.Column("postedit_text", sa.Text(), nullable=True),
        sa.Column("postedit_explanation", sa.Text(), nullable=True),
        sa.Column("postedit_model", sa.String(), nullable=True),
        sa.Column("postedit_raw", sa.Text(), nullable=True),
        sa.Column("kept", sa.String(), server_default=sa.text("'mt'"), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["reference_id"],
            ["unit_references.id"],
            name=op.f("fk_reference_derivations_reference_id_unit_references"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["source_reference_id"],
            ["unit_references.id"],
            name=op.f("fk_reference_derivations_source_reference_id_unit_references"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reference_derivations")),
        sa.UniqueConstraint(
            "source_reference_id",
            "lang",
            "key",
            name=op.f("uq_reference_derivations_source_reference_id_lang_key"),
        ),
    )
    with op.batch_alter_table("reference_derivations", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_reference_derivations_reference_id"), ["reference_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_reference_derivations_source_reference_id"),
            ["source_reference_id"],
            unique=False,
        )


def downgrade() -> None:
    with op.batch_alter_table("reference_derivations", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_reference_derivations_source_reference_id"))
        batch_op.drop_index(batch_op.f("ix_reference_derivations_reference_id"))
    op.drop_table("reference_derivations")
