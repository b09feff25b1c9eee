"""Character classes shared by the key rule and the identity rule.

Both rules come from the server's parsers (lib/protocol/wire-fields.ts and client-name.ts),
which use JavaScript regular expressions: ``\\s`` there is Unicode's Space_Separator (Zs) plus
the ASCII controls 9-13, U+2028, U+2029 and U+FEFF. Python's ``str.isspace`` is a different
set (it has U+001C-U+001F, lacks U+FEFF), so the set is spelled out here rather than borrowed.
"""

from __future__ import annotations

import unicodedata

#: Characters JavaScript's ``\\s`` matches that are not of category Zs.
_JS_SPACE_EXTRA = frozenset("\t\n\v\f\r\u2028\u2029\ufeff")

#: Control, format, line separator, paragraph separator.
_FORBIDDEN_CATEGORIES = frozenset(("Cc", "Cf", "Zl", "Zp"))


def is_js_whitespace(ch: str) -> bool:
    """True when JavaScript's ``/\\s/u`` matches the one character ``ch``."""
    return ch in _JS_SPACE_EXTRA or unicodedata.category(ch) == "Zs"


def is_control_or_format(ch: str) -> bool:
    """Categories Cc, Cf, Zl, Zp: never shown as what was sent."""
    return unicodedata.category(ch) in _FORBIDDEN_CATEGORIES


def utf8_or_none(text: str) -> "bytes | None":
    """The UTF-8 bytes of ``text``; None for a string with a lone surrogate (not well formed)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return None
