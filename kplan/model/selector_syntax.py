"""Label selectors written as text, as ``kubectl get -l`` reads them (apimachinery labels.Parse).

Syntax: comma-separated requirements, each one of ``key``, ``!key``, ``key=value``,
``key==value``, ``key!=value``, ``key in (a,b)``, ``key notin (a,b)``, ``key>n``, ``key<n``.
Follows k8s.io/apimachinery/pkg/labels/selector.go: the same lexer (``in``/``notin`` are keywords
only where an operator is expected), an empty value after ``=`` is the empty string, ``()`` is
the set holding the empty string, an empty text selects everything, keys must be qualified names
and values valid label values. Error texts follow upstream's parser; the validation texts follow
k8s.io/apimachinery/pkg/util/validation.
"""

from __future__ import annotations

from kplan.model.name_rules import label_value, qualified_name
from kplan.model.selectors import (
    DOES_NOT_EXIST,
    EXISTS,
    GT,
    IN,
    LT,
    NOT_IN,
    LabelSelector,
    Requirement,
    parse_int64,
)


class SelectorSyntaxError(ValueError):
    """A selector text that labels.Parse would reject; the message is upstream's."""


# ----------------------------------------------------------------------------------- lexer

_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
# token kinds
_END, _CLOSE, _COMMA, _NOT, _DEQ, _EQ, _GT, _ID, _IN, _LT, _NEQ, _NOTIN, _OPEN, _ERR = range(14)
_LITERALS = {")": _CLOSE, ",": _COMMA, "!": _NOT, "==": _DEQ, "=": _EQ, ">": _GT, "in": _IN, "<": _LT,
             "!=": _NEQ, "notin": _NOTIN, "(": _OPEN}


def _lex(text: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _WHITESPACE:
            i += 1
        if i >= n:
            out.append((_END, ""))
            return out
        if text[i] in _SPECIAL:
            # the longest run of special characters that is still an operator ("!=" before "!")
            buf, tok, lit = "", -1, ""
            while i < n and text[i] in _SPECIAL:
                buf += text[i]
                if buf in _LITERALS:
                    tok, lit = _LITERALS[buf], buf
                    i += 1
                elif tok != -1:
                    break
                else:
                    i += 1
            if tok == -1:
                out.append((_ERR, f"error expected: keyword found '{buf}'"))
            else:
                out.append((tok, lit))
            continue
        start = i
        while i < n and text[i] not in _SPECIAL and text[i] not in _WHITESPACE:
            i += 1
        word = text[start:i]
        out.append((_LITERALS.get(word, _ID), word))


# ----------------------------------------------------------------------------------- parser

_BINARY = "in, notin, =, ==, !=, gt, lt"


class _Parser:
    def __init__(self, text: str) -> None:
        self.items = _lex(text)
        self.pos = 0

    def _tok(self, values: bool, advance: bool) -> tuple[int, str]:
        tok, lit = self.items[self.pos]
        if advance:
            self.pos += 1
        if values and tok in (_IN, _NOTIN):
            tok = _ID  # "in" and "notin" are plain words where a key or value is expected
        return tok, lit

    def peek(self, values: bool = True) -> tuple[int, str]:
        return self._tok(values, False)

    def take(self, values: bool = True) -> tuple[int, str]:
        return self._tok(values, True)

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self.peek()
            if tok in (_ID, _NOT):
                try:
                    reqs.append(self.requirement())
                except SelectorSyntaxError as e:
                    raise SelectorSyntaxError(f"unable to parse requirement: {e}") from None
                t, lit2 = self.take()
                if t == _END:
                    return reqs
                if t == _COMMA:
                    t2, lit3 = self.peek()
                    if t2 not in (_ID, _NOT):
                        raise SelectorSyntaxError(f"found '{lit3}', expected: identifier after ','")
                    continue
                raise SelectorSyntaxError(f"found '{lit2}', expected: ',' or 'end of string'")
            if tok == _END:
                return reqs
            raise SelectorSyntaxError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def requirement(self) -> Requirement:
        tok, key = self.take()
        negated = tok == _NOT
        if negated:
            tok, key = self.take()
        if tok != _ID:
            raise SelectorSyntaxError(f"found '{key}', expected: identifier")
        errs = qualified_name(key)
        if errs:
            raise SelectorSyntaxError(f'Invalid value: "{key}": {"; ".join(errs)}')
        if negated:
            # "!key" takes no operator; anything after it fails in parse() as upstream's does
            return Requirement(key, DOES_NOT_EXIST)
        if self.peek()[0] in (_END, _COMMA):
            return Requirement(key, EXISTS)
        tok, lit = self.take(values=False)
        ops = {_IN: IN, _NOTIN: NOT_IN, _EQ: "=", _DEQ: "==", _NEQ: "!=", _GT: GT, _LT: LT}
        op = ops.get(tok)
        if op is None:
            raise SelectorSyntaxError(f"found '{lit}', expected: {_BINARY}")
        values = self.value_set() if op in (IN, NOT_IN) else [self.exact_value()]
        for v in values:
            verrs = label_value(v)
            if verrs:
                raise SelectorSyntaxError(f'values[{values.index(v)}][{key}]: Invalid value: "{v}": '
                                          f'{"; ".join(verrs)}')
        if op in (GT, LT) and parse_int64(values[0]) is None:
            raise SelectorSyntaxError(f'values[0]: Invalid value: "{values[0]}": '
                                      "for 'Gt', 'Lt' operators, the value must be an integer")
        if op in ("=", "=="):
            return Requirement(key, IN, tuple(values))
        if op == "!=":
            return Requirement(key, NOT_IN, tuple(values))
        return Requirement(key, op, tuple(values))

    def exact_value(self) -> str:
        tok, _ = self.peek()
        if tok in (_END, _COMMA):
            return ""  # "key=" compares with the empty string
        tok, lit = self.take()
        if tok == _ID:
            return lit
        raise SelectorSyntaxError(f"found '{lit}', expected: identifier")

    def value_set(self) -> list[str]:
        tok, lit = self.take()
        if tok != _OPEN:
            raise SelectorSyntaxError(f"found '{lit}' expected: '('")
        tok, lit = self.peek()
        if tok == _CLOSE:
            self.take()
            return [""]  # "()" is the set holding the empty string
        if tok not in (_ID, _COMMA):
            raise SelectorSyntaxError(f"found '{lit}', expected: ',', ')' or identifier")
        values: list[str] = []
        while True:
            tok, lit = self.take()
            if tok == _ID:
                values.append(lit)
                tok2, lit2 = self.peek()
                if tok2 == _COMMA:
                    continue
                if tok2 == _CLOSE:
                    break
                raise SelectorSyntaxError(f"found '{lit2}', expected: ',' or ')'")
            if tok == _COMMA:
                # empty entries ("(,a)", "(a,)", "(a,,b)") are the empty string
                if not values:
                    values.append("")
                tok2, _ = self.peek()
                if tok2 == _CLOSE:
                    values.append("")
                    break
                if tok2 == _COMMA:
                    self.take()
                    values.append("")
                continue
            raise SelectorSyntaxError(f"found '{lit}', expected: ',', or identifier")
        tok, _ = self.take()
        if tok != _CLOSE:
            raise SelectorSyntaxError(f"found '{lit}', expected: ')'")
        return sorted(set(values))


def parse_selector(text: str) -> LabelSelector:
    """labels.Parse: the selector a ``kubectl -l`` text denotes; raises SelectorSyntaxError."""
    reqs = _Parser(text).parse()
    return LabelSelector((), tuple(sorted(reqs, key=lambda r: r.key)))
