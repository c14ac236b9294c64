"""Progress lines in the terminal: a note that names its own count is not preceded by a
bare copy of the number ("Import: 1 1 units")."""

from __future__ import annotations

from app.terminal import run_in_terminal
from core.jobs import Job


def test_a_note_without_a_total_is_not_preceded_by_a_bare_count(capsys) -> None:
    def work(ctx) -> int:
        ctx._min_interval_s = 0  # noqa: SLF001 - every report, not a few a second
        ctx.progress(1, None, "1 entry read: 1 unit from a.xml")
        ctx.progress(3, 10, "units")
        ctx.progress(4, None, "")
        return 0

    run_in_terminal(Job("Import", work))
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("Import: 1 entry read: 1 unit from a.xml (")
    assert lines[1].startswith("Import: 3/10  30% units (")
    assert lines[2].startswith("Import: 4 (")


def test_webnlg_import_progress_names_entries_and_units() -> None:
    from core.formats.webnlg.importer import _progress_note, _Totals

    totals = _Totals()
    totals.entries, totals.units = 1, 1
    assert _progress_note(totals, "a.xml") == "1 entry read: 1 unit from a.xml"
    totals.entries, totals.units = 2, 1
    assert _progress_note(totals, "a.xml") == "2 entries read: 1 unit from a.xml"


def test_a_long_job_says_how_long_it_has_left(capsys, monkeypatch) -> None:
    from core.jobs import TimeLeft

    now = [0.0]
    monkeypatch.setattr("app.terminal.TimeLeft", lambda: TimeLeft(lambda: now[0]))

    def work(ctx) -> int:
        ctx._min_interval_s = 0  # noqa: SLF001 - every report, not a few a second
        ctx.progress(0, 100, "BLEU")
        now[0] = 30.0
        ctx.progress(25, 100, "BLEU")  # 25 % in 30 s: 90 s for the rest
        return 0

    run_in_terminal(Job("Score", work))
    lines = capsys.readouterr().err.splitlines()
    assert "left" not in lines[0]
    assert lines[1].endswith(", about 2 min left)")
