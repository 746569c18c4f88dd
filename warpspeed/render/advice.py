"""The command line's advice on the neutral words of the model and the studies.

They say what they assumed or what is missing ("registers per thread unknown: assumed 32", "... or use the
roofline model.", "Try fewer threads per block or fewer registers."); the command line says which option gives
it ("(give --registers)", "--model roofline", "--threads 128,256"). :func:`command_line_words` adds that advice
to what the command line prints (text, JSON, error messages); the page adds it to the notes it shows next to
their command lines (:func:`advised_notes`) and to its error messages, whose options it then names as its
fields. A new note or message that wants advice: one entry here.
"""

from __future__ import annotations

import re
from typing import Any

from ..model.estimate import REGISTERS_UNKNOWN
from ..model.latency import ROOFLINE_INSTEAD

_NOTES = ((re.compile(rf"({re.escape(REGISTERS_UNKNOWN)}: assumed \d+)(?!\d| \()"), r"\1 (give --registers)"),)
"""Advice on the notes of an estimate: (pattern, replacement)."""
_MESSAGES = tuple((re.compile(re.escape(neutral)), advised) for neutral, advised in (
    (f"or use the {ROOFLINE_INSTEAD}.", "or use --model roofline."),
    ("an earlier ranking's cache wrote.", "an earlier --cache run wrote."),
    ("screen must be a positive number of best configurations", "screen (--screen) must be a positive number of "
                                                                 "best configurations"),
    ("empty: check the thread counts, block extents", "empty: check --threads, block extents"),
    ("domain for all (domain=), or state", "domain for all (--domain X,Y,Z; domain=), or state"),
    ("@N as a candidate's text, Candidate(", "@N on the command line, Candidate("),
    ("Try fewer threads per block or fewer registers.", "Try fewer threads per block (--threads 128,256) or fewer "
                                                        "registers (--registers N)."),
))
"""Advice on the model's and the studies' error messages: (neutral words, the command line's)."""


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
