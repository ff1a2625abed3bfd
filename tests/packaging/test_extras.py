"""``evalops.util.extras.require``: a library of an extra that is not installed is an input error naming the extra."""

from __future__ import annotations

import pytest

from evalops.errors import InputError
from evalops.exitcodes import ExitCode, for_exception
from evalops.util.extras import MissingExtraError, require


def test_a_missing_library_names_the_extra_to_install():
    with pytest.raises(MissingExtraError) as caught:
        require("evalops_no_such_library.sub", "gx", "validate with Great Expectations")
    message = str(caught.value)
    assert message.startswith("install `evalops-rag[gx]` to validate with Great Expectations")
    assert "evalops_no_such_library is not installed" in message and "pip install 'evalops-rag[gx]'" in message
    assert isinstance(caught.value, InputError) and for_exception(caught.value) == ExitCode.BAD_INPUT


def test_an_installed_library_is_returned():
    import json

    assert require("json", "reports", "read JSON") is json


def test_a_missing_part_of_an_installed_package_is_a_broken_install_not_a_missing_extra():
    with pytest.raises(ModuleNotFoundError) as caught:
        require("email.no_such_part", "reports", "do anything")
    assert not isinstance(caught.value, MissingExtraError)


def test_an_unknown_extra_is_a_bug():
    with pytest.raises(ValueError, match="unknown extra 'gxx'"):
        require("json", "gxx", "anything")
