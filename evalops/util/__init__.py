"""Utilities every layer of evalops shares and that know nothing of retrieval evaluation.

Each module imports at most :mod:`evalops.errors` and its neighbours here, and nothing heavy at import time,
so that any evalops module may import them at its top:

* :mod:`~evalops.util.utc`: the one time-zone policy and the one clock;
* :mod:`~evalops.util.numfmt`: how numbers are printed in every medium;
* :mod:`~evalops.util.safetext`: untrusted text made safe, and the input rule for ids;
* :mod:`~evalops.util.htmlpolicy`: the Content-Security-Policies and the HTML sanitiser;
* :mod:`~evalops.util.secrets`: the one reader of credentials, and their masking;
* :mod:`~evalops.util.yamlfile`: the one bounded reader of settings YAML;
* :mod:`~evalops.util.storage`: atomic writes and the "disk is full" test;
* :mod:`~evalops.util.limits`: size limits (ids, memory budget, hostile input);
* :mod:`~evalops.util.extras`: the optional extras and the one way to import them;
* :mod:`~evalops.util.arrow`: Arrow arrays to numpy without pandas;
* :mod:`~evalops.util.lazy`: package fronts that import their submodules on first use (PEP 562).

The package imports nothing itself: ``from evalops.util import utc`` loads that one module.
"""
