"""Conversation gold sets: turns with their history, query policies, and scores and decisions per conversation.

See ``docs/conversations.md``. Submodules: :mod:`~evalops.conversations.model` (turns, ids, history),
:mod:`~evalops.conversations.io` (readers), :mod:`~evalops.conversations.checks` (the contract),
:mod:`~evalops.conversations.queries` (raw / history / rewrite), :mod:`~evalops.conversations.stats` (pure:
conversation means, depth, the paired decision by conversation), :mod:`~evalops.conversations.evaluate` (the
use case) and :mod:`~evalops.conversations.report` (markdown and HTML).
"""

from __future__ import annotations

from evalops.util.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Conversations": "model", "Turn": "model", "parse_turn_id": "model", "turn_id": "model",
    "ConversationGoldSet": "io", "load_conversation_gold_set": "io", "load_conversations": "io",
    "conversations_from_gold_set": "io", "save_conversations": "io",
    "ConversationContractError": "checks", "ContractProblem": "checks",
    "ConversationPolicy": "policy", "QUERY_POLICIES": "policy", "conversation_queries": "queries",
    "by_conversation": "stats", "compare_by_conversation": "stats", "conversation_means": "stats",
    "depth_profile": "stats",
    "ConversationResults": "evaluate", "evaluate_conversations": "evaluate", "retrieve_conversations": "evaluate",
    "render_markdown": "report", "render_html": "report", "write_report": "report",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports("evalops.conversations", _EXPORTS, __all__)
