"""Initial schema: Wikidata cache, data units, runs, verbalisations, scores, annotations.

Revision ID: 0001
Revises:
Create Date: 2025-01-01

Written out table by table (not ``metadata.create_all``) so this revision keeps
building the same schema when the models move on.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NOW = sa.text("CURRENT_TIMESTAMP")
FALSE = sa.text("0")


def _id() -> sa.Column:
    return sa.Column("id", sa.Integer(), autoincrement=True, nullable=False)


def _timestamp(name: str) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), server_default=NOW, nullable=False)


def upgrade() -> None:
    # Long on purpose: a frozen snapshot of the first schema, table by table; revisions
    # after it change it, so it is never edited or split.
    op.create_table(
        "session_meta",
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_session_meta")),
    )

    op.create_table(
        "categories",
        _id(),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("class_qid", sa.String(), nullable=False),
        sa.Column(
            "membership_property", sa.String(), server_default=sa.text("'P31'"), nullable=False
        ),
        sa.Column("pattern", sa.Text(), nullable=False),
        sa.Column("is_default", sa.Boolean(), server_default=FALSE, nullable=False),
        _timestamp("created_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_categories")),
        sa.UniqueConstraint("name", name=op.f("uq_categories_name")),
    )

    op.create_table(
        "entities",
        _id(),
        sa.Column("qid", sa.String(), nullable=False),
        sa.Column("statement_count", sa.Integer(), nullable=True),
        sa.Column("sitelink_count", sa.Integer(), nullable=True),
        sa.Column("has_wiki_en", sa.Boolean(), nullable=True),
        sa.Column("has_wiki_it", sa.Boolean(), nullable=True),
        sa.Column("has_wiki_es", sa.Boolean(), nullable=True),
        sa.Column("source", sa.String(), nullable=True),
        _timestamp("fetched_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_entities")),
    )
    op.create_index(op.f("ix_entities_qid"), "entities", ["qid"], unique=True)

    op.create_table(
        "category_members",
        sa.Column("category_id", sa.Integer(), nullable=False),
        sa.Column("entity_id", sa.Integer(), nullable=False),
        sa.Column("tier", sa.String(), nullable=True),
        sa.Column("sub_tier", sa.String(), nullable=True),
        _timestamp("fetched_at"),
        sa.ForeignKeyConstraint(
            ["category_id"],
            ["categories.id"],
            name=op.f("fk_category_members_category_id_categories"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["entity_id"],
            ["entities.id"],
            name=op.f("fk_category_members_entity_id_entities"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("category_id", "entity_id", name=op.f("pk_category_members")),
    )
    op.create_index(
        "ix_category_members_category_id_tier", "category_members", ["category_id", "tier"]
    )
    op.create_index(op.f("ix_category_members_entity_id"), "category_members", ["entity_id"])

    op.create_table(
        "terms",
        _id(),
        sa.Column("item_id", sa.String(), nullable=False),
        sa.Column("lang", sa.String(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("ordinal", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_terms")),
    )
    op.create_index(
        "ix_terms_item_id_lang_kind_ordinal",
        "terms",
        ["item_id", "lang", "kind", "ordinal"],
        unique=True,
    )

    op.create_table(
        "properties",
        sa.Column("pid", sa.String(), nullable=False),
        sa.Column("datatype", sa.String(), nullable=False),
        _timestamp("fetched_at"),
        sa.PrimaryKeyConstraint("pid", name=op.f("pk_properties")),
    )

    op.create_table(
        "claims",
        _id(),
        sa.Column("statement_id", sa.String(), nullable=True),
        sa.Column("subject_qid", sa.String(), nullable=False),
        sa.Column("property_pid", sa.String(), nullable=False),
        sa.Column("value", sa.Text(), nullable=True),
        sa.Column("value_type", sa.String(), nullable=True),
        sa.Column("value_json", sa.JSON(), nullable=True),
        sa.Column("rank", sa.String(), server_default=sa.text("'normal'"), nullable=False),
        sa.Column("snak_type", sa.String(), server_default=sa.text("'value'"), nullable=False),
        _timestamp("fetched_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_claims")),
    )
    op.create_index(op.f("ix_claims_statement_id"), "claims", ["statement_id"], unique=True)
    op.create_index(op.f("ix_claims_property_pid"), "claims", ["property_pid"])
    op.create_index("ix_claims_subject_qid_property_pid", "claims", ["subject_qid", "property_pid"])

    op.create_table(
        "data_units",
        _id(),
        sa.Column("uid", sa.String(), nullable=False),
        sa.Column("root_qid", sa.String(), nullable=True),
        sa.Column("category_id", sa.Integer(), nullable=True),
        sa.Column("shape", sa.String(), nullable=True),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("tier", sa.String(), nullable=True),
        sa.Column("sub_tier", sa.String(), nullable=True),
        sa.Column("origin", sa.String(), nullable=False),
        sa.Column("source", sa.Text(), nullable=True),
        sa.Column("attributes", sa.JSON(), nullable=True),
        sa.Column("notes", sa.Text(), nullable=True),
        _timestamp("created_at"),
        _timestamp("updated_at"),
        sa.ForeignKeyConstraint(
            ["category_id"],
            ["categories.id"],
            name=op.f("fk_data_units_category_id_categories"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_data_units")),
    )
    op.create_index(op.f("ix_data_units_uid"), "data_units", ["uid"], unique=True)
    op.create_index(op.f("ix_data_units_root_qid"), "data_units", ["root_qid"])
    op.create_index(op.f("ix_data_units_category_id"), "data_units", ["category_id"])
    op.create_index(op.f("ix_data_units_tier"), "data_units", ["tier"])

    op.create_table(
        "unit_triples",
        _id(),
        sa.Column("unit_id", sa.Integer(), nullable=False),
        sa.Column("lang", sa.String(), nullable=False),
        sa.Column("tripleset", sa.String(), server_default=sa.text("'main'"), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("predicate", sa.Text(), nullable=False),
        sa.Column("object", sa.Text(), nullable=False),
        sa.Column("subject_qid", sa.String(), nullable=True),
        sa.Column("property_pid", sa.String(), nullable=True),
        sa.Column("object_value", sa.Text(), nullable=True),
        sa.Column("claim_id", sa.Integer(), nullable=True),
        sa.Column("subject_override", sa.Text(), nullable=True),
        sa.Column("predicate_override", sa.Text(), nullable=True),
        sa.Column("object_override", sa.Text(), nullable=True),
        sa.Column("label_missing", sa.Boolean(), server_default=FALSE, nullable=False),
        sa.ForeignKeyConstraint(
            ["claim_id"],
            ["claims.id"],
            name=op.f("fk_unit_triples_claim_id_claims"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["unit_id"],
            ["data_units.id"],
            name=op.f("fk_unit_triples_unit_id_data_units"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_unit_triples")),
        sa.UniqueConstraint(
            "unit_id",
            "lang",
            "tripleset",
            "position",
            name=op.f("uq_unit_triples_unit_id_lang_tripleset_position"),
        ),
    )
    op.create_index(op.f("ix_unit_triples_claim_id"), "unit_triples", ["claim_id"])
    op.create_index(op.f("ix_unit_triples_property_pid"), "unit_triples", ["property_pid"])

    op.create_table(
        "model_runs",
        _id(),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("model_id", sa.String(), nullable=False),
        sa.Column("model_fingerprint", sa.String(), nullable=True),
        sa.Column("parameters", sa.JSON(), nullable=True),
        sa.Column("prompt_templates", sa.JSON(), nullable=True),
        sa.Column("seed", sa.Integer(), nullable=True),
        sa.Column("software", sa.JSON(), nullable=True),
        sa.Column("system_name", sa.String(), nullable=True),
        sa.Column("status", sa.String(), server_default=sa.text("'running'"), nullable=False),
        _timestamp("started_at"),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_model_runs")),
    )
    op.create_index(op.f("ix_model_runs_model_id"), "model_runs", ["model_id"])

    op.create_table(
        "verbalisations",
        _id(),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("unit_id", sa.Integer(), nullable=False),
        sa.Column("lang", sa.String(), nullable=False),
        sa.Column("candidate_index", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("raw_output", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("parse_ok", sa.Boolean(), server_default=FALSE, nullable=False),
        _timestamp("created_at"),
        _timestamp("updated_at"),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["model_runs.id"],
            name=op.f("fk_verbalisations_run_id_model_runs"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["unit_id"],
            ["data_units.id"],
            name=op.f("fk_verbalisations_unit_id_data_units"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_verbalisations")),
        sa.UniqueConstraint(
            "run_id",
            "unit_id",
            "lang",
            "candidate_index",
            name=op.f("uq_verbalisations_run_id_unit_id_lang_candidate_index"),
        ),
    )
    op.create_index("ix_verbalisations_unit_id_lang", "verbalisations", ["unit_id", "lang"])

    op.create_table(
        "annotators",
        _id(),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("is_anonymous", sa.Boolean(), server_default=FALSE, nullable=False),
        _timestamp("created_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_annotators")),
        sa.UniqueConstraint("name", name=op.f("uq_annotators_name")),
    )

    op.create_table(
        "unit_references",
        _id(),
        sa.Column("unit_id", sa.Integer(), nullable=False),
        sa.Column("lang", sa.String(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("quality", sa.String(), nullable=False),
        sa.Column("lid", sa.String(), nullable=True),
        sa.Column("provenance", sa.String(), nullable=True),
        sa.Column("source_verbalisation_id", sa.Integer(), nullable=True),
        sa.Column("created_by", sa.Integer(), nullable=True),
        _timestamp("created_at"),
        sa.ForeignKeyConstraint(
            ["created_by"],
            ["annotators.id"],
            name=op.f("fk_unit_references_created_by_annotators"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["source_verbalisation_id"],
            ["verbalisations.id"],
            name=op.f("fk_unit_references_source_verbalisation_id_verbalisations"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["unit_id"],
            ["data_units.id"],
            name=op.f("fk_unit_references_unit_id_data_units"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_unit_references")),
    )
    op.create_index("ix_unit_references_unit_id_lang", "unit_references", ["unit_id", "lang"])
    op.create_index(
        op.f("ix_unit_references_source_verbalisation_id"),
        "unit_references",
        ["source_verbalisation_id"],
    )
    op.create_index(op.f("ix_unit_references_created_by"), "unit_references", ["created_by"])

    op.create_table(
        "scores",
        _id(),
        sa.Column("metric", sa.String(), nullable=False),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("details", sa.JSON(), nullable=True),
        sa.Column("signature", sa.String(), nullable=True),
        sa.Column("level", sa.String(), server_default=sa.text("'sentence'"), nullable=False),
        sa.Column("verbalisation_id", sa.Integer(), nullable=True),
        sa.Column("reference_id", sa.Integer(), nullable=True),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("lang", sa.String(), nullable=True),
        _timestamp("created_at"),
        sa.ForeignKeyConstraint(
            ["reference_id"],
            ["unit_references.id"],
            name=op.f("fk_scores_reference_id_unit_references"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["model_runs.id"],
            name=op.f("fk_scores_run_id_model_runs"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["verbalisation_id"],
            ["verbalisations.id"],
            name=op.f("fk_scores_verbalisation_id_verbalisations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_scores")),
    )
    op.create_index(op.f("ix_scores_metric"), "scores", ["metric"])
    op.create_index(op.f("ix_scores_verbalisation_id"), "scores", ["verbalisation_id"])
    op.create_index(op.f("ix_scores_reference_id"), "scores", ["reference_id"])
    op.create_index(op.f("ix_scores_run_id"), "scores", ["run_id"])

    op.create_table(
        "annotations",
        _id(),
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
        sa.Column("is_golden", sa.Boolean(), server_default=FALSE, nullable=False),
        _timestamp("created_at"),
        _timestamp("updated_at"),
        sa.ForeignKeyConstraint(
            ["annotator_id"],
            ["annotators.id"],
            name=op.f("fk_annotations_annotator_id_annotators"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["reference_id"],
            ["unit_references.id"],
            name=op.f("fk_annotations_reference_id_unit_references"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["verbalisation_id"],
            ["verbalisations.id"],
            name=op.f("fk_annotations_verbalisation_id_verbalisations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_annotations")),
    )
    op.create_index(op.f("ix_annotations_annotator_id"), "annotations", ["annotator_id"])
    op.create_index(op.f("ix_annotations_verbalisation_id"), "annotations", ["verbalisation_id"])
    op.create_index(op.f("ix_annotations_reference_id"), "annotations", ["reference_id"])


def downgrade() -> None:
    # Children before parents; dropping a table drops its indexes with it.
    for table in (
        "annotations",
        "scores",
        "unit_references",
        "annotators",
        "verbalisations",
        "model_runs",
        "unit_triples",
        "data_units",
        "claims",
        "properties",
        "terms",
        "category_members",
        "entities",
        "categories",
        "session_meta",
    ):
        op.drop_table(table)
