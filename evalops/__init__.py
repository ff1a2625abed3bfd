"""evalops: continuous, statistically honest evaluation of RAG retrievers.

Importing the package is cheap: numpy is the only heavy dependency of the core, and Airflow, Great
Expectations, SQLAlchemy and scipy are imported only by the edge modules that need them.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
