"""METEOR with nltk, where a WordNet folder is on this machine (METHODS §7).

The WebNLG challenge's official scripts run METEOR 1.5 (a Java jar with its own paraphrase
tables); offline, TailLens uses nltk's ``meteor_score`` (exact, Porter-stem and WordNet
synonym matches; alpha 0.9, beta 3, gamma 0.5). Its numbers are therefore METEOR as nltk
computes it, not METEOR 1.5's: the signature says so. Texts are lowercased and tokenised
with sacrebleu's 13a tokenizer (METEOR 1.5's ``-norm`` also lowercases and splits
punctuation). With several references the best one counts (nltk's rule). The corpus figure
is the mean of the sentence scores. English only: WordNet and the Porter stemmer are
English; texts of other languages get no METEOR (a note says why).

**WordNet.** nltk needs a WordNet database folder (the WordNet 3.0 ``dict`` files:
``index.noun``, ``data.noun``, … , ``noun.exc``, …). TailLens looks, in this order, at:
the folder the user chose (``--wordnet DIR``, the Score dialog), ``$TAILLENS_WORDNET``,
``corpora/wordnet`` in nltk's data folders (what ``nltk.download("wordnet")`` writes),
and ``/usr/share/wordnet`` (Debian/Ubuntu's ``wordnet-base`` package, installed with
``apt-get install wordnet-base``). Debian's folder has no ``lexnames`` file, which nltk
reads at start-up and METEOR never uses; WordNet 3.0's fixed list is supplied then. When
no folder is found METEOR is absent, never 0, and :func:`wordnet_status` says why (the CLI
prints it, the Score dialog shows it).

nltk refuses to read files outside its data folders (``nltk.pathsec``); the chosen folder
is added to ``nltk.data.path`` before it is read.
"""

from __future__ import annotations

import io
import os
import re
import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core import heavy
from core.errors import UserFacingError
from core.io.files import check_readable
from core.metrics.base import METEOR, CorpusFromSentences, MetricValue, ScoringItem
from core.metrics.details import MeteorDetails
from core.metrics.signature import Signature, library_version

ENV = "TAILLENS_WORDNET"
DEBIAN_FOLDER = Path("/usr/share/wordnet")
REQUIRED = tuple(
    f"{kind}.{pos}" for kind in ("index", "data") for pos in ("noun", "verb", "adj", "adv")
) + tuple(f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv"))
LANGS = ("en",)
NOT_ENGLISH = "METEOR (nltk) is English-only: WordNet and the Porter stemmer are English"
# WordNet 3.0's lexicographer files (its ``lexnames`` file: number, name, part of speech).
_LEXNAMES_TEXT = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute "
    "noun.body noun.cognition noun.communication noun.event noun.feeling noun.food "
    "noun.group noun.location noun.motive noun.object noun.person noun.phenomenon "
    "noun.plant noun.possession noun.process noun.quantity noun.relation noun.shape "
    "noun.state noun.substance noun.time verb.body verb.change verb.cognition "
    "verb.communication verb.competition verb.consumption verb.contact verb.creation "
    "verb.emotion verb.motion verb.perception verb.possession verb.social verb.stative "
    "verb.weather adj.ppl"
)
_LEXNAMES = _LEXNAMES_TEXT.split()
_VERSION = re.compile(r"Word[nN]et (\d+\+?|\d+\.\d+) Copyright")
_POS_NUMBER = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}


@dataclass(frozen=True)
class WordNetStatus:
    """Where WordNet was found (``folder``), or why not (``reason``, and where it looked)."""

    folder: Path | None
    source: str  # "setting", "TAILLENS_WORDNET", "nltk data", "wordnet-base", or ""
    looked_in: tuple[str, ...]
    reason: str = ""

    @property
    def found(self) -> bool:
        return self.folder is not None

    def message(self) -> str:
        """One line for the CLI and the Score dialog."""
        if self.folder is not None:
            return f"WordNet for METEOR: {self.folder} ({self.source})"
        from core.desktop.install import install_kind

        # The bundle runs no nltk downloader: there, only a folder on this machine.
        nltk_data = "" if install_kind() in ("bundle", "deb") else ", or nltk's wordnet data"
        return (
            f"METEOR is absent: {self.reason}. Looked in: {'; '.join(self.looked_in)}. "
            f"Install WordNet 3.0 (e.g. `apt-get install wordnet-base`{nltk_data}) or "
            "choose its folder (--wordnet DIR, or $TAILLENS_WORDNET)"
        )


