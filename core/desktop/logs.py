"""Logging to a rotating file in the user log folder.

Every failure a user sees in the error log panel is also written here, with its
traceback, so a bug report can attach one file.
"""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

from core.desktop import paths

LOG_FILE_NAME = "taillens.log"
_MAX_BYTES = 1_000_000
_BACKUPS = 3
_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(threadName)s] %(message)s"


def log_file() -> Path:
    return paths.log_dir() / LOG_FILE_NAME


def setup_logging(level: int = logging.INFO) -> Path:
    """Attach the rotating file handler to the ``taillens`` logger (idempotent)."""
    logger = logging.getLogger("taillens")
    target = log_file()
    for handler in logger.handlers:
        if (
            isinstance(handler, logging.handlers.RotatingFileHandler)
            and Path(handler.baseFilename) == target
        ):
            return target
    handler = logging.handlers.RotatingFileHandler(
        target, maxBytes=_MAX_BYTES, backupCount=_BACKUPS, encoding="utf-8"
    )
    handler.setFormatter(logging.Formatter(_FORMAT))
    logger.addHandler(handler)
    logger.setLevel(level)
    return target


def get_logger(name: str) -> logging.Logger:
    return logging.getLogger(f"taillens.{name}")
