"""Models from the Hugging Face hub: pull one into the standard cache, list, remove.

Everything goes through ``huggingface_hub``'s own functions into its standard cache
(``HF_HUB_CACHE``; :func:`core.local_models.loader.hf_cache_dir`), so every other tool shares what
TailLens pulls and TailLens lists what they pulled:

* :func:`plan_pull`: ``HfApi.model_info(files_metadata=True)`` gives the commit, the
  files and their sizes before anything is downloaded; :func:`check_disk` compares what
  is still missing with the free space of the cache's disk.
* :func:`pull`: each file's metadata (``get_hf_file_metadata``: ETag, size, where it
  lives), then its bytes with ``http_get`` into ``blobs/<etag>.taillens-partial``,
  appended from where the file already ends: a pull killed or cancelled resumes at that
  byte (``huggingface_hub``'s own ``hf_hub_download`` writes to a per-process temporary
  file it deletes on failure, so it restarts a killed file from zero). A dropped
  connection is resumed by ``http_get`` itself (a ``Range`` request). The finished blob
  is renamed into place and ``hf_hub_download`` links it into the snapshot, as for any
  download. Progress reports bytes, speed and time left; cancel is asked every chunk.
* Failures become one line (:class:`PullError`): a gated repository (where to accept the
  licence, ``HF_TOKEN``), a private or missing one, a missing revision, no network,
  ``HF_HUB_OFFLINE`` set, a full disk.
* :func:`list_models` reads the cache and the user's model folders: size on disk, kind
  (:func:`model_kind`: causal, seq2seq, encoder, translation, QE) from the config and the
  card, languages from the card, where it is. :func:`remove_model` deletes a cached
  model with ``scan_cache_dir().delete_revisions``.

``huggingface_hub`` is imported inside the functions (it pulls in httpx).
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import partial as partial_call
from pathlib import Path
from typing import Any

from core.errors import UserFacingError
from core.io.atomic import write_text_atomically
from core.io.safe_names import UnsafeNameError, commit_id, inside, path_part, relative_path, shown
from core.jobs import Job, JobContext
from core.labels import duration_words
from core.local_models.installed import card_languages
from core.local_models.loader import (
    ModelError,
    _folder_size,
    hf_cache_dir,
    human_size,
)

PARTIAL_SUFFIX = ".taillens-partial"
# Room left free beyond the download itself (the filesystem, the session, logs).
DISK_MARGIN = 256 * 1024 * 1024
# huggingface_hub reads a download in 10 MB chunks: at 1 MB/s a cancel or a progress
# report would wait 10 s, and a kill would lose up to 10 MB. TailLens reads 1 MiB ones.
CHUNK_BYTES = 1 << 20
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
# Every wait on the hub has an end, whatever the server does (a socket timeout bounds one
# read, and a server that drips a byte before each timeout would hold a pull forever):
# the model's metadata and each file's, at most METADATA_DEADLINE_S; a file's bytes, at
# most DOWNLOAD_BASE_S plus its size at DOWNLOAD_FLOOR_BPS, and never STALL_S without a
# whole chunk arriving. Ctrl+C (a cancel) is looked at every POLL_S meanwhile.
METADATA_DEADLINE_S = 60.0
DOWNLOAD_BASE_S = 120.0
DOWNLOAD_FLOOR_BPS = 16 * 1024
STALL_S = 90.0
POLL_S = 0.05


class PullError(ModelError):
    """A pull that cannot start or finish, with the reason and what to do."""


@dataclass(frozen=True)
class HubFile:
    name: str
    size: int | None


@dataclass(frozen=True)
class PullPlan:
    """What a pull will fetch, known before any byte of it is downloaded."""

    repo_id: str
    revision: str  # as asked ("main", a tag, a commit)
    commit: str  # the commit it resolves to
    files: tuple[HubFile, ...]
    cached_bytes: int  # already in the cache (whole files, and partial ones)
    free_bytes: int  # on the cache's disk
    cache: Path
    gated: bool = False
    languages: tuple[str, ...] = ()

    @property
    def total_bytes(self) -> int:
        return sum(f.size or 0 for f in self.files)

    @property
    def missing_bytes(self) -> int:
        return max(0, self.total_bytes - self.cached_bytes)

    def describe(self) -> str:
        gated = ", gated" if self.gated else ""
        return (
            f"{self.repo_id} @ {self.commit[:10]}: {len(self.files)} files, "
            f"{human_size(self.total_bytes)} ({human_size(self.missing_bytes)} to download"
            f"{gated}); {human_size(self.free_bytes)} free in {self.cache}"
        )


@dataclass
class PullResult:
    repo_id: str
    commit: str
    path: Path
    downloaded_bytes: int
    resumed_bytes: int  # bytes a previous, killed or cancelled pull had left
    seconds: float
    files: int

    @property
    def bytes_per_s(self) -> float:
        return self.downloaded_bytes / self.seconds if self.seconds > 0 else 0.0


# --- errors ------------------------------------------------------------------------------


def endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


def check_repo_id(repo_id: str) -> str:
    text = (repo_id or "").strip()
    if not _REPO_ID.match(text) or ".." in text or text.endswith(".git"):
        raise PullError(
            f"{repo_id!r} is not a model id on the hub: name it ORG/NAME "
            "(e.g. google/flan-t5-small)"
        )
    return text


def explain(error: BaseException, repo_id: str, revision: str | None = None) -> UserFacingError:
    """One line for a hub failure: gated, private or missing, no network, offline, disk."""
    import httpx2
    from huggingface_hub import errors as hub_errors

    where = endpoint()
    if isinstance(error, UnsafeNameError):
        return PullError(f"{where} gave {repo_id} a name TailLens will not write: {error}")
    if isinstance(error, UserFacingError):
        return error
    if isinstance(error, hub_errors.GatedRepoError):
        return PullError(
            f"{repo_id} is gated: accept its licence at {where}/{repo_id} (logged in), then "
            f"give TailLens a read token: set HF_TOKEN (from {where}/settings/tokens) or run "
            "'hf auth login'"
        )
    if isinstance(error, hub_errors.RevisionNotFoundError):
        return PullError(f"{repo_id} has no revision {revision!r} on {where}")
    if isinstance(error, hub_errors.RepositoryNotFoundError):
        token = "" if _has_token() else " (no token is set: for a private model set HF_TOKEN)"
        return PullError(
            f"{repo_id} was not found on {where}, or it is private{token}; check the name"
        )
    if isinstance(error, hub_errors.RemoteEntryNotFoundError):
        return PullError(f"{repo_id}: a file it lists is missing on {where}; try again later")
    if isinstance(error, hub_errors.OfflineModeIsEnabled) or (
        isinstance(error, hub_errors.LocalEntryNotFoundError) and _offline()
    ):
        return PullError(
            "HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) is set: unset it to download models"
        )
    if isinstance(error, hub_errors.HfHubHTTPError):
        status = getattr(getattr(error, "response", None), "status_code", None)
        if status in (401, 403):
            return PullError(
                f"{where} refused {repo_id} ({status}): it may be gated or private; accept its "
                f"licence at {where}/{repo_id} and set HF_TOKEN (a read token)"
            )
        return PullError(f"{where} answered {status} for {repo_id}; try again later")
    if isinstance(error, (httpx2.ConnectError, httpx2.TimeoutException, httpx2.NetworkError)):
        return PullError(
            f"cannot reach {where} (no network?): {_first_line(error)}; connect and run the "
            "same pull again: it resumes where it stopped"
        )
    if isinstance(error, hub_errors.LocalEntryNotFoundError):
        return PullError(f"cannot reach {where} (no network?); connect and pull again")
    if isinstance(error, httpx2.TooManyRedirects):
        return PullError(f"{where} redirected {repo_id} too many times (a redirect loop)")
    if isinstance(error, httpx2.HTTPError):
        return PullError(
            f"the connection to {where} broke off for {repo_id} ({_first_line(error)}); "
            "pull again: it resumes"
        )
    if isinstance(error, ValueError | KeyError | TypeError | AttributeError):
        # A reply that is not the hub's API (a web page, JSON of another shape).
        return PullError(
            f"{where} answered {repo_id} with something that is not the Hugging Face hub's "
            f"API ({type(error).__name__}: {_first_line(error)[:120]}); is HF_ENDPOINT a hub?"
        )
    if isinstance(error, OSError) and error.errno is not None:
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            return PullError(
                f"the disk of {hf_cache_dir()} is full; free some space (models remove) and "
                "pull again: it resumes"
            )
        return PullError(f"cannot write the hub cache {hf_cache_dir()}: {_first_line(error)}")
    if isinstance(error, OSError) and "Consistency check failed" in str(error):
        return PullError(f"{repo_id}: a file arrived incomplete; pull again (it resumes)")
    raise error


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _has_token() -> bool:
    from huggingface_hub import get_token

    return get_token() is not None


def _offline() -> bool:
    """Whether huggingface_hub refuses the network now (inside :func:`_hub_settings`:
    whether the user switched it off)."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


