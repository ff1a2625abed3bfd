"""The settings that name an http(s) endpoint share one checked type: each refuses another scheme or a bare
host, and only the ones that may be unset take an empty value."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from evalops.config.sections import AlertingSettings, JudgeSettings, MlflowSettings

FIELDS = [(AlertingSettings, "pagerduty_url", False), (JudgeSettings, "base_url", True),
          (MlflowSettings, "tracking_uri", True)]


@pytest.mark.parametrize(("section", "field", "may_be_empty"), FIELDS)
@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x", "example.com", "http://"])
def test_a_url_that_is_not_http_with_a_host_is_refused(section, field, may_be_empty, url):
    with pytest.raises(ValidationError, match="is not an http:// or https:// URL with a host"):
        section(**{field: url})


@pytest.mark.parametrize(("section", "field", "may_be_empty"), FIELDS)
def test_http_and_https_urls_are_kept_and_empty_only_where_unset_is_allowed(section, field, may_be_empty):
    for url in ("http://127.0.0.1:5000", "https://api.example.com/v1"):
        assert getattr(section(**{field: url}), field) == url
    if may_be_empty:
        assert getattr(section(**{field: ""}), field) == ""
    else:
        with pytest.raises(ValidationError):
            section(**{field: ""})
