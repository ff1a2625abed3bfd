"""Tokenization for the built-in lexical retrievers: English and Chinese in the same text.

A text is split by script. Runs of CJK ideographs are segmented as Chinese; everything else is English:

* **English**: lowercase, the bm25s default token pattern ``(?u)\\b\\w\\w+\\b`` (two or more word
  characters), the bm25s English stop-word list (33 words), then the Snowball English stemmer
  (PyStemmer). This is the pipeline of the shared SciFact BM25 run, so numbers are comparable.
* **Chinese**: ``jieba`` word segmentation (its dictionary ships inside the package, nothing is downloaded),
  or character bigrams (``chinese="bigram"``; a one-character run is kept as a unigram). Single-character
  words are kept, because in Chinese they carry meaning. A short list of Chinese function words is dropped
  with the English stop words.

Documents and queries must go through the same tokenizer; the retrievers take care of that.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from collections.abc import Iterable

from evalops.errors import ConfigError
from evalops.util.extras import require

__all__ = ["CHINESE_STOPWORDS", "Tokenizer"]

_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"(?u)\b\w\w+\b")

# Function words and question words that match almost every Chinese text.
CHINESE_STOPWORDS = frozenset(
    "的 了 是 在 和 与 及 或 吗 呢 吧 啊 呀 我 你 他 她 它 我们 你们 他们 这 那 这个 那个 一个 有 也 都 就 将 "
    "把 被 对 从 为 以 之 而 请 如何 怎么 怎样 什么 哪些 哪个 多少 是否 可以 能 会 要 需要 吗".split()
)


@functools.cache
def _english_stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


@functools.cache
def _jieba():
    import warnings

    with warnings.catch_warnings():  # jieba 0.42 has invalid escapes that warn when first compiled
        warnings.simplefilter("ignore", DeprecationWarning)

        jieba = require("jieba", "retrievers", "segment Chinese text with jieba (or set chinese: bigram)")

    # jieba logs its dictionary build at DEBUG straight to stderr; keep that out of CLI output.
    jieba.setLogLevel(logging.WARNING)
    jieba.dt.initialize()
    return jieba.dt


CHINESE_MODES = ("jieba", "bigram", "whole")


class Tokenizer:
    """Callable ``text -> list of tokens``; see the module docstring for the rules.

    ``stem`` and ``stopwords`` switch the English stemmer and both stop-word lists; ``chinese`` is
    ``"jieba"`` (word segmentation), ``"bigram"`` (overlapping character pairs) or ``"whole"`` (each run of
    Chinese characters is one token, as a whitespace tokenizer would leave it: no segmentation at all).
    """

    def __init__(self, *, stem: bool = True, stopwords: bool = True, chinese: str = "jieba"):
        if chinese not in CHINESE_MODES:
            raise ConfigError(f"tokenizer: chinese must be one of {', '.join(map(repr, CHINESE_MODES))}, not {chinese!r}")
        self.stem = stem
        self.stopwords = stopwords
        self.chinese = chinese
        self._local = threading.local()  # PyStemmer objects are not thread-safe: one per thread

    def __repr__(self) -> str:
        return f"Tokenizer(stem={self.stem}, stopwords={self.stopwords}, chinese={self.chinese!r})"

    def _stem_words(self, words: list[str]) -> list[str]:
        stemmer = getattr(self._local, "stemmer", None)
        if stemmer is None:
            Stemmer = require("Stemmer", "retrievers", "stem English words (or set stem: false)")
            stemmer = self._local.stemmer = Stemmer.Stemmer("english")
        return stemmer.stemWords(words)

    def _chinese_tokens(self, run: str) -> list[str]:
        if self.chinese == "bigram":
            return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
        if self.chinese == "whole":
            return [run]
        return _jieba().lcut(run)

    def __call__(self, text: str) -> list[str]:
        text = text.lower()
        tokens: list[str] = []
        for run in _CJK_RUN.findall(text):
            tokens.extend(self._chinese_tokens(run))
        if self.stopwords:
            tokens = [t for t in tokens if t not in CHINESE_STOPWORDS]
        words = _WORD.findall(_CJK_RUN.sub(" ", text))
        if self.stopwords:
            stop = _english_stopwords()
            words = [w for w in words if w not in stop]
        if self.stem and words:
            words = self._stem_words(words)
        return words + tokens

    def many(self, texts: Iterable[str]) -> list[list[str]]:
        return [self(t) for t in texts]