# huggingface_hub reads its offline switch and its download chunk size from module
# constants at each call, with no argument to pass them per call: a pull sets them for
# the calls it makes and puts them back when the last pull running ends.
_SETTINGS_LOCK = threading.Lock()
_settings_users = 0
_saved_settings: dict[str, Any] = {}


@contextmanager
def _hub_settings() -> Iterator[None]:
    """Within the block, huggingface_hub reads downloads in :data:`CHUNK_BYTES` chunks and
    is online unless the user switched it off. Loading a model switches it off for this
    process too (``core.local_models.loader``, the metrics' encoders set HF_HUB_OFFLINE=1);
    that switch is TailLens's own, for loading (loads pass local_files_only themselves), and a pull
    the user asks for lifts it while it runs."""
    global _settings_users
    from huggingface_hub import constants

    import core

    with _SETTINGS_LOCK:
        if _settings_users == 0:
            _saved_settings.update(
                offline=constants.HF_HUB_OFFLINE, chunk=constants.DOWNLOAD_CHUNK_SIZE
            )
            user = (core.USER_HF_HUB_OFFLINE or "").strip().upper() in ("1", "ON", "YES", "TRUE")
            if constants.HF_HUB_OFFLINE and not user and os.environ.get("HF_HUB_OFFLINE") == "1":
                constants.HF_HUB_OFFLINE = False
            constants.DOWNLOAD_CHUNK_SIZE = CHUNK_BYTES
        _settings_users += 1
    try:
        yield
    finally:
        with _SETTINGS_LOCK:
            _settings_users -= 1
            if _settings_users == 0:
                constants.HF_HUB_OFFLINE = _saved_settings["offline"]
                constants.DOWNLOAD_CHUNK_SIZE = _saved_settings["chunk"]


