"""Counting tokens in English and Chinese text, in reading order (the context measures' default tokenizer).

The default counts what a reader (and, roughly, a model's context window) pays for:

* every CJK character (Han ideographs, kana) is one token: Chinese has no spaces, and a characters / 4
  estimate undercounts it about fourfold;
* every maximal run of other letters and digits is one token (a word; ``don't`` is two, ``COVID-19``
  two; Korean, written with spaces, counts by words too);
* punctuation, symbols and whitespace are not tokens.

Tokens are case-folded, so ``Vitamin`` and ``vitamin`` are the same token for n-grams and query terms,
and they keep the text's order, so word n-grams (and, for Chinese, character n-grams) follow from them.

Any callable ``text -> sequence of hashable tokens`` can replace it: a model's own tokenizer for exact
billing (``lambda t: encoding.encode(t)``), or :class:`evalops.retrievers.text.Tokenizer` for stemmed
query terms (it does not keep the order, so n-gram measures should not use it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence

from evalops.chunking.spans import CJK_RANGES

__all__ = ["Tokenize", "default_tokenize", "CJK_RANGES"]

Tokenize = Callable[[str], Sequence[Hashable]]

# one CJK character (CJK_RANGES: the ideographs, hiragana and katakana), or a run of word characters that
# are neither "_" nor CJK
_TOKEN = re.compile(rf"[{CJK_RANGES}]|[^\W_{CJK_RANGES}]+")


def default_tokenize(text: str) -> list[str]:
    """CJK characters and words of ``text``, case-folded, in order (see the module docstring)."""
    return _TOKEN.findall(text.casefold())
