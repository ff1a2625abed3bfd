"""Judged coverage: what the documents nobody judged do to a score and to a comparison.

An unjudged document counts as non-relevant, so a version that retrieves what the annotators never saw is
scored low exactly when it differs most from the baseline. The pieces, from the data to the decision:

* :mod:`~evalops.judged.unjudged`: a scored version's unjudged (and judged) top-k documents, kept as columns;
* :mod:`~evalops.judged.coverage`: Judged@k of two runs and the candidate's unjudged top-k documents;
* :mod:`~evalops.judged.holes`: judged coverage of a comparison, and the unjudged documents pooled and
  prioritised as annotation work (the holes);
* :mod:`~evalops.judged.bounds`: the bounds of a comparison that give each unjudged (query, document) one
  grade in both versions.

The package imports nothing itself: import the module you need.
"""
