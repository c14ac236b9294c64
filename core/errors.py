"""Errors whose message is written for the user.

``str(error)`` says what happened, to which file or service, and what to do. The
GUI shows it as is; the CLI prints it and exits with status 2. Anything else that
escapes is a bug and is reported with its traceback.
"""


class UserFacingError(Exception):
    """Base of every error that carries a message fit to show a user."""
