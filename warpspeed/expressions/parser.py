"""The safe parser of user expression text: own tokenizer and recursive-descent parser, nothing is
ever evaluated by Python; limits on length, nesting and constants."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from warpspeed.errors import InputError

from .linear import Lin, lin_floordiv, lin_mod, lin_scale, lin_to_expr
from .tree import THREAD_VARS, Add, Const, Expr, FloorDiv, Mod, Mul, Var, fmt_int

MAX_TEXT_LENGTH = 10_000
"""Longest expression text :func:`parse` accepts."""

MAX_NESTING = 100
"""Deepest parenthesis nesting :func:`parse` accepts."""

MAX_FLOOR_MOD_NESTING = 50
"""Deepest nesting of ``//``/``%`` in a parsed result; keeps later recursive walks (and dataclass
equality, which costs several frames per level) far from Python's recursion limit."""

MAX_CONSTANT = 2**62
"""Largest magnitude of any constant, factor or divisor in a parsed expression (fits int64)."""

_MAX_LITERAL_DIGITS = 30
_SNIPPET_CHARS = 60


_DIGITS = frozenset("0123456789")
_NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_NAME_CHARS = _NAME_START | _DIGITS
_SPACE = frozenset(" \t\r\n\f\v")


def _snippet(text: str) -> str:
    """Quoted, one-line, length-limited excerpt of user text for error messages."""
    if len(text) > _SNIPPET_CHARS:
        text = text[: _SNIPPET_CHARS - 3] + "..."
    return repr(text)


@dataclass(frozen=True)
class _Token:
    kind: str  # "int", "name", "op", "end"
    text: str
    pos: int  # 0-based offset in the text


