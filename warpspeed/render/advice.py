"""The command line's advice on the model's neutral words.

The model says what it assumed or what is missing ("registers per thread unknown: assumed 32", "... or use the
roofline model."); the command line says which option gives it ("(give --registers)", "--model roofline").
:func:`command_line_words` adds that advice to what the command line prints (text or JSON), and
:func:`advised_notes` to the notes of the documents the web page shows next to their command lines. Adding a
note that wants advice: one pattern here.
"""

from __future__ import annotations

import re
from typing import Any

from ..model.estimate import REGISTERS_UNKNOWN
from ..model.latency import ROOFLINE_INSTEAD

_NOTES = ((re.compile(rf"({re.escape(REGISTERS_UNKNOWN)}: assumed \d+)(?!\d| \()"), r"\1 (give --registers)"),)
"""Advice on the notes of an estimate: (pattern, replacement)."""
_MESSAGES = ((re.compile(rf"or use the {re.escape(ROOFLINE_INSTEAD)}\."), "or use --model roofline."),)
"""Advice on the model's error messages."""


def command_line_words(text: str) -> str:
    """``text`` (a report, a JSON document, an error message) with the command line's advice added."""
    for pattern, words in (*_NOTES, *_MESSAGES):
        text = pattern.sub(words, text)
    return text


def advised_notes(doc: Any) -> Any:
    """``doc`` (a JSON document) with the command line's advice added to every note (the lists under ``notes``)."""
    if isinstance(doc, dict):
        return {k: [_advised(n) for n in v] if k == "notes" and isinstance(v, list) else advised_notes(v)
                for k, v in doc.items()}
    if isinstance(doc, list):
        return [advised_notes(v) for v in doc]
    return doc


def _advised(note: Any) -> Any:
    if not isinstance(note, str):
        return note
    for pattern, words in _NOTES:
        note = pattern.sub(words, note)
    return note
