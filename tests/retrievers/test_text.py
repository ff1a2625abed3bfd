"""The tokenizer: the shared SciFact English pipeline, and Chinese by jieba or bigrams."""

from __future__ import annotations

import subprocess
import sys

import pytest

from evalops.errors import ConfigError
from evalops.retrievers import Tokenizer


def test_english_lowercases_drops_stop_words_and_stems():
    assert Tokenizer()("The Refunds are processed for returned items") == ["refund", "process", "return", "item"]


def test_english_without_stemming_or_stop_words():
    assert Tokenizer(stem=False, stopwords=False)("The refunds") == ["the", "refunds"]


def test_single_characters_and_codes():
    # the bm25s pattern keeps words of two or more characters; codes split at the hyphen
    assert Tokenizer()("a ORDER-2024 x") == ["order", "2024"]


def test_chinese_with_jieba_segments_words_and_drops_function_words():
    toks = Tokenizer()("如何申请差旅报销")
    assert toks == ["申请", "差旅", "报销"]


def test_chinese_bigrams():
    assert Tokenizer(chinese="bigram")("差旅报销") == ["差旅", "旅报", "报销"]
    assert Tokenizer(chinese="bigram", stopwords=False)("书") == ["书"]


def test_mixed_language_text_keeps_both():
    toks = Tokenizer()("退款 refund policy 退款政策")
    assert set(toks) == {"退款", "政策", "refund", "polici"}


def test_unknown_chinese_mode_is_a_config_error():
    with pytest.raises(ConfigError, match="chinese must be one of 'jieba', 'bigram', 'whole'"):
        Tokenizer(chinese="pinyin")


def test_whole_mode_keeps_each_chinese_run_as_one_token():
    # The first release's tokenizer: no segmentation, so a query word inside a longer run never matches.
    tokens = Tokenizer(chinese="whole")("退货政策 refund 运费")
    assert "退货政策" in tokens and "运费" in tokens and "refund" in tokens
    assert "退货" not in tokens


def test_jieba_loads_offline_and_prints_nothing(tmp_path):
    code = "from evalops.retrievers import Tokenizer; print(Tokenizer()('差旅报销'))"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": ":".join(sys.path)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['差旅', '报销']"
    assert proc.stderr == ""  # jieba's "Building prefix dict" chatter is silenced


def test_one_tokenizer_is_safe_to_share_between_threads():
    from concurrent.futures import ThreadPoolExecutor

    tok = Tokenizer()
    texts = [f"running refunds policies item{i} 差旅报销" for i in range(400)]
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(tok, texts))
    assert got == [tok(t) for t in texts]