class _Parser:
    """Tokenizer and recursive-descent parser producing canonical linear combinations.

    Values are kept as ``Lin`` while parsing, so every intermediate result is already simplified
    and long chains (``1+1+...``, ``x*2*2*...``) stay flat and cheap.
    """

    def __init__(self, text: str, names: Mapping[str, int], where: str) -> None:
        self.text = text
        self.names = names
        self.where = where
        self._tokens = self._tokenize()  # lazy: errors surface in reading order
        self.tok = next(self._tokens)
        self.depth = 0

    # -- errors -------------------------------------------------------------------------------

    def error(self, message: str, pos: int) -> InputError:
        return InputError(f"{self.where}: {message} (at column {pos + 1})")

    # -- tokenizer ----------------------------------------------------------------------------

    def _tokenize(self) -> Iterator[_Token]:
        text, n, i = self.text, len(self.text), 0
        while i < n:
            c = text[i]
            if c in _SPACE:
                i += 1
            elif c in _DIGITS or (c == "." and i + 1 < n and text[i + 1] in _DIGITS):
                j = self._number_end(i)
                yield _Token("int", text[i:j], i)
                i = j
            elif c in _NAME_START:
                j = i
                while j < n and text[j] in _NAME_CHARS:
                    j += 1
                yield _Token("name", text[i:j], i)
                i = j
            elif text.startswith("//", i):
                yield _Token("op", "//", i)
                i += 2
            elif c == "/":
                raise self.error("'/' (true division) is not allowed; use '//' for floor division", i)
            elif text.startswith("**", i):
                raise self.error("'**' (power) is not allowed", i)
            elif c in "+-*%()":
                yield _Token("op", c, i)
                i += 1
            elif c in "<>=!":
                op = text[i : i + 2] if text[i + 1 : i + 2] == "=" else c
                raise self.error(f"comparison or assignment {op!r} is not allowed", i)
            elif c in "[]{}":
                raise self.error(f"bracket {c!r} is not allowed; only parentheses group", i)
            elif c in "'\"":
                raise self.error(f"string literals are not allowed (found {c!r})", i)
            elif c == ",":
                raise self.error("',' is not allowed (there are no function calls or tuples)", i)
            else:
                raise self.error(f"unexpected character {c!r}", i)
        while True:
            yield _Token("end", "", n)

    def _number_end(self, i: int) -> int:
        """End offset of the integer literal at ``i``; floats and malformed literals are errors."""
        text, n = self.text, len(self.text)
        j = i
        while j < n and text[j] in _DIGITS:
            j += 1
        if j < n and (text[j] in _NAME_CHARS or text[j] == "."):
            k = j
            while k < n and (text[k] in _NAME_CHARS or text[k] == "."):
                k += 1
            literal = text[i:k]
            lowered = literal.lower()
            is_float = "." in literal or ("e" in lowered and lowered.replace("e", "", 1).isdigit())
            if is_float:
                raise self.error(f"float literal {_snippet(literal)} is not allowed; only integers", i)
            raise self.error(f"invalid integer literal {_snippet(literal)}", i)
        if j - i > _MAX_LITERAL_DIGITS:
            raise self.error(f"integer literal {_snippet(text[i:j])} is too long", i)
        return j

    # -- grammar ------------------------------------------------------------------------------
    # expr    := term (("+" | "-") term)*
    # term    := unary (("*" | "//" | "%") unary)*
    # unary   := ("+" | "-")* primary
    # primary := INT | NAME | "(" expr ")"

    def advance(self) -> None:
        self.tok = next(self._tokens)

    def parse(self) -> Lin:
        if self.tok.kind == "end":
            raise InputError(f"{self.where}: empty expression")
        value, _ = self.expr()
        tok = self.tok
        if tok.kind != "end":
            if tok.text == ")":
                raise self.error("unmatched ')'", tok.pos)
            raise self.error(f"unexpected {_describe(tok)} after a complete expression", tok.pos)
        return value

    def expr(self) -> tuple[Lin, int]:
        """Returns the value and the start offset of its text."""
        acc, start = self.term()
        acc = Lin(dict(acc.terms), acc.const)
        while (tok := self.tok).text in ("+", "-") and tok.kind == "op":
            self.advance()
            right, _ = self.term()
            sign = 1 if tok.text == "+" else -1
            for atom, coeff in right.terms.items():  # in-place merge keeps long sums linear-time
                new = acc.terms.get(atom, 0) + sign * coeff
                if new:
                    acc.terms[atom] = new
                else:
                    del acc.terms[atom]
            acc.const += sign * right.const
        return acc, start

    def term(self) -> tuple[Lin, int]:
        left, start = self.unary()
        while (tok := self.tok).kind == "op" and tok.text in ("*", "//", "%"):
            self.advance()
            right, right_start = self.unary()
            end = self.tok.pos
            shown = _snippet(self.text[start:end].strip())
            if tok.text == "*":
                if left.is_const():
                    left = lin_scale(right, left.const)
                elif right.is_const():
                    left = lin_scale(left, right.const)
                else:
                    raise self.error(
                        f"{shown} is not quasi-affine: a product needs a constant factor", tok.pos
                    )
                continue
            divisor_text = _snippet(self.text[right_start:end].strip())
            if not right.is_const():
                raise self.error(
                    f"in {shown} the divisor {divisor_text} of {tok.text!r} must be a positive constant",
                    tok.pos,
                )
            if right.const <= 0:
                raise self.error(
                    f"in {shown} the divisor {divisor_text} of {tok.text!r} must be a positive constant, "
                    f"it is {fmt_int(right.const)}",
                    tok.pos,
                )
            left = lin_floordiv(left, right.const) if tok.text == "//" else lin_mod(left, right.const)
            depth = max((_atom_depth(atom) for atom in left.terms), default=0)
            if depth > MAX_FLOOR_MOD_NESTING:
                raise self.error(
                    f"{shown} nests '//' and '%' more than {MAX_FLOOR_MOD_NESTING} levels deep", tok.pos
                )
        return left, start

    def unary(self) -> tuple[Lin, int]:
        sign = 1
        start = self.tok.pos
        while (tok := self.tok).kind == "op" and tok.text in ("+", "-"):
            self.advance()
            if tok.text == "-":
                sign = -sign
        value = self.primary()
        return (value if sign == 1 else lin_scale(value, -1)), start

    def primary(self) -> Lin:
        tok = self.tok
        if tok.kind == "int":
            self.advance()
            return Lin({}, int(tok.text))
        if tok.kind == "name":
            self.advance()
            after = self.tok
            if after.kind == "op" and after.text == "(":
                raise self.error(f"function calls are not allowed: {_snippet(tok.text + '(')}", tok.pos)
            if tok.text in THREAD_VARS:
                return Lin({Var(tok.text): 1}, 0)
            if tok.text in self.names:
                return Lin({}, self.names[tok.text])
            valid = ", ".join([*THREAD_VARS, *sorted(self.names)])
            raise self.error(f"unknown name {_snippet(tok.text)}; valid names are: {valid}", tok.pos)
        if tok.kind == "op" and tok.text == "(":
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise self.error(f"parentheses nest more than {MAX_NESTING} levels deep", tok.pos)
            self.advance()
            value, _ = self.expr()
            close = self.tok
            if close.kind != "op" or close.text != ")":
                raise self.error(
                    f"missing ')' for the '(' at column {tok.pos + 1}, found {_describe(close)}", close.pos
                )
            self.advance()
            self.depth -= 1
            return value
        raise self.error(f"expected a number, a name or '(' but found {_describe(tok)}", tok.pos)


