"""Units panel: build a data unit from real claims, see it in en/it/es, save it.

``panel.UnitsPanel`` lays it out and holds the panel's :class:`UnitsPanelState`
(``core/units/builder/panel_state.py``: the table's filters and sort, the claim filters),
which its widgets are bound to: ``table`` (the session's saved units, read a page at a
time, sorted and filtered, with the selected unit's references), ``draft`` (the claims
of the entity in focus and the draft's triples per language) and ``dialogs`` (Override,
Sample units…). ``app.units.UnitsController`` answers its requests.
"""
