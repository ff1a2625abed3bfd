"""Fixtures for the retriever tests: a small mixed-language corpus and a local HTTP service factory."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pandas as pd
import pytest

from evalops.retrievers import LocalService


@pytest.fixture
def small_corpus() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "doc_id": ["travel-1", "travel-2", "refund-1", "refund-2", "errors-1", "hours-1", "zh-travel", "zh-refund"],
            "title": ["Travel policy", "Hotels", "Refunds", "Returns", "Error codes", "Support hours", "差旅政策", "退款"],
            "text": [
                "Employees book flights through the travel portal and keep receipts for every trip.",
                "Hotel rooms are reimbursed up to 150 dollars per night in most cities.",
                "Customers get a full refund within 30 days when the product is unopened.",
                "Returned items must be shipped back in their original packaging.",
                "ORDER-2024 means the payment was declined; ask the customer for another card.",
                "Support is open Monday to Friday from 9 am to 6 pm Central European Time.",
                "员工出差需要提前在差旅系统中申请，住宿标准为每晚不超过五百元。",
                "商品在三十天内未拆封可以申请全额退款，退款将在七个工作日内到账。",
            ],
        }
    )


@pytest.fixture
def service() -> Iterator[Callable[..., LocalService]]:
    """``service(handler)`` starts a LocalService on 127.0.0.1; every one started is stopped afterwards."""
    started: list[LocalService] = []

    def start(handler) -> LocalService:
        svc = LocalService(handler).start()
        started.append(svc)
        return svc

    yield start
    for svc in started:
        svc.stop()