def _describe(tok: _Token) -> str:
    if tok.kind == "end":
        return "the end of the expression"
    if tok.kind == "name":
        return f"name {_snippet(tok.text)}"
    if tok.kind == "int":
        return f"number {_snippet(tok.text)}"
    return repr(tok.text)


def _atom_depth(e: Expr) -> int:
    """Nesting depth of FloorDiv/Mod nodes in ``e``."""
    if isinstance(e, FloorDiv | Mod):
        return 1 + _atom_depth(e.expr)
    if isinstance(e, Add):
        return max((_atom_depth(t) for t in e.terms), default=0)
    if isinstance(e, Mul):
        return _atom_depth(e.expr)
    return 0


def _too_large(e: Expr) -> bool:
    """Whether any constant, factor or divisor in ``e`` exceeds ``MAX_CONSTANT`` in magnitude."""
    if isinstance(e, Const):
        return abs(e.value) > MAX_CONSTANT
    if isinstance(e, Add):
        return any(_too_large(t) for t in e.terms)
    if isinstance(e, Mul):
        return abs(e.factor) > MAX_CONSTANT or _too_large(e.expr)
    if isinstance(e, FloorDiv | Mod):
        return e.divisor > MAX_CONSTANT or _too_large(e.expr)
    return False


def parse(text: str, *, names: Mapping[str, int] | None = None, where: str = "expression") -> Expr:
    """Parse a quasi-affine integer expression of ``tidx, tidy, tidz``; result is simplified.

    ``names`` binds further identifiers (``nx``, user parameters) to integer constants.  Nothing
    in ``text`` is ever executed; any invalid input raises :class:`InputError` whose one-line
    message starts with ``where`` and names the offending part and its column.
    """
    where = str(where)
    if not isinstance(text, str):
        raise InputError(f"{where}: expected the expression as a string, got {type(text).__name__}")
    names = dict(names or {})
    for name, value in names.items():
        if name in THREAD_VARS:
            raise InputError(f"{where}: the name {name!r} is a thread coordinate and cannot be bound")
        if not isinstance(value, int | np.integer) or isinstance(value, bool):
            kind = type(value).__name__
            raise InputError(f"{where}: the value of name {name!r} must be an int, got {kind}")
        names[name] = int(value)
    if len(text) > MAX_TEXT_LENGTH:
        raise InputError(
            f"{where}: expression is too long ({len(text)} characters, at most {MAX_TEXT_LENGTH})"
        )
    result = lin_to_expr(_Parser(text, names, where).parse())
    if _too_large(result):
        raise InputError(
            f"{where}: {_snippet(text.strip())} has a constant larger than {MAX_CONSTANT} in magnitude"
        )
    return result