def _missing_files(folder: Path) -> list[str]:
    return [name for name in REQUIRED if not (folder / name).is_file()]


def _nltk_data_folders() -> list[Path]:
    """``corpora/wordnet`` in nltk's data folders: ``nltk.data.path`` where nltk is loaded,
    else the same default list nltk builds (importing nltk takes seconds: not for a
    dialog's note)."""
    import sys

    loaded = sys.modules.get("nltk.data")
    if loaded is not None:
        folders = [Path(str(p)) for p in loaded.path]
    else:
        folders = [Path(p) for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p]
        folders.append(Path("~/nltk_data").expanduser())
        folders += [
            Path(sys.prefix) / sub for sub in ("nltk_data", "share/nltk_data", "lib/nltk_data")
        ]
        folders += [
            Path(p)
            for p in (
                "/usr/share/nltk_data",
                "/usr/local/share/nltk_data",
                "/usr/lib/nltk_data",
                "/usr/local/lib/nltk_data",
            )
        ]
    return [f / "corpora" / "wordnet" for f in dict.fromkeys(folders)]


def wordnet_status(chosen: str | os.PathLike[str] | None = None) -> WordNetStatus:
    """Find a WordNet folder (cheap: file checks only, nothing is loaded).

    A folder the user chose that is not a WordNet folder is reported as such (METEOR is
    then absent), never silently replaced by another one."""
    if chosen:
        folder = Path(chosen).expanduser()
        if not folder.is_dir():
            return WordNetStatus(
                None, "setting", (str(folder),), f"the WordNet folder {folder} does not exist"
            )
        missing = _missing_files(folder)
        if missing:
            return WordNetStatus(
                None,
                "setting",
                (str(folder),),
                f"{folder} is not a WordNet folder (no {', '.join(missing)})",
            )
        return WordNetStatus(folder, "setting", (str(folder),))
    candidates: list[tuple[Path, str]] = []
    if os.environ.get(ENV):
        candidates.append((Path(os.environ[ENV]).expanduser(), ENV))
    candidates += [(f, "nltk data") for f in _nltk_data_folders()]
    candidates.append((DEBIAN_FOLDER, "wordnet-base"))
    for folder, source in candidates:
        if folder.is_dir() and not _missing_files(folder):
            return WordNetStatus(folder, source, tuple(str(f) for f, _ in candidates))
    return WordNetStatus(
        None,
        "",
        tuple(str(f) for f, _ in candidates),
        "no WordNet database folder was found on this machine",
    )


_READERS: dict[Path, Any] = {}
_LOCK = threading.Lock()


def load_wordnet(folder: Path) -> Any:
    """nltk's WordNet reader over ``folder`` (loaded once per process; ~1.5 s for 3.0)."""
    folder = folder.resolve()
    with _LOCK:
        if folder in _READERS:
            return _READERS[folder]
        with heavy.lock():
            heavy.import_nltk()
            import nltk.data
            from nltk.corpus.reader.wordnet import WordNetCorpusReader

        class LocalWordNet(WordNetCorpusReader):
            """A plain WordNet folder: ``lexnames`` may be missing (Debian's); no OMW."""

            def open(self, file: str) -> Any:
                if file == "lexnames" and not (folder / "lexnames").is_file():
                    return io.StringIO(
                        "".join(
                            f"{i:02d}\t{name}\t{_POS_NUMBER[name.split('.')[0]]}\n"
                            for i, name in enumerate(_LEXNAMES)
                        )
                    )
                return super().open(file)

            def map_wn(self, version: str = "wordnet") -> None:
                return None  # mapping to nltk's own WordNet is for OMW, unused here

        if str(folder) not in [str(p) for p in nltk.data.path]:
            nltk.data.path.append(str(folder))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "multilingual functions are not available"
            reader = LocalWordNet(str(folder), None)
        _READERS[folder] = reader
        return reader


