"""Offline annotation packs (METHODS §13).

- ``annotation_packs``: one row per pack made from this session: its uid, annotator, file
  name, target (verbalisations or references), blind or not, and its items as
  ``{"items": [[kind, id, text hash, golden], ...]}``;
- ``annotation_origins``: for a rating merged from a pack, the pack, its annotator, the
  rating's id and last change in the pack, and when it was merged.

Revision ID: 0006_packs
Revises: 0005_retrieval
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_packs"
down_revision: str | Sequence[str] | None = "0005_retrieval"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "annotation_packs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("pack_uid", sa.String(), nullable=False),
        sa.Column("annotator", sa.String(), nullable=False),
        sa.Column("file_name", sa.String(), nullable=False),
        sa.Column("target", sa.String(), nullable=False),
        sa.Column("blind", sa.Boolean(), server_default=sa.text("0"), nullable=False),
        sa.Column("items", sa.JSON(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_annotation_packs")),
        sa.UniqueConstraint("pack_uid", name=op.f("uq_annotation_packs_pack_uid")),
    )
    op.create_index(
        op.f("ix_annotation_packs_annotator"), "annotation_packs", ["annotator"], unique=False
    )
    op.create_table(
        "annotation_origins",
        sa.Column("annotation_id", sa.Integer(), nullable=False),
        sa.Column("pack_uid", sa.String(), nullable=False),
        sa.Column("pack_file", sa.String(), nullable=False),
        sa.Column("annotator", sa.String(), nullable=False),
        sa.Column("pack_annotation_id", sa.Integer(), nullable=False),
        sa.Column("pack_updated_at", sa.String(), nullable=False),
        sa.Column(
            "merged_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["annotation_id"],
            ["annotations.id"],
            name=op.f("fk_annotation_origins_annotation_id_annotations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("annotation_id", name=op.f("pk_annotation_origins")),
    )
    op.create_index(
        op.f("ix_annotation_origins_pack_uid"), "annotation_origins", ["pack_uid"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_annotation_origins_pack_uid"), table_name="annotation_origins")
    op.drop_table("annotation_origins")
    op.drop_index(op.f("ix_annotation_packs_annotator"), table_name="annotation_packs")
    op.drop_table("annotation_packs")
