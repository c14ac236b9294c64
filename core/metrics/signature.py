"""How a metric's numbers were made, as one typed value (after sacrebleu's signatures).

A :class:`Signature` names the metric, the library (or TailLens' own implementation)
and its version, and every setting that changes the number (tokeniser, smoothing, case,
n-gram orders, model and its fingerprint, layer, idf, rescaling, language, …), in a
fixed order. Its one canonical text form is what the ``scores.signature`` column holds
and what reports and exports show::

    metric:bleu|nrefs:var|case:mixed|eff:no|tok:13a|smooth:exp|lib:sacrebleu|version:2.6.0

:meth:`Signature.parse` reads that form back to an equal value. Sessions scored before
signatures were typed hold free-form strings (``nrefs:1|case:mixed|…|version:2.4.0``,
``esa:2|match:…``); :func:`read_signature` gives them back as a :class:`LegacySignature`
that keeps the text as it was, so an old session still shows what it stored.

Values may hold any character: ``%`` and ``|`` are written ``%25`` and ``%7C``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from importlib import metadata

from core.errors import UserFacingError

_KEY = re.compile(r"[A-Za-z0-9_.+@#-]+")
_RESERVED = ("metric", "lib", "version")


class SignatureError(UserFacingError):
    """A text that is not a canonical signature."""


def _escape(value: str) -> str:
    return value.replace("%", "%25").replace("|", "%7C").replace("\n", "%0A")


def _unescape(value: str) -> str:
    return value.replace("%0A", "\n").replace("%7C", "|").replace("%25", "%")


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def library_version(name: str) -> str:
    """An installed distribution's version, "absent" where it is not installed."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "absent"


@dataclass(frozen=True)
class Signature:
    """A metric, its implementation and version, and the settings that change its numbers."""

    metric: str
    library: str
    version: str
    settings: tuple[tuple[str, str], ...] = field(default=())

    def __post_init__(self) -> None:
        for key, value in self.settings:
            if key in _RESERVED or not _KEY.fullmatch(key):
                raise ValueError(f"signature setting name {key!r} is reserved or not a word")
            if not isinstance(value, str):
                raise TypeError(f"signature setting {key!r} must be text, got {value!r}")
        keys = [key for key, _ in self.settings]
        if len(set(keys)) != len(keys):
            raise ValueError(f"signature settings repeat a name: {keys}")
        for name, part in (("metric", self.metric), ("library", self.library)):
            if not part:
                raise ValueError(f"a signature needs its {name}")

    @classmethod
    def of(
        cls,
        metric: str,
        library: str,
        version: str,
        settings: Iterable[tuple[str, object]] | Mapping[str, object] = (),
    ) -> Signature:
        """A signature from settings of any plain type (booleans read yes/no)."""
        pairs = settings.items() if isinstance(settings, Mapping) else settings
        return cls(metric, library, version, tuple((k, _text(v)) for k, v in pairs))

    def get(self, key: str, default: str | None = None) -> str | None:
        return dict(self.settings).get(key, default)

    def __getitem__(self, key: str) -> str:
        value = self.get(key)
        if value is None:
            raise KeyError(key)
        return value

    def with_settings(self, **changes: object) -> Signature:
        """The same signature with some settings changed or added (in order, at the end)."""
        settings = dict(self.settings)
        for key, value in changes.items():
            settings[key] = _text(value)
        return replace(self, settings=tuple(settings.items()))

    def to_json(self) -> dict[str, object]:
        return {
            "metric": self.metric,
            "library": self.library,
            "version": self.version,
            "settings": dict(self.settings),
        }

    def __str__(self) -> str:
        parts = [f"metric:{_escape(self.metric)}"]
        parts += [f"{key}:{_escape(value)}" for key, value in self.settings]
        parts += [f"lib:{_escape(self.library)}", f"version:{_escape(self.version)}"]
        return "|".join(parts)

    @classmethod
    def parse(cls, text: str) -> Signature:
        """The signature a canonical text names; a :class:`SignatureError` otherwise."""
        parts = text.strip().split("|")
        pairs: list[tuple[str, str]] = []
        for part in parts:
            key, colon, value = part.partition(":")
            if not colon or not _KEY.fullmatch(key):
                raise SignatureError(f"not a metric signature: {text!r} (at {part!r})")
            pairs.append((key, _unescape(value)))
        if (
            len(pairs) < 3
            or pairs[0][0] != "metric"
            or pairs[-2][0] != "lib"
            or pairs[-1][0] != "version"
        ):
            raise SignatureError(
                f"not a metric signature: {text!r} (metric:NAME|…|lib:LIBRARY|version:V)"
            )
        try:
            return cls(pairs[0][1], pairs[-2][1], pairs[-1][1], tuple(pairs[1:-2]))
        except (ValueError, TypeError) as error:
            raise SignatureError(f"not a metric signature: {text!r} ({error})") from error


@dataclass(frozen=True)
class LegacySignature:
    """A free-form signature stored before signatures were typed, kept as it was."""

    metric: str | None
    text: str

    def to_json(self) -> dict[str, object]:
        return {"metric": self.metric, "legacy": self.text}

    def __str__(self) -> str:
        return self.text


def read_signature(text: str, metric: str | None = None) -> Signature | LegacySignature:
    """A stored signature: typed where it is canonical, else the legacy text as it was."""
    try:
        return Signature.parse(text)
    except SignatureError:
        return LegacySignature(metric, text)
