"""Why a session file could not be opened or written, in words a user can act on.

Every message names the file and says what to do; the GUI and the CLI show
``str(error)`` as it is.
"""

from __future__ import annotations

from pathlib import Path

from core.errors import UserFacingError


class SessionError(UserFacingError):
    """A session file could not be created, opened, or written."""

    def __init__(self, path: Path | str, message: str) -> None:
        super().__init__(message)
        self.path = Path(path)
        self.message = message

    def __str__(self) -> str:
        return self.message


class SessionMissingError(SessionError):
    """The path does not exist, or it is a folder."""

    def __init__(self, path: Path | str, *, is_directory: bool = False) -> None:
        path = Path(path)
        if is_directory:
            message = (
                f"{path} is a folder, not a session file. "
                "Choose a .taillens file inside it, or create a new session."
            )
        else:
            message = (
                f"The session file {path} does not exist. "
                "Check the name and folder, or create a new session there."
            )
        super().__init__(path, message)


class SessionExistsError(SessionError):
    """A new session was asked for at a path that is already taken."""

    def __init__(self, path: Path | str) -> None:
        path = Path(path)
        super().__init__(
            path,
            f"Cannot create a new session at {path}: a file with that name already exists. "
            "Open it instead, or choose another name.",
        )


class NotASessionError(SessionError):
    """The file is not a TailLens session (not SQLite, empty, or another program's)."""

    def __init__(self, path: Path | str, reason: str) -> None:
        path = Path(path)
        super().__init__(
            path,
            f"{path.name} is not a TailLens session: {reason}. "
            f"The file was not changed. Choose a .taillens file (full path: {path}).",
        )
        self.reason = reason


class SessionForeignSchemaError(SessionError):
    """The file holds what TailLens does not create (a view, a trigger, a virtual table)
    or lacks what it does (a table, a column): nothing of it is read or changed."""

    def __init__(self, path: Path | str, found: str) -> None:
        path = Path(path)
        super().__init__(
            path,
            f"{path.name} is not a session as TailLens writes them: {found}. TailLens does "
            "not open or change such a file (a view or trigger would run as it is read); "
            f"the file was not changed (full path: {path}).",
        )
        self.found = found


class SessionBoundsError(SessionError):
    """Reading the file ran past the bounds every file from elsewhere is read within
    (``core.store.bounds``: a deadline, a longest value): it is refused, unchanged."""

    def __init__(self, path: Path | str, why: str) -> None:
        path = Path(path)
        super().__init__(
            path,
            f"{path.name} is refused: {why}, as no session TailLens writes does; "
            f"the file was left as it was (full path: {path}).",
        )
        self.why = why


class SessionValueTooLongError(SessionError):
    """A write would store a value longer than a session may hold (``core.store.bounds``):
    the change is rolled back; nothing of it is kept."""

    def __init__(self, path: Path | str, value_bytes: int) -> None:
        path = Path(path)
        super().__init__(
            path,
            f"{path.name}: a value longer than {value_bytes:,} bytes was not written (a "
            "session holds none that long); nothing of this change was kept.",
        )


class SessionCorruptError(SessionError):
    """The file is a SQLite database, but truncated or damaged."""

    def __init__(self, path: Path | str, reason: str) -> None:
        path = Path(path)
        super().__init__(
            path,
            f"The session file {path.name} is damaged ({reason}). "
            "The file was not changed. Open a backup or copy of it, or create a new session "
            f"(full path: {path}).",
        )
        self.reason = reason


class SessionReadOnlyError(SessionError):
    """The file, or the folder it is in, cannot be written."""

    def __init__(self, path: Path | str, *, folder: bool = False) -> None:
        path = Path(path)
        if folder:
            message = (
                f"Cannot open {path.name} for writing: its folder {path.parent} is read-only "
                "(TailLens saves every change at once and needs to write next to the file). "
                "Copy the session to a writable folder, or change the folder's permissions."
            )
        else:
            message = (
                f"Cannot open {path.name} for writing: the file is read-only "
                "(TailLens saves every change at once). Copy it to a writable folder, or "
                f"change its permissions (full path: {path})."
            )
        super().__init__(path, message)
        self.folder = folder


class SessionTooNewError(SessionError):
    """The file has a schema revision this version of TailLens does not know."""

    def __init__(self, path: Path | str, revision: str, head: str) -> None:
        path = Path(path)
        super().__init__(
            path,
            f"{path.name} was written by a newer version of TailLens (schema revision "
            f"{revision}; this version knows up to {head}). Update TailLens to open it. "
            f"The file was not changed (full path: {path}).",
        )
        self.revision = revision
        self.head = head


class SessionLockedError(SessionError):
    """Another program held a write lock on the file for longer than the busy timeout."""

    def __init__(self, path: Path | str, detail: str = "") -> None:
        path = Path(path)
        extra = f" ({detail})" if detail else ""
        super().__init__(
            path,
            f"The session {path.name} is in use by another TailLens window or program, "
            f"which is writing to it{extra}. Try again in a moment, or close the other "
            f"window (full path: {path}).",
        )


class SessionStorageError(SessionError):
    """The disk refused a write to the session: full, over quota, or an I/O error.

    SQLite rolls the transaction back, so the file holds every change committed before
    (the last saved state is intact). ``kept`` says what was kept in the user's terms; the
    job that was writing replaces it with what its work saved ("run 3 keeps 120 texts …").
    """

    KEPT = (
        "The change being saved was not written; the session holds everything saved "
        "before it, intact."
    )

    def __init__(
        self,
        path: Path | str,
        problem: str,
        kept: str = "",
        *,
        action: str = "save to the session",
    ) -> None:
        from core.io.files import free_space

        path = Path(path)
        free = free_space(path.parent)
        self.problem = problem
        self.kept = kept or self.KEPT
        self.action = action
        super().__init__(
            path,
            f"Cannot {action} {path.name}: {problem} (in {path.parent}"
            f"{'; ' + free if free else ''}). {self.kept} Free some space and run it "
            f"again (full path: {path}).",
        )

    def with_kept(self, kept: str) -> SessionStorageError:
        """The same error, saying what the work that stopped had saved."""
        return SessionStorageError(self.path, self.problem, kept, action=self.action)