# --- planning ----------------------------------------------------------------------------


def _storage(repo_id: str) -> Path:
    from huggingface_hub.file_download import repo_folder_name

    return hf_cache_dir() / repo_folder_name(repo_id=repo_id, repo_type="model")


def _free_bytes(folder: Path) -> int:
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return shutil.disk_usage(probe).free


def _require_hub(what: str) -> None:
    """huggingface_hub comes with the model stack (the bundle has none)."""
    from core.heavy import require_model_stack

    require_model_stack(what, "huggingface_hub", "yaml")


def _size(value: object) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1 << 53:
        raise ValueError(f"a file size of {shown(value)}")
    return value


class _Abandoned(Exception):
    pass


def wait_for(call: Callable[[], Any], ctx: JobContext, deadline_s: float, doing: str) -> Any:
    """``call()`` run on a helper thread while this one waits at most ``deadline_s``,
    looking at ``ctx``'s cancel every :data:`POLL_S` (a Ctrl+C acts at once): past the
    deadline a :class:`PullError`, on a cancel ``JobCancelled``; the helper thread, left
    waiting on the network, ends with the process or its connection."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # handed to the waiting thread
            outcome["error"] = exc

    helper = threading.Thread(target=run, name=f"hub: {doing}", daemon=True)
    helper.start()
    end = time.monotonic() + deadline_s
    while helper.is_alive():
        helper.join(POLL_S)
        ctx.check_cancelled()
        if helper.is_alive() and time.monotonic() > end:
            raise PullError(
                f"{endpoint()} did not finish {doing} within {deadline_s:g} s; "
                "try again later (a pull resumes where it stopped)"
            )
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def plan_pull(repo_id: str, revision: str | None = None, ctx: JobContext | None = None) -> PullPlan:
    """The commit, files and sizes of ``repo_id`` at ``revision``, from the hub's metadata;
    nothing is downloaded. Raises :class:`PullError` (gated, not found, no network)."""
    repo_id = check_repo_id(repo_id)
    _require_hub("pulling a model")
    with _hub_settings():
        return _plan_pull(repo_id, revision, ctx)


def _plan_pull(repo_id: str, revision: str | None, ctx: JobContext | None) -> PullPlan:
    from huggingface_hub import HfApi

    if _offline():
        raise PullError(
            "HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) is set: unset it to download models"
        )
    if revision is not None:
        try:
            relative_path(revision, what="the revision")
        except UnsafeNameError as exc:
            raise PullError(str(exc)) from None
    try:
        info = wait_for(
            lambda: HfApi(endpoint=endpoint()).model_info(
                repo_id, revision=revision, files_metadata=True
            ),
            ctx or JobContext(),
            METADATA_DEADLINE_S,
            f"describing {repo_id}",
        )
        if not info.sha:
            raise PullError(f"{endpoint()} gave no commit for {repo_id}; it is not a hub endpoint")
        commit_id(info.sha, what=f"the commit the hub gave for {repo_id}")
        hub_files = tuple(
            HubFile(relative_path(s.rfilename, what="the file name"), _size(s.size))
            for s in (info.siblings or [])
        )
    except Exception as exc:
        from core.jobs import JobCancelled

        if isinstance(exc, JobCancelled):
            raise
        raise explain(exc, repo_id, revision) from exc
    storage = _storage(repo_id)
    cached = 0
    snapshot = storage / "snapshots" / info.sha
    for f in hub_files:
        if (snapshot / f.name).exists():
            cached += f.size or 0
    blobs = storage / "blobs"
    if blobs.is_dir():
        cached += sum(p.stat().st_size for p in blobs.glob("*" + PARTIAL_SUFFIX))
    card = info.card_data
    languages = card_languages(card.to_dict() if card is not None else {})
    return PullPlan(
        repo_id=repo_id,
        revision=revision or "main",
        commit=info.sha,
        files=hub_files,
        cached_bytes=cached,
        free_bytes=_free_bytes(hf_cache_dir()),
        cache=hf_cache_dir(),
        gated=bool(info.gated),
        languages=languages,
    )


def check_disk(plan: PullPlan) -> None:
    """Refuse a pull the cache's disk cannot hold (what is missing plus a margin)."""
    need = plan.missing_bytes + DISK_MARGIN
    if plan.free_bytes < need:
        raise PullError(
            f"{plan.repo_id} needs {human_size(plan.missing_bytes)} more, and {plan.cache} has "
            f"{human_size(plan.free_bytes)} free (keeping {human_size(DISK_MARGIN)} spare): "
            "free some space (taillens models remove) or set HF_HUB_CACHE to a larger disk"
        )


