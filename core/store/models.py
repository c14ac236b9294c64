"""The tables of a session file, as SQLAlchemy 2.x declarative classes.

These classes must match what the Alembic revisions in ``migrations/versions`` build;
``tests/core/test_migrations.py`` compares the two. A schema change is a change here
plus a new revision, never an edit of a revision that has shipped.

Columns that hold one of a few words (tier, rank, status, ...) are plain strings
without CHECK constraints: the sets of words will grow, and changing a CHECK on SQLite
means rebuilding the table.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy import text as sql_text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

# Named constraints: Alembic's batch mode on SQLite rebuilds tables and can only
# drop or alter constraints it can name.
NAMING_CONVENTION: dict[str, str] = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# "text" is also a column name below, hence the alias.
NOW = sql_text("CURRENT_TIMESTAMP")
FALSE = sql_text("0")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {
        datetime: DateTime(timezone=True),
        dict[str, Any]: JSON,
    }


def _created_at() -> Mapped[datetime]:
    return mapped_column(DateTime(timezone=True), server_default=NOW)


def _updated_at() -> Mapped[datetime]:
    return mapped_column(
        DateTime(timezone=True), server_default=NOW, onupdate=func.current_timestamp()
    )


class SessionMeta(Base):
    """Key/value facts about the file itself (``created_with``, ``created_at``, ...)."""

    __tablename__ = "session_meta"

    key: Mapped[str] = mapped_column(String, primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class Category(Base):
    """A category browsed, e.g. *City*, with the SPARQL pattern that decides membership."""

    __tablename__ = "categories"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String, unique=True)
    class_qid: Mapped[str] = mapped_column(String)
    membership_property: Mapped[str] = mapped_column(String, server_default=sql_text("'P31'"))
    pattern: Mapped[str] = mapped_column(Text)
    is_default: Mapped[bool] = mapped_column(Boolean, server_default=FALSE)
    created_at: Mapped[datetime] = _created_at()
    # How the last fetch of the members ended (rev 0004): 'complete', 'incomplete' (the
    # note says why: a limit reached, a page that brought nothing new, an error), or NULL
    # when no fetch recorded it.
    fetch_status: Mapped[str | None] = mapped_column(String)
    fetch_note: Mapped[str | None] = mapped_column(Text)

    members: Mapped[list[CategoryMember]] = relationship(
        back_populates="category", cascade="all, delete-orphan", passive_deletes=True
    )


class Entity(Base):
    """A Wikidata item seen, with the popularity signals tiers are computed from."""

    __tablename__ = "entities"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    qid: Mapped[str] = mapped_column(String, unique=True, index=True)
    statement_count: Mapped[int | None] = mapped_column(Integer)
    sitelink_count: Mapped[int | None] = mapped_column(Integer)
    # None means "not looked up yet", which is not the same as "has no page".
    has_wiki_en: Mapped[bool | None] = mapped_column(Boolean)
    has_wiki_it: Mapped[bool | None] = mapped_column(Boolean)
    has_wiki_es: Mapped[bool | None] = mapped_column(Boolean)
    source: Mapped[str | None] = mapped_column(String)
    fetched_at: Mapped[datetime] = _created_at()


class CategoryMember(Base):
    """An entity in a category, with its tier there (tiers are relative to a category)."""

    __tablename__ = "category_members"
    __table_args__ = (Index("ix_category_members_category_id_tier", "category_id", "tier"),)

    category_id: Mapped[int] = mapped_column(
        ForeignKey("categories.id", ondelete="CASCADE"), primary_key=True
    )
    entity_id: Mapped[int] = mapped_column(
        ForeignKey("entities.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    tier: Mapped[str | None] = mapped_column(String)
    sub_tier: Mapped[str | None] = mapped_column(String)
    fetched_at: Mapped[datetime] = _created_at()
    # 'model_tail' / 'model_head' by the category's likelihood cut-off (rev 0005), kept
    # apart from the Wikidata tier and sub-tier; NULL when unscored or no cut-off drawn.
    model_tier: Mapped[str | None] = mapped_column(String)

    category: Mapped[Category] = relationship(back_populates="members")
    entity: Mapped[Entity] = relationship()


class Term(Base):
    """A label, description or alias of an item or property in one language."""

    __tablename__ = "terms"
    __table_args__ = (
        # Unique so a refetch replaces terms instead of piling up duplicates.
        Index(
            "ix_terms_item_id_lang_kind_ordinal", "item_id", "lang", "kind", "ordinal", unique=True
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    item_id: Mapped[str] = mapped_column(String)
    lang: Mapped[str] = mapped_column(String)
    kind: Mapped[str] = mapped_column(String)
    text: Mapped[str] = mapped_column(Text)
    ordinal: Mapped[int] = mapped_column(Integer, server_default=sql_text("0"))


class Property(Base):
    """A Wikidata property and its value type."""

    __tablename__ = "properties"

    pid: Mapped[str] = mapped_column(String, primary_key=True)
    datatype: Mapped[str] = mapped_column(String)
    fetched_at: Mapped[datetime] = _created_at()


class Claim(Base):
    """A Wikidata statement: subject, property, one value, rank."""

    __tablename__ = "claims"
    __table_args__ = (Index("ix_claims_subject_qid_property_pid", "subject_qid", "property_pid"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    statement_id: Mapped[str | None] = mapped_column(String, unique=True, index=True)
    subject_qid: Mapped[str] = mapped_column(String)
    property_pid: Mapped[str] = mapped_column(String, index=True)
    # A QID or a literal's lexical form; None for novalue/somevalue.
    value: Mapped[str | None] = mapped_column(Text)
    value_type: Mapped[str | None] = mapped_column(String)
    value_json: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    rank: Mapped[str] = mapped_column(String, server_default=sql_text("'normal'"))
    snak_type: Mapped[str] = mapped_column(String, server_default=sql_text("'value'"))
    fetched_at: Mapped[datetime] = _created_at()


class DataUnit(Base):
    """A set of 1-7 triples about one subject, with where it came from."""

    __tablename__ = "data_units"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    uid: Mapped[str] = mapped_column(String, unique=True, index=True)
    root_qid: Mapped[str | None] = mapped_column(String, index=True)
    category_id: Mapped[int | None] = mapped_column(
        ForeignKey("categories.id", ondelete="SET NULL"), index=True
    )
    shape: Mapped[str | None] = mapped_column(String)
    size: Mapped[int] = mapped_column(Integer)
    tier: Mapped[str | None] = mapped_column(String, index=True)
    sub_tier: Mapped[str | None] = mapped_column(String)
    origin: Mapped[str] = mapped_column(String)
    source: Mapped[str | None] = mapped_column(Text)
    # Attributes of imported formats that TailLens has no column for, kept for export.
    attributes: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    notes: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = _created_at()
    updated_at: Mapped[datetime] = _updated_at()

    category: Mapped[Category | None] = relationship()
    triples: Mapped[list[UnitTriple]] = relationship(
        back_populates="unit",
        cascade="all, delete-orphan",
        passive_deletes=True,
        order_by=lambda: [UnitTriple.lang, UnitTriple.tripleset, UnitTriple.position],
    )
    references: Mapped[list[UnitReference]] = relationship(
        back_populates="unit", cascade="all, delete-orphan", passive_deletes=True
    )


class UnitTriple(Base):
    """One triple of a unit in one language, as shown, with manual overrides kept apart."""

    __tablename__ = "unit_triples"
    __table_args__ = (UniqueConstraint("unit_id", "lang", "tripleset", "position"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    unit_id: Mapped[int] = mapped_column(ForeignKey("data_units.id", ondelete="CASCADE"))
    lang: Mapped[str] = mapped_column(String)
    # WebNLG-style formats carry an 'original' tripleset next to the 'main' one.
    tripleset: Mapped[str] = mapped_column(String, server_default=sql_text("'main'"))
    position: Mapped[int] = mapped_column(Integer)
    subject: Mapped[str] = mapped_column(Text)
    predicate: Mapped[str] = mapped_column(Text)
    object: Mapped[str] = mapped_column(Text)
    subject_qid: Mapped[str | None] = mapped_column(String)
    property_pid: Mapped[str | None] = mapped_column(String, index=True)
    object_value: Mapped[str | None] = mapped_column(Text)
    claim_id: Mapped[int | None] = mapped_column(
        ForeignKey("claims.id", ondelete="SET NULL"), index=True
    )
    subject_override: Mapped[str | None] = mapped_column(Text)
    predicate_override: Mapped[str | None] = mapped_column(Text)
    object_override: Mapped[str | None] = mapped_column(Text)
    label_missing: Mapped[bool] = mapped_column(Boolean, server_default=FALSE)

    unit: Mapped[DataUnit] = relationship(back_populates="triples")

    def shown(self) -> tuple[str, str, str]:
        """(subject, predicate, object) as the unit shows them: an override wins whenever
        it is set, an empty one included. The verbalise job builds prompts from this and
        the scoring job reads triples with it, so both agree on what a unit says."""
        return (
            self.subject if self.subject_override is None else self.subject_override,
            self.predicate if self.predicate_override is None else self.predicate_override,
            self.object if self.object_override is None else self.object_override,
        )


class ModelRun(Base):
    """What produced a set of verbalisations: model, settings, seed, software versions."""

    __tablename__ = "model_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String)
    model_id: Mapped[str] = mapped_column(String, index=True)
    model_fingerprint: Mapped[str | None] = mapped_column(String)
    parameters: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    prompt_templates: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    seed: Mapped[int | None] = mapped_column(Integer)
    software: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    system_name: Mapped[str | None] = mapped_column(String)
    status: Mapped[str] = mapped_column(String, server_default=sql_text("'running'"))
    started_at: Mapped[datetime] = _created_at()
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    verbalisations: Mapped[list[Verbalisation]] = relationship(
        back_populates="run", cascade="all, delete-orphan", passive_deletes=True
    )


class Verbalisation(Base):
    """One candidate text a run produced for a unit in a language, raw and parsed."""

    __tablename__ = "verbalisations"
    __table_args__ = (
        UniqueConstraint("run_id", "unit_id", "lang", "candidate_index"),
        Index("ix_verbalisations_unit_id_lang", "unit_id", "lang"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("model_runs.id", ondelete="CASCADE"))
    unit_id: Mapped[int] = mapped_column(ForeignKey("data_units.id", ondelete="CASCADE"))
    lang: Mapped[str] = mapped_column(String)
    candidate_index: Mapped[int] = mapped_column(Integer, server_default=sql_text("0"))
    raw_output: Mapped[str] = mapped_column(Text)
    text: Mapped[str | None] = mapped_column(Text)
    parse_ok: Mapped[bool] = mapped_column(Boolean, server_default=FALSE)
    # The user message the model was given (before any chat template), written at
    # generation (rev 0003): perplexity is "given its prompt", and a prompt rebuilt later
    # from edited triples would be a context the model never saw. NULL for template runs,
    # imports and rows made before 0003.
    prompt: Mapped[str | None] = mapped_column(Text)
    # Per-token log-probabilities an OpenAI-compatible server returned with the reply
    # (rev 0004): {"tokens": [...], "logprobs": [...]}; perplexity of a server run uses
    # them when no local copy of the model is at hand.
    token_logprobs: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = _created_at()
    updated_at: Mapped[datetime] = _updated_at()

    run: Mapped[ModelRun] = relationship(back_populates="verbalisations")
    unit: Mapped[DataUnit] = relationship()


class Annotator(Base):
    """A person who rates or writes texts; imported ratings may be anonymous."""

    __tablename__ = "annotators"
    # The rules of core.annotation.types.clean_annotator_name, for a name written by
    # another program (or merged by an older TailLens): such a row is skipped.
    __table_args__ = (
        {
            "info": {
                "checks": [
                    (
                        "typeof(name) = 'text' AND (trim(name) = '' OR length(name) > 100 "
                        "OR name GLOB '*[' || char(1) || '-' || char(31) || char(127) || '-' "
                        "|| char(159) || ']*' "
                        "OR instr(name, char(0)) > 0)",
                        "'name ' || quote(substr(name, 1, 40)) || ' is empty, too long or "
                        "holds a control character'",
                    ),
                    ("name IS NULL", "'has no name'"),
                ]
            }
        },
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String, unique=True)
    is_anonymous: Mapped[bool] = mapped_column(Boolean, server_default=FALSE)
    created_at: Mapped[datetime] = _created_at()


class UnitReference(Base):
    """A reference text for a unit (gold: written by a person; silver: a kept output)."""

    __tablename__ = "unit_references"
    __table_args__ = (Index("ix_unit_references_unit_id_lang", "unit_id", "lang"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    unit_id: Mapped[int] = mapped_column(ForeignKey("data_units.id", ondelete="CASCADE"))
    lang: Mapped[str] = mapped_column(String)
    text: Mapped[str] = mapped_column(Text)
    quality: Mapped[str] = mapped_column(String)
    lid: Mapped[str | None] = mapped_column(String)
    provenance: Mapped[str | None] = mapped_column(String)
    source_verbalisation_id: Mapped[int | None] = mapped_column(
        ForeignKey("verbalisations.id", ondelete="SET NULL"), index=True
    )
    created_by: Mapped[int | None] = mapped_column(
        ForeignKey("annotators.id", ondelete="SET NULL"), index=True
    )
    created_at: Mapped[datetime] = _created_at()

    unit: Mapped[DataUnit] = relationship(back_populates="references")


class ReferenceMention(Base):
    """A human-annotated mention of an entity in a reference text (rev 0004).

    Enriched WebNLG gives, for each text, every entity mention with its tag (AGENT-1,
    BRIDGE-1, PATIENT-1), its type (name, description, pronoun, ...) and its words.
    ``entity`` is the identifier exactly as the file spells it."""

    __tablename__ = "reference_mentions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    reference_id: Mapped[int] = mapped_column(
        ForeignKey("unit_references.id", ondelete="CASCADE"), index=True
    )
    position: Mapped[int] = mapped_column(Integer, server_default=sql_text("0"))
    entity: Mapped[str] = mapped_column(Text)
    mention: Mapped[str] = mapped_column(Text)
    tag: Mapped[str | None] = mapped_column(String)
    mention_type: Mapped[str | None] = mapped_column(String)
    source: Mapped[str] = mapped_column(String, server_default=sql_text("'import'"))


class EntitySynonym(Base):
    """One row of the ESA synonym table (the paper's dictionary), rev 0004.

    ``entity`` is a surface form or identifier as labels show it (``Spain``, ``Q29``);
    ``lang`` is ``''`` for any language. ``source`` is 'starter' (bundled seed) or
    'user'."""

    __tablename__ = "entity_synonyms"
    __table_args__ = (UniqueConstraint("entity", "synonym", "lang"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    entity: Mapped[str] = mapped_column(Text)
    synonym: Mapped[str] = mapped_column(Text)
    lang: Mapped[str] = mapped_column(String, server_default=sql_text("''"))
    source: Mapped[str] = mapped_column(String, server_default=sql_text("'user'"))
    created_at: Mapped[datetime] = _created_at()


class Score(Base):
    """A metric value for a verbalisation (sentence level) or a run (corpus level)."""

    __tablename__ = "scores"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    metric: Mapped[str] = mapped_column(String, index=True)
    value: Mapped[float | None] = mapped_column(Float)
    details: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    signature: Mapped[str | None] = mapped_column(String)
    level: Mapped[str] = mapped_column(String, server_default=sql_text("'sentence'"))
    verbalisation_id: Mapped[int | None] = mapped_column(
        ForeignKey("verbalisations.id", ondelete="CASCADE"), index=True
    )
    reference_id: Mapped[int | None] = mapped_column(
        ForeignKey("unit_references.id", ondelete="CASCADE"), index=True
    )
    run_id: Mapped[int | None] = mapped_column(
        ForeignKey("model_runs.id", ondelete="CASCADE"), index=True
    )
    lang: Mapped[str | None] = mapped_column(String)
    created_at: Mapped[datetime] = _created_at()


class Encoding(Base):
    """A cached sentence-encoder vector of a text or linearised graph (rev 0005_retrieval).

    ``encoder`` is the model folder's fingerprint, ``content_hash`` the SHA-256 of the
    encoded string, ``vector`` the L2-normalised embedding as little-endian float32 bytes
    of length ``dim``."""

    __tablename__ = "encodings"
    __table_args__ = (
        UniqueConstraint("encoder", "content_hash"),
        # A vector of another size is skipped on reading (core.store.integrity), so it
        # counts as not cached: the retrieval job encodes the text again and replaces it.
        {
            "info": {
                "checks": [
                    (
                        "typeof(dim) = 'integer' AND typeof(vector) = 'blob' "
                        "AND length(vector) != 4 * dim",
                        "'vector holds ' || length(vector) || ' bytes, not 4 × dim ' || dim",
                    )
                ]
            }
        },
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    encoder: Mapped[str] = mapped_column(String)
    content_hash: Mapped[str] = mapped_column(String)
    kind: Mapped[str] = mapped_column(String)
    dim: Mapped[int] = mapped_column(Integer)
    vector: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = _created_at()


class Annotation(Base):
    """A person's rating of a verbalisation or reference, with an optional correction."""

    __tablename__ = "annotations"
    # One rating per annotator and item (core.edits.rating_rule), held by the
    # schema since revision 0008_one_rating; golden answers are not ratings. Then the
    # rules core.annotation.ratings.validate_rating applies to a rating made in the
    # app, for one written by another program: such a row is skipped.
    __table_args__ = (
        *(
            Index(
                f"uq_annotations_rating_{column}",
                "annotator_id",
                column,
                unique=True,
                sqlite_where=sql_text(f"is_golden = 0 AND {column} IS NOT NULL"),
            )
            for column in ("verbalisation_id", "reference_id")
        ),
        {
            "info": {
                "checks": [
                    (
                        "blame IS NOT NULL AND (adequacy IS NULL OR adequacy NOT IN (1, 2))",
                        "'blame ' || quote(substr(blame, 1, 40)) || ' without adequacy No "
                        "or Not sure'",
                    ),
                    (
                        "CASE WHEN json_valid(checks) AND json_type(checks) = 'object' "
                        "THEN EXISTS (SELECT 1 FROM json_each(checks) WHERE key NOT IN "
                        "('fluent_natural', 'all_and_only_information', "
                        "'no_spelling_grammar_errors') OR type NOT IN ('true', 'false')) "
                        "ELSE 0 END",
                        "'checks ' || quote(substr(checks, 1, 60)) || ' names an unknown "
                        "check or a value that is not true or false'",
                    ),
                    (
                        "verbalisation_id IS NULL = (reference_id IS NULL)",
                        "'rates neither one verbalisation nor one reference'",
                    ),
                ]
            }
        },
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    annotator_id: Mapped[int] = mapped_column(
        ForeignKey("annotators.id", ondelete="CASCADE"), index=True
    )
    verbalisation_id: Mapped[int | None] = mapped_column(
        ForeignKey("verbalisations.id", ondelete="CASCADE"), index=True
    )
    reference_id: Mapped[int | None] = mapped_column(
        ForeignKey("unit_references.id", ondelete="CASCADE"), index=True
    )
    # The ranges are METHODS §9's scales; reading a session skips a row outside them
    # (core.store.integrity), and core.annotation.ratings refuses one at write.
    fluency: Mapped[int | None] = mapped_column(Integer, info={"range": (0, 5)})  # 0-5
    # 0 yes, 1 no, 2 not sure
    adequacy: Mapped[int | None] = mapped_column(Integer, info={"range": (0, 2)})
    blame: Mapped[str | None] = mapped_column(String)
    blame_other: Mapped[str | None] = mapped_column(Text)
    checks: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    error_taxonomy: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    corrected_text: Mapped[str | None] = mapped_column(Text)
    is_golden: Mapped[bool] = mapped_column(Boolean, server_default=FALSE)
    created_at: Mapped[datetime] = _created_at()
    updated_at: Mapped[datetime] = _updated_at()


class RatingSuperseded(Base):
    """A rating an older session held beyond the first for one annotator and item, moved
    here whole by the upgrade to revision 0008_one_rating: its own id, fields and times,
    the ``annotation_origins`` row it had (as JSON) and ``kept_id``, the rating that
    stays. Nothing in the app reads it; it keeps what the rating rule set aside."""

    __tablename__ = "ratings_superseded"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    kept_id: Mapped[int] = mapped_column(Integer, index=True)
    annotator_id: Mapped[int] = mapped_column(Integer)
    verbalisation_id: Mapped[int | None] = mapped_column(Integer)
    reference_id: Mapped[int | None] = mapped_column(Integer)
    fluency: Mapped[int | None] = mapped_column(Integer)
    adequacy: Mapped[int | None] = mapped_column(Integer)
    blame: Mapped[str | None] = mapped_column(String)
    blame_other: Mapped[str | None] = mapped_column(Text)
    checks: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    error_taxonomy: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    corrected_text: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    origin: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    superseded_at: Mapped[datetime] = _created_at()


class EntityLikelihood(Base):
    """The mean log-likelihood per token a causal model gives an entity's label and a
    templated statement about it, in one language (LINK, METHODS §3; rev 0005)."""

    __tablename__ = "entity_likelihoods"
    __table_args__ = (
        UniqueConstraint("entity_id", "model", "lang"),
        Index("ix_entity_likelihoods_model_lang", "model", "lang"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    entity_id: Mapped[int] = mapped_column(ForeignKey("entities.id", ondelete="CASCADE"))
    model: Mapped[str] = mapped_column(String)
    model_fingerprint: Mapped[str | None] = mapped_column(String)
    lang: Mapped[str] = mapped_column(String)
    label: Mapped[str] = mapped_column(Text)
    label_loglik: Mapped[float | None] = mapped_column(Float)
    label_tokens: Mapped[int] = mapped_column(Integer)
    statement: Mapped[str | None] = mapped_column(Text)
    statement_loglik: Mapped[float | None] = mapped_column(Float)
    statement_tokens: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = _created_at()


class JobHistory(Base):
    """A long job run on this session, so a user can see what ran (revision 0002)."""

    __tablename__ = "job_history"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String)
    title: Mapped[str] = mapped_column(String)
    status: Mapped[str] = mapped_column(String, server_default=sql_text("'running'"))
    params: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    error: Mapped[str | None] = mapped_column(Text)
    started_at: Mapped[datetime] = _created_at()
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class AnnotationPack(Base):
    """An annotation pack made from this session for one annotator (revision 0006_packs):
    which items it holds, each with the hash of its text, and which were golden, so a
    merge can check the pack and the progress view knows what was handed out."""

    __tablename__ = "annotation_packs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    pack_uid: Mapped[str] = mapped_column(String, unique=True)
    annotator: Mapped[str] = mapped_column(String, index=True)
    file_name: Mapped[str] = mapped_column(String)
    target: Mapped[str] = mapped_column(String)
    blind: Mapped[bool] = mapped_column(Boolean, server_default=FALSE)
    # {"items": [[kind, id, text hash, golden], ...]}, kind "v" (verbalisation) or "r"
    # (reference); an object, as every JSON column of a session holds (core.store.integrity)
    items: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = _created_at()


class AnnotationOrigin(Base):
    """Where a merged rating came from: the pack, its annotator, the rating's id and last
    change in the pack, and when it was merged (revision 0006_packs)."""

    __tablename__ = "annotation_origins"

    annotation_id: Mapped[int] = mapped_column(
        ForeignKey("annotations.id", ondelete="CASCADE"), primary_key=True
    )
    pack_uid: Mapped[str] = mapped_column(String, index=True)
    pack_file: Mapped[str] = mapped_column(String)
    annotator: Mapped[str] = mapped_column(String)
    pack_annotation_id: Mapped[int] = mapped_column(Integer)
    pack_updated_at: Mapped[str] = mapped_column(String)
    merged_at: Mapped[datetime] = _created_at()


class ReferenceDerivation(Base):
    """A reference made by machine from another (rev 0006_refs, METHODS §11): a
    translation of ``source_reference_id`` stored as the silver ``reference_id``, with the
    model and parameters that made it, its quality estimate and its post-edit.

    ``key`` identifies model + fingerprint + parameters, so a run resumes by skipping
    sources already translated into ``lang`` under the same key. ``mt_text`` is the
    translation as the model gave it; ``postedit_text`` what post-editing proposed (None
    when unparsable); ``kept`` which of the two the reference's text now is ('mt' or
    'postedit'). QE: ``qe_score`` (0–1), ``qe_band``, ``qe_spans`` ({"spans": [{text,
    start, end, severity}]}), ``qe_model``."""

    __tablename__ = "reference_derivations"
    __table_args__ = (UniqueConstraint("source_reference_id", "lang", "key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    reference_id: Mapped[int] = mapped_column(
        ForeignKey("unit_references.id", ondelete="CASCADE"), index=True
    )
    source_reference_id: Mapped[int | None] = mapped_column(
        ForeignKey("unit_references.id", ondelete="SET NULL"), index=True
    )
    source_lang: Mapped[str] = mapped_column(String)
    lang: Mapped[str] = mapped_column(String)
    step: Mapped[str] = mapped_column(String, server_default=sql_text("'translate'"))
    model: Mapped[str] = mapped_column(String)
    model_fingerprint: Mapped[str | None] = mapped_column(String)
    parameters: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    key: Mapped[str] = mapped_column(String)
    mt_text: Mapped[str] = mapped_column(Text)
    qe_score: Mapped[float | None] = mapped_column(Float, info={"range": (0, 1)})
    qe_band: Mapped[str | None] = mapped_column(String)
    qe_spans: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    qe_model: Mapped[str | None] = mapped_column(String)
    postedit_text: Mapped[str | None] = mapped_column(Text)
    postedit_explanation: Mapped[str | None] = mapped_column(Text)
    postedit_model: Mapped[str | None] = mapped_column(String)
    postedit_raw: Mapped[str | None] = mapped_column(Text)
    kept: Mapped[str] = mapped_column(String, server_default=sql_text("'mt'"))
    created_at: Mapped[datetime] = _created_at()


class EditHistory(Base):
    """One edit a user made to this session (revision 0007_edits): its kind, what it
    touched (``target``), the state before and after as JSON, who made it, from where
    (``gui`` or the CLI command) and whether it stands (``applied``, ``undone``,
    ``redone``; ``seq`` orders applies, undos and redos). ``core.edits`` writes a row in
    the same transaction as the edit, so the history is the session's provenance and
    what undo after reopening reads."""

    __tablename__ = "edit_history"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String, index=True)
    target: Mapped[dict[str, Any]] = mapped_column(JSON)
    description: Mapped[str] = mapped_column(Text)
    before: Mapped[Any] = mapped_column(JSON, nullable=True)
    after: Mapped[Any] = mapped_column(JSON, nullable=True)
    who: Mapped[str] = mapped_column(String)
    source: Mapped[str] = mapped_column(String)
    status: Mapped[str] = mapped_column(String, server_default=sql_text("'applied'"))
    # Bumped past every other row's on apply, undo and redo: the row with the highest
    # ``seq`` of a target made its present state (history.replayed_states).
    seq: Mapped[int] = mapped_column(Integer, server_default=sql_text("0"))
    unit_id: Mapped[int | None] = mapped_column(Integer, index=True)
    annotator: Mapped[str | None] = mapped_column(String, index=True)
    created_at: Mapped[datetime] = _created_at()
    changed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
