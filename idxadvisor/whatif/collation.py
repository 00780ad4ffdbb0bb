"""Collations: the simple binary comparison, and ICU's collation at strengths 1 to 3 over ASCII text for the locales
whose tailoring leaves ASCII alone (``en``, ``en_US``, ``fr``, ``fr_CA``, ``de``, ``it``, ``pt``, ``es``).

No ICU binding ships as a wheel that matches the ICU 57 inside mongod, so the model carries what it needs: the
primary weight order of the 128 ASCII characters in ICU's root (``en``) collation, and the one tertiary
difference ASCII has (an upper-case letter sorts after its lower case). Under ``alternate: "non-ignorable"``
(mongod's default) every printable ASCII character has one primary weight, the C0 controls other than
``\\t\\n\\v\\f\\r`` and DEL are ignorable at every level, and ASCII has no secondary differences, so comparing
``(primaries)`` (strengths 1 and 2) or ``(primaries, tertiaries)`` (strength 3) is exactly ICU's comparison
(checked against ICU 77 on random ASCII strings; the ASCII table has not changed since ICU 57).

A :class:`Collator` maps each string to a :class:`CollationKey`: a string whose code-point order and equality are
the collation's, so the estimator's ordering, bounds and matching work on keys unchanged. Strings outside ASCII,
other locales and other options answer :class:`~idxadvisor.whatif.query.Unsupported`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from idxadvisor.whatif.query import Unsupported

# Root collation primary order of the ASCII characters that are not ignorable (lower case stands for both cases).
_PRIMARY_ORDER = ("\t\n\x0b\x0c\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz")
_PRIMARY = {char: index for index, char in enumerate(_PRIMARY_ORDER)}
_PRIMARY.update({char.upper(): _PRIMARY[char] for char in "abcdefghijklmnopqrstuvwxyz"})
_KEY_BASE = 0x100        # primary weights become the code points U+0100 ...
_LEVEL_SEPARATOR = "\x01"  # sorts before every weight: a shorter primary sequence sorts first
# Locales whose CLDR tailoring leaves ASCII as the root collation orders it: French Canadian only reverses the
# secondary level (``[backwards 2]``), which ASCII never reaches; French, German, Italian, Portuguese and standard
# Spanish tailor only letters outside ASCII. (Danish, Norwegian, Hungarian, Czech, Slovak, Lithuanian, Estonian and
# others contract or reorder ASCII letters, or put upper case first, and stay unsupported.)
_LOCALES = frozenset({"en", "en_US", "fr", "fr_CA", "de", "it", "pt", "es"})
_ASCII_NEUTRAL_OPTIONS = frozenset({"backwards"})  # a secondary-level option: no effect on ASCII
_DEFAULTS: dict[str, Any] = {"caseLevel": False, "caseFirst": "off", "numericOrdering": False,
                             "alternate": "non-ignorable", "maxVariable": "punct", "normalization": False,
                             "backwards": False}


class CollationKey(str):
    """A string's collation key, standing in for the string wherever the collation orders or compares it."""

    source: str

    def __new__(cls, key: str, source: str) -> CollationKey:
        made = super().__new__(cls, key)
        made.source = source
        return made

    def __reduce__(self) -> Any:
        return (CollationKey, (str(self), self.source))


@dataclass(frozen=True)
class Collator:
    """One collation the model reproduces: a locale of ``_LOCALES`` at strength 1, 2 or 3 with default options
    (``backwards`` allowed: it acts on accents only)."""

    locale: str
    strength: int

    @property
    def spec(self) -> dict[str, Any]:
        return {"locale": self.locale, "strength": self.strength}

    def key(self, text: str) -> CollationKey:
        primaries: list[str] = []
        tertiaries: list[str] = []
        for char in text:
            if not char.isascii():
                raise Unsupported(f"collation {self.locale} on non-ASCII text is not modelled")
            weight = _PRIMARY.get(char)
            if weight is None:
                continue  # a completely ignorable control character
            primaries.append(chr(_KEY_BASE + weight))
            tertiaries.append("\x03" if char.isupper() else "\x02")
        key = "".join(primaries)
        if self.strength >= 3:
            key += _LEVEL_SEPARATOR + "".join(tertiaries)
        return CollationKey(key, text)

    def transform(self, value: Any) -> Any:
        """A value with every string (also inside documents and arrays) replaced by its collation key."""
        if isinstance(value, CollationKey):
            return value
        if isinstance(value, str) and type(value) is str:
            return self.key(value)
        if type(value) is dict or (isinstance(value, Mapping) and not hasattr(value, "pattern")):
            return {name: self.transform(item) for name, item in value.items()}
        if isinstance(value, list):
            return [self.transform(item) for item in value]
        return value


@dataclass(frozen=True)
class OpaqueCollator:
    """A collation the model cannot reproduce. It changes nothing but strings (and documents or arrays holding
    them), so it is exact over values without strings, and any string it would have to order is unsupported."""

    description: str
    reason: str

    @property
    def spec(self) -> str:
        return self.description

    def transform(self, value: Any) -> Any:
        if _holds_string(value):
            raise Unsupported(f"strings under the collation {self.description}: {self.reason}")
        return value


def _holds_string(value: Any) -> bool:
    if isinstance(value, str):
        return True
    if isinstance(value, Mapping):
        return any(_holds_string(item) for item in value.values())
    if isinstance(value, list):
        return any(_holds_string(item) for item in value)
    return False


def collator_for(spec: Mapping[str, Any] | None) -> Collator | OpaqueCollator | None:
    """The collator of a ``collation`` document; ``None`` for the simple collation (binary comparison)."""
    if spec is None:
        return None
    if not isinstance(spec, Mapping):
        raise Unsupported("a collation must be a document")
    locale = spec.get("locale")
    if locale == "simple":
        if len(spec) > 1:
            raise Unsupported("the simple collation takes no other option")
        return None
    if not isinstance(locale, str):
        raise Unsupported("a collation needs a locale")
    description = json.dumps(dict(spec), sort_keys=True, default=str)
    if locale not in _LOCALES:
        return OpaqueCollator(description, "only the simple collation and en, en_US, fr, fr_CA, de, it, pt and es "
                                           "over ASCII text are modelled")
    strength = spec.get("strength", 3)
    if isinstance(strength, bool) or strength not in (1, 2, 3):
        return OpaqueCollator(description, "strengths 1, 2 and 3 are modelled")
    for name, value in spec.items():
        if name in ("locale", "strength", "version"):
            continue
        if name in _ASCII_NEUTRAL_OPTIONS and isinstance(value, bool):
            continue
        if name not in _DEFAULTS or value != _DEFAULTS[name] or type(value) is not type(_DEFAULTS[name]):
            return OpaqueCollator(description, f"the option {name}: {value!r} is not modelled")
    return Collator(str(locale), int(strength))


