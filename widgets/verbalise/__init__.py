"""Verbalise panel: choose a verbaliser, edit the prompts, run it over units, see the outputs.

Top: the model picker (the template verbaliser first, the default; then the models found
in the Hugging Face cache and the configured folders, with type and size; then an
OpenAI-compatible server), and a red line for what is wrong with the choice. Tabs, each
scrollable so the panel works in a narrow dock: *Model* (folders, server, device, dtype,
generation settings: ``model_form.ModelForm``), *Prompt* (one editable template per
language, ``prompt.PromptEditor``, and the live preview of the exact prompt for a unit,
``prompt.PromptPreview`` with its paged ``unit_picker.UnitPicker``), *Units* (which units,
which languages, resume: ``scope_form.ScopeForm``) and *Results* (the last run's summary,
the session's runs, a unit's outputs: ``results.ResultsView``). Bottom: progress, Run and
Cancel (``results.RunBar``). ``panel.VerbalisePanel`` puts them together and keeps their
widgets under its own names.

What the panel offers and what the user chose live in a Qt-free
``core.verbalise.panel_state.VerbaliseState``: the parts render it and write the user's
edits into it through ``widgets.binding.bind``. ``app.verbalise.VerbaliseController``
reads its settings, builds the verbaliser and the job, and hands back models, previews,
progress and results to show.
"""

from core.verbalise.panel_state import DEFAULTS, DEVICES, DTYPES, SCOPES, SERVER, TEMPLATE
from widgets.verbalise.common import OUTPUT_COLUMNS, RUN_COLUMNS
from widgets.verbalise.model_form import ModelForm
from widgets.verbalise.panel import VerbalisePanel
from widgets.verbalise.prompt import PromptEditor, PromptPreview
from widgets.verbalise.results import ResultsView, RunBar
from widgets.verbalise.scope_form import ScopeForm
from widgets.verbalise.unit_picker import UnitPicker, unit_label

__all__ = [
    "DEFAULTS",
    "DEVICES",
    "DTYPES",
    "OUTPUT_COLUMNS",
    "RUN_COLUMNS",
    "SCOPES",
    "SERVER",
    "TEMPLATE",
    "ModelForm",
    "PromptEditor",
    "PromptPreview",
    "ResultsView",
    "RunBar",
    "ScopeForm",
    "UnitPicker",
    "VerbalisePanel",
    "unit_label",
]
