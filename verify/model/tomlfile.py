"""One TOML file of a model, read with the positions of its keys (for errors that point into
it), and the shapes of the rule numbers every model file uses."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from verify.errors import Diagnostic, SourceLoc
from verify.model.positions import MAX_NESTING, Positions, string_origin, too_deep

__all__ = ["RULE_ID", "CR_NUMBER", "TomlFile", "rule_order"]

RULE_ID = re.compile(r"^\d{3}(\.\d+[a-z]?)?(/[a-z0-9][a-z0-9-]*)?$")
CR_NUMBER = re.compile(r"^\d{3}(\.\d+[a-z]?)?$")

def _byte_loc(display: str, raw: bytes, offset: int) -> SourceLoc:
    """The line and column (in characters of the decodable text before it) of byte *offset*."""
    line_start = raw.rfind(b"\n", 0, offset) + 1
    col = len(raw[line_start:offset].decode("utf-8", errors="replace")) + 1
    return SourceLoc(display, raw.count(b"\n", 0, offset) + 1, col)


def _not_utf8(raw: bytes, err: UnicodeDecodeError) -> str:
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(raw) > 1 and (raw[0] == 0 or raw[1] == 0)):
        return "cannot read: the file is UTF-16 text, not UTF-8: save it as UTF-8"
    return f"cannot read: not UTF-8 text ({err.reason}, byte {err.start}: 0x{raw[err.start]:02x}): save it as UTF-8"


class TomlFile:
    """One TOML file: its data, positions and lines."""

    def __init__(self, path: Path, display: str, diags: list[Diagnostic]):
        self.path, self.display = path, display
        self.ok = False
        self.data: dict[str, Any] = {}
        self.pos = Positions("", display)
        self.lines: list[str] = []
        try:
            raw = path.read_bytes()
        except OSError as err:
            diags.append(Diagnostic(SourceLoc(display), "io", f"cannot read: {err.strerror}"))
            return
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            diags.append(Diagnostic(_byte_loc(display, raw, err.start), "io", _not_utf8(raw, err)))
            return
        deep = too_deep(text)
        if deep is not None:
            diags.append(Diagnostic(SourceLoc(display, *deep), "toml",
                                    f"arrays or inline tables nested more than {MAX_NESTING} levels deep"))
            return
        self.lines = text.splitlines()
        self.pos = Positions(text, display)
        try:
            self.data = tomllib.loads(text)
            self.ok = True
        except tomllib.TOMLDecodeError as err:
            m = re.search(r"\(at line (\d+), column (\d+)\)", str(err))
            if m:
                line, col = int(m.group(1)), int(m.group(2))
            else:  # "(at end of document)"
                line, col = max(1, len(self.lines)), len(self.lines[-1]) + 1 if self.lines else 1
            msg = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", str(err))
            diags.append(Diagnostic(SourceLoc(display, line, col), "toml", f"malformed TOML: {msg}"))

    def loc(self, *path: object) -> SourceLoc:
        return self.pos.loc(*path)

    def origin(self, *path: object) -> SourceLoc:
        return string_origin(self.pos.loc(*path), self.lines)


def rule_order(rule_id: str) -> tuple[object, ...]:
    """Sort '104.3b' < '104.10' < '121.2' < '121.2/x'."""
    cr, _, tag = rule_id.partition("/")
    parts: list[object] = []
    for chunk in re.findall(r"\d+|[a-z]+", cr):
        parts.append((0, int(chunk)) if chunk.isdigit() else (1, chunk))
    return (tuple(parts), tag)
