"""Palettes: the window follows the system's dark or light mode.

Every colour the widgets draw comes from here, from the application's palette: the two
palettes themselves, the style that draws checkbox and radio indicators with an edge
that reads on either (:class:`IndicatorStyle`), the muted grey of secondary text
(:func:`muted_colour`, :func:`set_muted`), the colours that carry a meaning (:func:`tone`:
error, better, worse, accent) and a hook that redraws rich text when the palette changes
(:func:`on_palette_change`), so a live switch between light and dark repaints
everything. ``tests/widgets/test_theme_contrast.py`` measures the result in pixels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QObject, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPalette, QPen
from PySide6.QtWidgets import QProxyStyle, QStyle, QStyleOption, QStyleOptionViewItem, QWidget


def dark_palette() -> QPalette:
    palette = QPalette()
    role, group = QPalette.ColorRole, QPalette.ColorGroup
    colours = {
        role.Window: "#2b2b2b",
        role.WindowText: "#e6e6e6",
        role.Base: "#1e1e1e",
        role.AlternateBase: "#2f2f2f",
        role.ToolTipBase: "#3a3a3a",
        role.ToolTipText: "#e6e6e6",
        role.PlaceholderText: "#8a8a8a",
        role.Text: "#e6e6e6",
        role.Button: "#353535",
        role.ButtonText: "#e6e6e6",
        role.BrightText: "#ff6b6b",
        role.Link: "#6cb4ff",
        # White and the text colour both read on it (>= 4.5:1; #3d6fb4 gave 4.1 with
        # the text colour, which an inactive selection keeps).
        role.Highlight: "#2f5f9e",
        role.HighlightedText: "#ffffff",
        role.Light: "#4a4a4a",
        role.Midlight: "#404040",
        # Mid is also the muted text colour of notes ("color: palette(mid)"): a grey that
        # reads on the dark background (#303030 made them vanish).
        role.Mid: "#8c8c8c",
        role.Dark: "#202020",
        role.Shadow: "#111111",
    }
    for colour_role, colour in colours.items():
        palette.setColor(colour_role, QColor(colour))
    for colour_role in (role.WindowText, role.Text, role.ButtonText):
        palette.setColor(group.Disabled, colour_role, QColor("#7a7a7a"))
    return palette


def light_palette(standard: QPalette) -> QPalette:
    """Fusion's own light palette (``standard``) with the roles its text is drawn in
    made readable: its selection (#308cc6) gave white text 3.7:1, its placeholder grey
    3.9:1 on the window."""
    palette = QPalette(standard)
    role = QPalette.ColorRole
    palette.setColor(role.Highlight, QColor("#2560a8"))
    palette.setColor(role.HighlightedText, QColor("#ffffff"))
    palette.setColor(role.PlaceholderText, QColor("#6b6b6b"))
    palette.setColor(role.Link, QColor("#1f5c99"))
    return palette


def palette_for(scheme: Any) -> QPalette | None:
    """A dark palette for ``Qt.ColorScheme.Dark``; None (the light one) otherwise."""
    dark = getattr(getattr(Qt, "ColorScheme", None), "Dark", None)
    if dark is not None and scheme == dark:
        return dark_palette()
    return None


def _app_palette() -> QPalette:
    from PySide6.QtGui import QGuiApplication

    return QGuiApplication.palette()


def is_dark(palette: QPalette | None = None) -> bool:
    palette = palette if palette is not None else _app_palette()
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


# Colours that carry a meaning, (light, dark): each >= 4.5:1 on its theme's window and
# base colours.
TONES = {
    "error": ("#b3261e", "#ff8a80"),  # errors, "worse", a missing entity
    "better": ("#1b6e37", "#7bd88f"),
    "accent": ("#1f5c99", "#8cc4ff"),  # the triples an annotator judges
    "muted": ("#666666", "#a0a0a0"),  # an absent value in a table
    "head": ("#a04d12", "#f0a860"),  # tiers, as the plots draw them
    "torso": ("#6e4fa0", "#c4a8f0"),
    "tail": ("#1f5c99", "#8cc4ff"),
}
# Either variant of a tone → its name: a table cell coloured under one theme is drawn in
# the other's variant after a switch (IndicatorStyle.drawControl), with no model rebuilt.
_TONE_OF = {QColor(c).rgb(): name for name, pair in TONES.items() for c in pair}


def tone(name: str, palette: QPalette | None = None) -> str:
    """The colour of meaning ``name`` (see :data:`TONES`) for ``palette``'s theme."""
    light, dark = TONES[name]
    return dark if is_dark(palette) else light


def recoloured(html: str, palette: QPalette | None = None) -> str:
    """``html`` with every tone's colour (either variant, as #rrggbb) in the variant of
    ``palette``'s theme: for rich text made where the theme is not known (app/)."""
    dark = is_dark(palette)
    for light_colour, dark_colour in TONES.values():
        wanted = dark_colour if dark else light_colour
        for variant in (light_colour, dark_colour):
            if variant != wanted:
                html = html.replace(variant, wanted)
    return html


def tone_brush(name: str) -> QBrush:
    """A table cell's foreground in tone ``name``, drawn in the theme's variant."""
    return QBrush(QColor(tone(name)))


def muted_colour(palette: QPalette | None = None) -> str:
    """A grey for secondary text in rich text (HTML), which cannot say ``palette(mid)``:
    the text colour mixed 62:38 with the window's, so it reads on light and dark alike
    (#555 vanished on the dark theme's #2b2b2b; 55:45 left 4.5:1 with no margin)."""
    return _mix(palette if palette is not None else _app_palette(), 0.62)


def _mix(palette: QPalette, share: float) -> str:
    text = palette.color(QPalette.ColorRole.WindowText)
    window = palette.color(QPalette.ColorRole.Window)
    pairs = zip(text.getRgb()[:3], window.getRgb()[:3], strict=True)
    mix = [round(share * a + (1 - share) * b) for a, b in pairs]
    return QColor(*mix).name()


class _Watcher(QWidget):
    """Hears the application's palette change and calls every living hook: a hidden
    widget of its own, which ``QApplication.setPalette`` sends ApplicationPaletteChange as
    it sends every widget. A widget's own PaletteChange is not enough: a widget with a
    style sheet has its palette set by the sheet and hears nothing when the
    application's changes. Not an application-wide event filter: that ran Python for
    every event of every object, and each call waited for the interpreter while a job
    computed on another thread, so the window stalled the longer."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("taillens-palette-watcher")
        self.hooks: dict[int, _PaletteHook] = {}

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ApplicationPaletteChange:
            for hook in list(self.hooks.values()):
                hook.fire()
        return super().event(event)


_WATCHER: _Watcher | None = None


def _watcher() -> _Watcher:
    global _WATCHER
    from shiboken6 import isValid

    if _WATCHER is None or not isValid(_WATCHER):  # made again for a new application
        _WATCHER = _Watcher()
    return _WATCHER


class _PaletteHook(QObject):
    def __init__(self, parent: QWidget, callback: Callable[[], None]) -> None:
        super().__init__(parent)
        self._callback = callback
        hooks = _watcher().hooks
        key = id(self)
        hooks[key] = self
        self.destroyed.connect(lambda *_: hooks.pop(key, None))

    def fire(self) -> None:
        try:
            self._callback()
        except RuntimeError:  # its widget was deleted on the C++ side
            _watcher().hooks.pop(id(self), None)


def on_palette_change(widget: QWidget, callback: Callable[[], None]) -> None:
    """Call ``callback`` whenever the application's palette changes (a live theme
    switch), for as long as ``widget`` lives: for rich text and style sheets that hold
    colours, which Qt cannot recolour by itself."""
    _PaletteHook(widget, callback)


class _ThemedText(_PaletteHook):
    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent, self.recolour)
        self.setObjectName("taillens_themed_text")
        self.make: Callable[[], str] = str

        self.shown = ""

    def render(self) -> None:
        widget = self.parent()
        text = self.make()
        if hasattr(widget, "setHtml"):
            widget.setHtml(text)
        else:
            widget.setText(text)  # type: ignore[attr-defined]
        self.shown = self._current()

    def _current(self) -> str:
        widget = self.parent()
        if hasattr(widget, "toPlainText"):
            return widget.toPlainText()  # type: ignore[no-any-return]
        return widget.text()  # type: ignore[attr-defined, no-any-return]

    def recolour(self) -> None:
        # Only while the widget still shows what was made here: text set some other way
        # since (a clear(), a plain message) is not replaced by an older one.
        if self._current() == self.shown:
            self.render()


def themed_text(widget: QWidget, make: Callable[[], str]) -> None:
    """Show ``make()`` (rich text whose colours come from :func:`tone` or
    :func:`muted_colour`) in ``widget`` (a label, or a text view's HTML), and make it
    again after every theme switch; a later call replaces ``make``."""
    hook = widget.findChild(_ThemedText, "taillens_themed_text")
    if hook is None:
        hook = _ThemedText(widget)
    hook.make = make
    hook.render()


def set_muted(widget: QWidget) -> None:
    """Draw ``widget``'s text in :func:`muted_colour`, now and after every theme switch
    (``color: palette(mid)`` in a style sheet is read once, and Mid is a frame colour:
    1.7:1 on the light window)."""

    def apply() -> None:
        sheet = f"color: {muted_colour()}"
        if widget.styleSheet() != sheet:
            widget.setStyleSheet(sheet)

    apply()
    on_palette_change(widget, apply)


def themed_style_sheet(widget: QWidget, make: Callable[[QPalette], str]) -> None:
    """``widget``'s style sheet from ``make(palette)``, made again on every theme switch."""

    def apply() -> None:
        sheet = make(_app_palette())
        if widget.styleSheet() != sheet:
            widget.setStyleSheet(sheet)

    apply()
    on_palette_change(widget, apply)


class IndicatorStyle(QProxyStyle):
    """Fusion, with checkbox and radio indicators (in forms and in item views) outlined
    in a grey >= 3:1 against the window and base colours of both themes (Fusion draws
    an unticked box in the window colour darkened, 1.2:1 on the dark theme and 1.7:1 on
    the light one), and table cells coloured in a tone drawn in the theme's variant."""

    _INDICATORS = (
        QStyle.PrimitiveElement.PE_IndicatorCheckBox,
        QStyle.PrimitiveElement.PE_IndicatorRadioButton,
        QStyle.PrimitiveElement.PE_IndicatorItemViewItemCheck,
    )

    def drawControl(  # noqa: N802 (Qt)
        self,
        element: QStyle.ControlElement,
        option: QStyleOption,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        if element == QStyle.ControlElement.CE_ItemViewItem and isinstance(
            option, QStyleOptionViewItem
        ):
            text = option.palette.color(QPalette.ColorRole.Text)  # type: ignore[attr-defined]
            name = _TONE_OF.get(text.rgb())
            if name is not None:
                option = QStyleOptionViewItem(option)
                option.palette.setColor(  # type: ignore[attr-defined]
                    QPalette.ColorRole.Text,
                    QColor(tone(name, option.palette)),  # type: ignore[attr-defined]
                )
        super().drawControl(element, option, painter, widget)

    def drawPrimitive(  # noqa: N802 (Qt)
        self,
        element: QStyle.PrimitiveElement,
        option: QStyleOption,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        super().drawPrimitive(element, option, painter, widget)
        if element not in self._INDICATORS:
            return
        enabled = bool(option.state & QStyle.StateFlag.State_Enabled)  # type: ignore[attr-defined]
        palette = option.palette  # type: ignore[attr-defined]
        edge = QColor(_mix(palette, 0.62 if enabled else 0.35))
        rect = QRectF(option.rect).adjusted(0.5, 0.5, -0.5, -0.5)  # type: ignore[attr-defined]
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setPen(QPen(edge, 1))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        if element == QStyle.PrimitiveElement.PE_IndicatorRadioButton:
            painter.drawEllipse(rect.adjusted(0.5, 0.5, -0.5, -0.5))
        else:
            painter.drawRoundedRect(rect.adjusted(0, 0, 0, 0), 1.5, 1.5)
        painter.restore()
