"""JSON a session holds is read within bounds (``core.io.bounded.stored_json``): a session
from elsewhere holding deep nesting, a number of 5,000 digits, ``1e400`` or a lone
surrogate escape where TailLens keeps settings, drafts and judgments makes each reader
fall back to what it shows for nothing saved, never fail with a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.io.bounded import stored_json
from core.store import SessionStore

HOSTILE = [
    "[" * 100_000 + "]" * 100_000,
    '{"a": ' * 50_000 + "1" + "}" * 50_000,
    "9" * 5000,
    '{"head_share": 1e400}',
    '["\\ud800"]',
    "not json",
    "",
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_stored_json_falls_back_on_what_it_cannot_read(text: str) -> None:
    sentinel = object()
    assert stored_json(text, sentinel) is sentinel
    assert stored_json(None, sentinel) is sentinel
    assert stored_json('{"a": [1, 2.5, "x"]}', sentinel) == {"a": [1, 2.5, "x"]}


@pytest.mark.parametrize("text", HOSTILE[:5], ids=range(5))
def test_every_reader_of_session_json_falls_back(tmp_path: Path, text: str) -> None:
    from core.agreement.human import webnlg_payloads
    from core.agreement.judgments import META_PREFIX
    from core.tiers.cutoffs import TierSettings
    from core.tiers.model_tail import load_cutoff
    from core.tiers.stored import load_tier_settings
    from core.units.builder.draft import draft_from_json
    from core.units.builder.render import KEPT_LABELS_META_KEY, kept_labels
    from core.units.builder.saved import DRAFT_OVERRIDES_META_KEY, load_draft_overrides

    path = tmp_path / "s.taillens"
    with SessionStore.open(path, create=True) as store:
        for key in (
            KEPT_LABELS_META_KEY,
            DRAFT_OVERRIDES_META_KEY,
            "tiers:City",
            "likelihood:City",
            f"{META_PREFIX}1",
        ):
            store.set_meta(key, text)
        assert kept_labels(store) == {}
        assert load_draft_overrides(store) == {}
        assert draft_from_json(text) is None
        assert load_tier_settings(store, "City") == TierSettings()
        assert load_cutoff(store, "City") is None
        assert webnlg_payloads(store) == []
