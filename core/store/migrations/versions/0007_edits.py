"""The session's edit history (``core.edits``).

- ``edit_history``: one row per edit a user made (kind, target, description, the state
  before and after as JSON, who, source, status applied / undone / redone, ``seq`` (the
  order of applies, undos and redos), the unit and annotator it concerns for filtering,
  when it was made and last undone or redone).

Revision ID: 0007_edits
Revises: 0006_refs
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_edits"
down_revision: str | Sequence[str] | None = "0006_refs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "edit_history",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("target", sa.JSON(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("before", sa.JSON(), nullable=True),
        sa.Column("after", sa.JSON(), nullable=True),
        sa.Column("who", sa.String(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("status", sa.String(), server_default=sa.text("'applied'"), nullable=False),
        sa.Column("seq", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("unit_id", sa.Integer(), nullable=True),
        sa.Column("annotator", sa.String(), nullable=True),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_edit_history")),
    )
    with op.batch_alter_table("edit_history", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_edit_history_kind"), ["kind"], unique=False)
        batch_op.create_index(batch_op.f("ix_edit_history_unit_id"), ["unit_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_edit_history_annotator"), ["annotator"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("edit_history", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_edit_history_annotator"))
        batch_op.drop_index(batch_op.f("ix_edit_history_unit_id"))
        batch_op.drop_index(batch_op.f("ix_edit_history_kind"))
    op.drop_table("edit_history")
