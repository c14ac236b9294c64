"""Cached sentence-encoder vectors for graph ↔ text retrieval.

- ``encodings``: one row per (encoder fingerprint, text hash): the L2-normalised vector of
  a text or a linearised graph as float32 bytes (little-endian), so a retrieval over the
  session encodes each unique graph and text once per encoder. ``encoder`` is the
  fingerprint of the model folder's files (core.metrics.retrieval.encoders.encoder_fingerprint);
  ``content_hash`` the SHA-256 of the encoded string; ``kind`` 'graph' or 'text'.

Revision ID: 0005_retrieval
Revises: 0005_likelihood
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_retrieval"
down_revision: str | Sequence[str] | None = "0005_likelihood"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "encodings",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("encoder", sa.String(), nullable=False),
        sa.Column("content_hash", sa.String(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("dim", sa.Integer(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_encodings")),
        sa.UniqueConstraint(
            "encoder", "content_hash", name=op.f("uq_encodings_encoder_content_hash")
        ),
    )


def downgrade() -> None:
    op.drop_table("encodings")