# --- pulling -----------------------------------------------------------------------------


class _Rate:
    """Speed over the last few seconds, and the time left at that speed."""

    def __init__(self, window_s: float = 5.0) -> None:
        self.window_s = window_s
        self.samples: list[tuple[float, int]] = []

    def add(self, done: int) -> None:
        now = time.monotonic()
        self.samples.append((now, done))
        while len(self.samples) > 2 and now - self.samples[0][0] > self.window_s:
            self.samples.pop(0)

    def per_s(self) -> float:
        if len(self.samples) < 2:
            return 0.0
        (t0, d0), (t1, d1) = self.samples[0], self.samples[-1]
        return (d1 - d0) / (t1 - t0) if t1 > t0 else 0.0


def progress_words(done: int, total: int, per_s: float) -> str:
    """'12.0 MB of 480.0 MB, 3.1 MB/s, 2 min 31 s left'."""
    words = f"{human_size(done)} of {human_size(total)}"
    if per_s > 0:
        left = max(0.0, (total - done) / per_s)
        words += f", {human_size(int(per_s))}/s, {duration_words(left)} left"
    return words


def _progress_class(on_bytes: Callable[[int], None]) -> type:
    """A tqdm stand-in for ``http_get``: every chunk goes to ``on_bytes`` (which may
    raise JobCancelled: the partial file stays, and the next pull resumes it)."""

    class _Bytes:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            pass

        def __enter__(self) -> _Bytes:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def close(self) -> None:
            return None

        def update(self, n: float | None = 1) -> None:
            on_bytes(int(n or 0))

    return _Bytes


def pull(plan: PullPlan, ctx: JobContext | None = None) -> PullResult:
    """Download what ``plan`` lists that the cache lacks; returns the snapshot folder.

    Resumes files a killed or cancelled pull left (``blobs/<etag>.taillens-partial``)."""
    _require_hub("pulling a model")
    check_disk(plan)
    with _hub_settings():
        return _pull(plan, ctx or JobContext())


