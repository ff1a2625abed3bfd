"""The public surface of evalops.warehouse: declared, complete, and free of ORM classes."""

from __future__ import annotations

import dataclasses
import inspect

import evalops.warehouse as warehouse
from evalops.warehouse import domain
from evalops.warehouse.models import Base


def test_every_exported_name_exists_once():
    assert len(set(warehouse.__all__)) == len(warehouse.__all__)
    for name in warehouse.__all__:
        assert hasattr(warehouse, name), name


def test_no_orm_class_is_exported():
    for name in warehouse.__all__:
        value = getattr(warehouse, name)
        assert not (inspect.isclass(value) and issubclass(value, Base)), name


def test_domain_objects_are_frozen_dataclasses():
    for name in domain.__all__:
        cls = getattr(domain, name)
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, name
