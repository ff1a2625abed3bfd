"""Secrets and network addresses in query text: scrubbed; product codes and evalops' own ids: kept."""

from __future__ import annotations

import pytest

from evalops.querylog import scrub
from evalops.querylog.scrub import PresidioRecognizers, clear_recognizers, register_recognizer

POSITIVE = [
    ("my key sk-live-AbCdEf0123456789XyZ please", "my key <SECRET> please", "api_key"),
    ("stripe sk_live_51HqLyjWDarjtT1zdp7dc", "stripe <SECRET>", "api_key"),
    ("AKIAIOSFODNN7EXAMPLE leaked", "<SECRET> leaked", "api_key"),
    ("token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "token <SECRET>", "api_key"),
    ("hook xoxb-123456789012-abcdefABCDEF", "hook <SECRET>", "api_key"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "jwt <SECRET>", "api_key"),
    ("login password=hunter2 now", "login password=<SECRET> now", "secret_pair"),
    ("use secret: s3cr3t! then", "use secret: <SECRET> then", "secret_pair"),
    ("curl ?api_key=abc123&x=1", "curl ?api_key=<SECRET>&x=1", "secret_pair"),
    ("server 192.168.10.20 is down", "server <IP> is down", "ipv4"),
    ("from 8.8.8.8.", "from <IP>.", "ipv4"),
    ("ipv6 2001:db8::8a2e:370:7334 fails", "ipv6 <IP> fails", "ipv6"),
    ("link-local fe80::1ff:fe23:4567:890a%eth0", "link-local <IP>", "ipv6"),
    ("random Zx9Qw7Er5Ty3Ui1Op0AsDfGhJk", "random <SECRET>", "high_entropy"),
]

NEGATIVE = [
    "ORDER-2024 arrived late", "AX-350 manual", "log-0123456789ab", "query log-1a2b3c4d5e6f7a8b9c0d1e2f",
    "at 10:30:00 on 2025-03-01", "version 3.10.12", "ratio 1:2", "password: how do I reset it",
    "what is a token", "internationalization_localization", "a::b and std::vector", "PB-20000 mAh",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "https://docs.example.com/guide?page=2",
]


@pytest.mark.parametrize(("text", "expected", "kind"), POSITIVE)
def test_secrets_and_addresses_are_replaced(text, expected, kind):
    result = scrub(text)
    assert result.text == expected
    assert result.found[kind] >= 1


@pytest.mark.parametrize("text", NEGATIVE)
def test_product_codes_own_ids_and_prose_are_kept(text):
    result = scrub(text)
    assert result.text == text and not result.found


class FakeRecognizer:
    """Stands in for a Presidio pattern recognizer (the extra is not installed here)."""

    supported_entities = ["IBAN_CODE", "PERSON"]

    def analyze(self, text, entities, nlp_artifacts):
        class Hit:
            def __init__(self, start, end, entity_type, score):
                self.start, self.end, self.entity_type, self.score = start, end, entity_type, score

        out = []
        at = text.find("DE89370400440532013000")
        if at >= 0 and "IBAN_CODE" in entities:
            out.append(Hit(at, at + 22, "IBAN_CODE", 0.9))
        at = text.find("Alice")
        if at >= 0 and "PERSON" in entities:
            out.append(Hit(at, at + 5, "PERSON", 0.9))
        return out


def test_a_plugged_in_recognizer_runs_after_the_built_in_patterns():
    register_recognizer(PresidioRecognizers([FakeRecognizer()], entities=["IBAN_CODE", "PERSON"]))
    try:
        result = scrub("Alice pays to DE89370400440532013000 from 10.0.0.1")
    finally:
        clear_recognizers()
    # the IBAN and the IP are caught by the built-in patterns first; the plug-in adds the name
    assert result.text == "<PERSON> pays to <IBAN> from <IP>"
    assert result.found == {"iban": 1, "ipv4": 1, "person": 1}


def test_presidio_from_the_settings_fails_closed_when_it_is_not_installed(tmp_path):
    import importlib.util

    from evalops.config import load_config
    from evalops.errors import ConfigError

    if importlib.util.find_spec("presidio_analyzer") is not None:
        pytest.skip("Presidio is installed here")
    (tmp_path / "evalops.yaml").write_text("query_logs:\n  presidio: [UK_NHS, US_PASSPORT]\n")
    cfg = load_config(tmp_path, environ={})
    assert cfg.query_logs.presidio == ("UK_NHS", "US_PASSPORT")
    with pytest.raises(ConfigError, match=r"query_logs.presidio: install `evalops-rag\[presidio\]` .*not installed"):
        cfg.apply_process_settings()


def test_presidio_from_the_settings_is_used_and_can_be_switched_off(monkeypatch):
    import sys

    scrub_module = sys.modules["evalops.querylog.scrub"]

    class Fake(PresidioRecognizers):
        def __init__(self, entities):
            super().__init__([FakeRecognizer()], entities=entities)

    monkeypatch.setattr(scrub_module, "PresidioRecognizers", Fake)
    try:
        scrub_module.use_presidio(["PERSON"])
        assert scrub("Alice called").text == "<PERSON> called"
        scrub_module.use_presidio([])
        assert scrub("Alice called").text == "Alice called"
        with pytest.raises(ValueError, match="no pattern recognizer for NOPE"):
            scrub_module.use_presidio(["PERSON", "NOPE"])
    finally:
        scrub_module.use_presidio([])
