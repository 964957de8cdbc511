"""Where each value of a TOML file sits, for error messages.

``tomllib`` parses and validates the file; it keeps no positions. This scanner
only records the line and column at which each key's value starts, keyed by
the same path ``tomllib`` produces (array-of-tables entries by index).
"""
from __future__ import annotations

import re

from verify.errors import SourceLoc

__all__ = ["Positions", "string_origin", "too_deep", "MAX_NESTING"]

# Arrays and inline tables nested deeper than this are refused before tomllib (which
# recurses once per level) sees them: no model or scenario needs more than a few levels.
MAX_NESTING = 64

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*((?:[A-Za-z0-9_\-]+|\"[^\"]*\"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_\-]+|\"[^\"]*\"|'[^']*'))*)\s*=\s*")
_INLINE_KEY = re.compile(r"([A-Za-z0-9_\-]+|\"[^\"]*\")\s*=\s*")


def too_deep(text: str, limit: int = MAX_NESTING) -> tuple[int, int] | None:
    """The line and column of the first '[' or '{' that opens a value nested more than *limit*
    levels deep, or None. Strings and comments are skipped; a table header opens one level
    and closes it on its line.

    >>> too_deep("x = [[1], [2]]", limit=2) is None
    True
    >>> too_deep('a = "[[["\\nx = [[[1]]]', limit=2)
    (2, 7)
    """
    depth, line, col, i, n = 0, 1, 1, 0, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line, col, i = line + 1, 1, i + 1
            continue
        if c == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if c in "\"'":
            quote = c * 3 if text.startswith(c * 3, i) else c
            j = i + len(quote)
            while j < n and not text.startswith(quote, j):
                if text[j] == "\\" and c == '"':
                    j += 1
                elif text[j] == "\n" and len(quote) == 1:
                    break  # an unterminated one-line string: tomllib reports it
                j += 1
            j = min(n, j + len(quote))
            chunk = text[i:j]
            if "\n" in chunk:
                line, col = line + chunk.count("\n"), len(chunk) - chunk.rindex("\n")
            else:
                col += len(chunk)
            i = j
            continue
        if c in "[{":
            depth += 1
            if depth > limit:
                return line, col
        elif c in "]}":
            depth = max(0, depth - 1)
        i, col = i + 1, col + 1
    return None


def _split_key(key: str) -> list[str]:
    return [k.strip().strip("\"'") for k in re.findall(r"\"[^\"]*\"|'[^']*'|[^.]+", key)]


class Positions:
    """Maps a key path such as ``("rule", 3, "when")`` to its value's location."""

    def __init__(self, text: str, file: str):
        self.file = file
        self._pos: dict[tuple[object, ...], tuple[int, int]] = {}
        self._scan(text)

    def _scan(self, text: str) -> None:
        counts: dict[tuple[object, ...], int] = {}
        prefix: tuple[object, ...] = ()
        lines = text.splitlines()
        i = 0
        while i < len(lines):
            line = lines[i]
            m = _HEADER.match(line)
            if m and not _KEY.match(line):
                parts = _split_key(m.group(2))
                path = self._resolve(parts, counts)
                if m.group(1) == "[[":
                    counts[path] = counts.get(path, -1) + 1
                    prefix = path + (counts[path],)
                else:
                    prefix = path
                self._pos.setdefault(prefix, (i + 1, line.index("[") + 1))
                i += 1
                continue
            k = _KEY.match(line)
            if k:
                path = prefix + tuple(_split_key(k.group(1)))
                col = k.end() + 1
                self._pos[path] = (i + 1, col)
                rest = line[k.end():]
                if rest.lstrip().startswith("{"):
                    start = k.end() + (len(rest) - len(rest.lstrip()))
                    for im in _INLINE_KEY.finditer(line, start + 1):
                        self._pos.setdefault(path + (im.group(1).strip('"'),), (i + 1, im.end() + 1))
                if rest.startswith("["):
                    i = self._scan_array(lines, i, k.end(), path)
                else:
                    i = self._skip_multiline(lines, i, rest)
            i += 1

    def _scan_array(self, lines: list[str], i: int, col: int, path: tuple[object, ...]) -> int:
        """Record where each string element of the array starting at lines[i][col] begins
        (``path + (index,)``); return the line where the array ends."""
        depth, index, j = 0, 0, col
        while i < len(lines):
            line = lines[i]
            while j < len(line):
                ch = line[j]
                if ch == "#":
                    break
                if ch in "\"'":
                    quote = line[j:j + 3] if line[j:j + 3] in ('"""', "'''") else ch
                    if depth == 1:
                        self._pos[path + (index,)] = (i + 1, j + 1)
                        index += 1
                    j += len(quote)
                    while True:  # to the closing quote, possibly on a later line
                        end = line.find(quote, j)
                        while quote == '"' and end > 0 and line[end - 1] == "\\":
                            end = line.find(quote, end + 1)
                        if end >= 0:
                            j = end + len(quote)
                            break
                        if len(quote) == 1 or i + 1 >= len(lines):
                            j = len(line)
                            break
                        i, j = i + 1, 0
                        line = lines[i]
                    continue
                if ch == "[":
                    depth += 1
                elif ch == "]":
                    depth -= 1
                    if depth == 0:
                        return i
                j += 1
            i, j = i + 1, 0
        return len(lines) - 1

    def _resolve(self, parts: list[str], counts: dict[tuple[object, ...], int]) -> tuple[object, ...]:
        path: tuple[object, ...] = ()
        for part in parts:
            path = path + (part,)
            if path in counts and len(path) < len(parts):
                path = path + (counts[path],)
        return path

    @staticmethod
    def _skip_multiline(lines: list[str], i: int, rest: str) -> int:
        for quote in ('"""', "'''"):
            if rest.startswith(quote) and rest.count(quote) == 1:
                while i + 1 < len(lines):
                    i += 1
                    if quote in lines[i]:
                        return i
        if rest.startswith("["):
            depth = rest.count("[") - rest.count("]")
            while depth > 0 and i + 1 < len(lines):
                i += 1
                depth += lines[i].count("[") - lines[i].count("]")
        return i

    def loc(self, *path: object) -> SourceLoc:
        """The location of the value at *path*, or of its nearest known ancestor."""
        p = tuple(path)
        while p:
            if p in self._pos:
                line, col = self._pos[p]
                return SourceLoc(self.file, line, col)
            p = p[:-1]
        return SourceLoc(self.file, 1, 1)



def string_origin(loc: SourceLoc, text_lines: list[str]) -> SourceLoc:
    """Where the contents of the string literal starting at *loc* begin."""
    if loc.line <= 0 or loc.line > len(text_lines):
        return loc
    line = text_lines[loc.line - 1]
    rest = line[loc.col - 1:]
    for quote in ('"""', "'''"):
        if rest.startswith(quote):
            after = rest[3:].strip()
            if after == "":  # a newline right after the opening quotes is trimmed
                return SourceLoc(loc.file, loc.line + 1, 1)
            if after == "\\" and quote == '"""' and loc.line < len(text_lines):
                # a line-ending backslash also trims the white space that follows it
                nxt = text_lines[loc.line]
                return SourceLoc(loc.file, loc.line + 1, len(nxt) - len(nxt.lstrip()) + 1)
            return SourceLoc(loc.file, loc.line, loc.col + 3)
    if rest[:1] in ("\"", "'"):
        return SourceLoc(loc.file, loc.line, loc.col + 1)
    return loc
