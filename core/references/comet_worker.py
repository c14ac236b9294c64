"""xCOMET in a Python of its own: the worker that ``CometScorer(python=...)`` runs.

``unbabel-comet`` 2.2.7 (the newest) pins ``transformers<5``, ``huggingface-hub<1.0`` and
``numpy<2``, which TailLens's model stack does not satisfy, so it usually lives in a
separate environment. This file is run there by path (``python -I comet_worker.py``):
it imports only the standard library and ``comet``, never TailLens.

Protocol, one JSON object per line:

* in, first: ``{"checkpoint": PATH, "batch": N, "gpus": N}``; out: ``{"ready": true,
  "comet": VERSION}`` once the model is loaded, or ``{"error": MESSAGE}`` and exit 1;
* in, then: ``{"items": [{"src": ..., "mt": ..., "ref": ...?}, ...]}``; out:
  ``{"scores": [...], "spans": [[{"text", "start", "end", "severity"}, ...], ...]}`` or
  ``{"error": MESSAGE}``;
* end of input: exit 0.

Anything comet or its libraries print goes to stderr, Python's prints and native writes
to file descriptor 1 alike, so the replies' stream carries only replies.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def _reply(out: Any, message: dict[str, Any]) -> None:
    out.write(json.dumps(message, ensure_ascii=False) + "\n")
    out.flush()


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0]}" if text else type(error).__name__


def _spans(raw: Any) -> list[dict[str, Any]]:
    spans = []
    for span in raw or []:
        if isinstance(span, dict):
            spans.append(
                {
                    "text": str(span.get("text", "")),
                    "start": int(span.get("start", 0)),
                    "end": int(span.get("end", 0)),
                    "severity": str(span.get("severity", "minor")),
                }
            )
    return spans


def _protocol_stream() -> Any:
    """The replies' own copy of stdout; file descriptor 1 itself then points at stderr,
    so nothing else that writes there (Python's prints, a native library's) reaches the
    protocol."""
    sys.stdout.flush()
    private = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(private, "w", encoding="utf-8")


def main() -> int:
    out = _protocol_stream()
    line = sys.stdin.readline()
    try:
        config = json.loads(line)
        checkpoint = str(config["checkpoint"])
        batch, gpus = int(config["batch"]), int(config["gpus"])
    except (ValueError, KeyError, TypeError) as exc:
        _reply(out, {"error": f"bad first line: {_first_line(exc)}"})
        return 1
    try:
        import comet  # type: ignore[import-not-found,unused-ignore]
        from comet import load_from_checkpoint  # type: ignore[import-not-found,unused-ignore]
    except ImportError as exc:
        _reply(out, {"error": f"unbabel-comet cannot be imported here ({_first_line(exc)})"})
        return 1
    try:
        model = load_from_checkpoint(checkpoint)
    except Exception as exc:  # noqa: BLE001 - any failure is the user's answer
        _reply(out, {"error": f"cannot load {checkpoint}: {_first_line(exc)}"})
        return 1
    _reply(out, {"ready": True, "comet": getattr(comet, "__version__", "?")})
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            items = json.loads(line)["items"]
            output = model.predict(items, batch_size=batch, gpus=gpus, progress_bar=False)
            metadata = getattr(output, "metadata", None)
            spans = getattr(metadata, "error_spans", None) or [[] for _ in items]
            _reply(
                out,
                {
                    "scores": [float(s) for s in output.scores],
                    "spans": [_spans(s) for s in spans],
                },
            )
        except Exception as exc:  # noqa: BLE001
            _reply(out, {"error": f"scoring failed: {_first_line(exc)}"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