class _Transfer:
    """A pull's bytes so far (done, downloaded now, resumed from partial files), said as
    progress at each chunk."""

    def __init__(self, ctx: JobContext, total: int) -> None:
        self.ctx = ctx
        self.total = total
        self.rate = _Rate()
        self.done = self.downloaded = self.resumed = 0
        self.last_chunk = [time.monotonic()]
        self.progress_class = _progress_class(self.on_bytes)

    def report(self, message: str = "") -> None:
        self.rate.add(self.downloaded)
        words = progress_words(self.done, self.total, self.rate.per_s())
        self.ctx.progress(self.done, self.total, f"{words}{message}")

    def on_bytes(self, n: int) -> None:
        self.last_chunk[0] = time.monotonic()
        self.done += n
        self.downloaded += n
        self.report()
        self.ctx.check_cancelled()


def _pull(plan: PullPlan, ctx: JobContext) -> PullResult:
    storage = _storage(plan.repo_id)
    transfer = _Transfer(ctx, plan.total_bytes)
    started = time.monotonic()
    transfer.report()
    try:
        for hub_file in plan.files:
            ctx.check_cancelled()
            name = _pull_file(plan, hub_file, storage, transfer)
            transfer.report(f" ({name})")
    except Exception as exc:
        from core.jobs import JobCancelled

        if isinstance(exc, JobCancelled):
            raise
        raise explain(exc, plan.repo_id, plan.revision) from exc
    _write_ref(storage, plan.revision, plan.commit)
    return PullResult(
        repo_id=plan.repo_id,
        commit=plan.commit,
        path=storage / "snapshots" / plan.commit,
        downloaded_bytes=transfer.downloaded,
        resumed_bytes=transfer.resumed,
        seconds=time.monotonic() - started,
        files=len(plan.files),
    )


def _pull_file(plan: PullPlan, hub_file: HubFile, storage: Path, transfer: _Transfer) -> str:
    """One file of the plan into the cache (its blob, unless there, and its snapshot
    link); its name."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url

    name = relative_path(hub_file.name, what="the file name")
    commit = commit_id(plan.commit)
    url = hf_hub_url(plan.repo_id, name, revision=commit, endpoint=endpoint())
    meta = wait_for(
        partial_call(get_hf_file_metadata, url, endpoint=endpoint()),
        transfer.ctx,
        METADATA_DEADLINE_S,
        f"describing {name}",
    )
    if meta.commit_hash not in (None, commit):
        raise PullError(
            f"{endpoint()} served {name} of {plan.repo_id} from commit "
            f"{shown(meta.commit_hash)}, not {commit}; try again later"
        )
    etag = path_part(meta.etag, what=f"the ETag of {name}")
    pointer = inside(storage, storage / "snapshots" / commit / name, what=name)
    blob = inside(storage, storage / "blobs" / etag, what=f"the blob of {name}")
    inside(storage, storage / "blobs" / (etag + PARTIAL_SUFFIX), what=f"the download of {name}")
    if not pointer.exists() and not blob.exists():
        _download_blob(meta, url, blob, hub_file.size, name, transfer)
    else:
        transfer.done += hub_file.size or 0
    # Link the blob into the snapshot as the hub's own downloads do (a relative link),
    # from the names checked above: asking huggingface_hub to do it would ask the server
    # for the file's ETag again, and use whatever it says then.
    if not pointer.exists():
        pointer.parent.mkdir(parents=True, exist_ok=True)
        with suppress(FileNotFoundError):
            pointer.unlink()  # a dangling link of an earlier, broken pull
        _link_blob(blob, pointer)
    inside(storage, pointer, what=name)
    return name


def _download_blob(
    meta: Any, url: str, blob: Path, size: int | None, name: str, transfer: _Transfer
) -> None:
    """The file's bytes into ``blob``, resuming the partial file a stopped pull left."""
    from huggingface_hub.file_download import http_get
    from huggingface_hub.utils import build_hf_headers

    blob.parent.mkdir(parents=True, exist_ok=True)
    partial = blob.parent / (str(meta.etag) + PARTIAL_SUFFIX)
    have = partial.stat().st_size if partial.exists() else 0
    if meta.size is not None and have > meta.size:
        partial.unlink()  # not this file's bytes: start again
        have = 0
    transfer.done += have
    transfer.resumed += have
    headers = build_hf_headers()
    if meta.location != url and _host(meta.location) != _host(url):
        headers.pop("authorization", None)  # a CDN: never send the token there
    with partial.open("r+b" if have else "wb") as handle:
        handle.seek(have)
        _download(
            partial_call(
                http_get,
                meta.location,
                handle,
                resume_size=have,
                headers=headers,
                expected_size=meta.size,
                tqdm_class=transfer.progress_class,
            ),
            transfer.ctx,
            (meta.size or size or 0) - have,
            name,
            transfer.last_chunk,
        )
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(partial, blob)