def forget_wordnet() -> None:
    """Let the WordNet readers go (about 60 MB for WordNet 3.0)."""
    with _LOCK:
        _READERS.clear()


class _SynonymCache:
    """The reader as nltk's METEOR uses it (``synsets(word)`` only), each word looked up
    once: most of METEOR's time is WordNet look-ups of the same few thousand words."""

    def __init__(self, reader: Any) -> None:
        import functools

        self.synsets = functools.lru_cache(maxsize=65536)(reader.synsets)


class Meteor(CorpusFromSentences):
    """METEOR (nltk) per text; corpus = mean. Absent (None) without WordNet or in
    languages other than English."""

    name = METEOR

    def __init__(self, wordnet: str | os.PathLike[str] | None = None) -> None:
        self.status = wordnet_status(wordnet)
        self.absent_reason = "" if self.status.found else self.status.message()
        self._reader: Any = None
        self._tokenizer: Any = None

    def signature(self) -> Signature:
        version = library_version("nltk")
        if not self.status.found:
            return Signature.of(METEOR, "nltk", version, {"wordnet": "absent"})
        return Signature.of(
            METEOR,
            "nltk",
            version,
            {
                "alpha": 0.9,
                "beta": 3,
                "gamma": 0.5,
                "match": "exact+porter+wordnet",
                "wordnet": self._wordnet_version(),
                "tok": "13a",
                "case": "lc",
                "multiref": "max",
                "scale": 100,
                "corpus": "mean",
                "lang": "en",
            },
        )

    def _wordnet_version(self) -> str:
        if self.status.folder is None:
            return "unknown"
        try:
            # Checked first (core.io.files): a device or FIFO in its place would be read
            # without end, as one line.
            data = check_readable(self.status.folder / "data.adj")
            with open(data, encoding="utf-8", errors="replace") as handle:
                for _, line in zip(range(40), handle, strict=False):
                    found = _VERSION.search(line)
                    if found:
                        return found.group(1)
        except (OSError, UserFacingError):
            pass
        return "unknown"

    def _tokens(self, text: str) -> list[str]:
        if self._tokenizer is None:
            from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

            self._tokenizer = Tokenizer13a()
        return self._tokenizer(text.lower()).split()

    def sentence_scores(self, items: Sequence[ScoringItem]) -> list[MetricValue]:
        from core.metrics.reference import NO_REFERENCE

        if not self.status.found:
            return [MetricValue(None, MeteorDetails(note=self.absent_reason)) for _ in items]
        with heavy.lock():
            heavy.import_nltk()
            from nltk.translate.meteor_score import meteor_score

        if self._reader is None:
            self._reader = _SynonymCache(load_wordnet(self.status.folder))  # type: ignore[arg-type]
        values = []
        for item in items:
            if not item.references:
                values.append(MetricValue(None, MeteorDetails(note=NO_REFERENCE)))
                continue
            if item.lang not in LANGS:
                values.append(MetricValue(None, MeteorDetails(note=NOT_ENGLISH)))
                continue
            hypothesis = self._tokens(item.text or "")
            references = [self._tokens(ref) for ref in item.references]
            score = (
                meteor_score(references, hypothesis, wordnet=self._reader) if (hypothesis) else 0.0
            )  # nltk divides by zero on an empty hypothesis
            values.append(
                MetricValue(float(score) * 100, MeteorDetails(references=len(item.references)))
            )
        return values

    def corpus_from_sentences(
        self, items: Sequence[ScoringItem], values: Sequence[MetricValue]
    ) -> MetricValue | None:
        scored = [v.value for v in values if v.value is not None]
        if not scored:
            note = self.absent_reason or next(
                (v.details.note for v in values if v.details.note), "nothing to score"
            )
            return MetricValue(None, MeteorDetails(note=note, n=0))
        return MetricValue(
            sum(scored) / len(scored),
            MeteorDetails(
                n=len(scored),
                without_score=len(values) - len(scored),
                aggregate="mean of sentence METEOR",
            ),
        )
