"""Bundled files: icons, style, prompt templates, category table, demo data."""

from pathlib import Path

RESOURCES_DIR = Path(__file__).resolve().parent


def resource_path(*parts: str) -> Path:
    return RESOURCES_DIR.joinpath(*parts)