def _download(
    call: Callable[[], Any], ctx: JobContext, size: int, name: str, last_chunk: list[float]
) -> None:
    """``call()`` (one file's bytes) on a helper thread, ended by a cancel at once, by
    :data:`STALL_S` without a chunk, or by the file's overall deadline."""
    deadline_s = DOWNLOAD_BASE_S + max(0, size) / DOWNLOAD_FLOOR_BPS
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            call()
        except BaseException as exc:  # handed to the waiting thread
            outcome["error"] = exc

    helper = threading.Thread(target=run, name=f"hub: {name}", daemon=True)
    started = last_chunk[0] = time.monotonic()
    helper.start()
    while helper.is_alive():
        helper.join(POLL_S)
        ctx.check_cancelled()
        now = time.monotonic()
        if helper.is_alive() and now - last_chunk[0] > STALL_S:
            raise PullError(
                f"{endpoint()} stopped sending {name} (nothing for {STALL_S:g} s); "
                "pull again: it resumes where it stopped"
            )
        if helper.is_alive() and now - started > deadline_s:
            raise PullError(
                f"{endpoint()} did not send {name} within {deadline_s:,.0f} s; "
                "pull again: it resumes where it stopped"
            )
    if "error" in outcome:
        raise outcome["error"]


def _host(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).netloc


def _link_blob(blob: Path, pointer: Path) -> None:
    """The snapshot's ``pointer`` to ``blob``, as the hub's own downloads make it: a
    relative link, or a copy of the blob where the disk has no links."""
    try:
        os.symlink(os.path.relpath(blob, pointer.parent), pointer)
    except FileExistsError:
        if not (pointer.is_symlink() and pointer.resolve() == blob.resolve()):
            raise
    except (PermissionError, NotImplementedError):
        shutil.copyfile(blob, pointer)
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EROFS, errno.EOPNOTSUPP):
            raise
        shutil.copyfile(blob, pointer)


def _write_ref(storage: Path, revision: str, commit: str) -> None:
    """``refs/<revision>`` names the commit, as the hub's own downloads write it (whole,
    through a temporary name, so a reader never sees half of it)."""
    if revision == commit:
        return
    relative_path(revision, what="the revision")
    ref = inside(storage / "refs", storage / "refs" / revision, what="the revision")
    commit = commit_id(commit)
    if ref.is_file() and ref.read_text(encoding="utf-8", errors="replace") == commit:
        return
    ref.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(ref, commit)


def pull_job(repo_id: str, revision: str | None = None) -> Job[PullResult]:
    """The pull as a core job (the CLI runs it in the foreground, the dialog on a worker)."""
    repo_id = check_repo_id(repo_id)

    def run(ctx: JobContext) -> PullResult:
        ctx.progress(0, None, "reading the model's files on the hub")
        plan = plan_pull(repo_id, revision, ctx)
        ctx.check_cancelled()
        return pull(plan, ctx)

    return Job(
        f"Pull {repo_id}",
        run,
        kind="models-pull",
        params={"repo_id": repo_id, "revision": revision},
        uses_session=False,
    )


# --- listing and removing ----------------------------------------------------------------


def remove_model(repo_id: str) -> int:
    """Delete a model from the hub cache (every revision, with huggingface_hub's own
    cache deletion); returns the bytes freed. Folders the user named are never removed."""
    repo_id = (repo_id or "").strip()
    _require_hub("removing a model")
    from huggingface_hub import scan_cache_dir

    storage = _storage(check_repo_id(repo_id)) if _REPO_ID.match(repo_id) else None
    if storage is None or not storage.is_dir():
        raise PullError(
            f"{repo_id} is not in the Hugging Face cache ({hf_cache_dir()}); 'taillens models "
            "list' shows what is (folders you named are yours to delete)"
        )
    info = scan_cache_dir(hf_cache_dir())
    for repo in info.repos:
        if repo.repo_id == repo_id and repo.repo_type == "model":
            strategy = info.delete_revisions(*[r.commit_hash for r in repo.revisions])
            freed = int(strategy.expected_freed_size)
            strategy.execute()
            # Partial downloads and an empty snapshot-less folder go with it.
            if storage.exists():
                freed += _folder_size(storage)
                shutil.rmtree(storage, ignore_errors=True)
            return freed
    freed = _folder_size(storage)  # only partial downloads: no revision yet
    shutil.rmtree(storage, ignore_errors=True)
    return freed
