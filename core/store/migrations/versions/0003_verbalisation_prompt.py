"""Verbalisation prompts: the user message each output was generated from.

Perplexity is scored "given its prompt" (METHODS §7). A prompt rebuilt at scoring time
from the unit's triples changes when a triple's override is edited after the run, so
the verbalise job now stores the prompt it sent. Rows made before this revision keep
NULL, and scoring rebuilds their prompt as before.

Revision ID: 0003
Revises: 0002
Create Date: 2025-01-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("verbalisations") as batch_op:
        batch_op.add_column(sa.Column("prompt", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("verbalisations") as batch_op:
        batch_op.drop_column("prompt")
