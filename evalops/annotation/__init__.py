"""People label the annotation queue; their labels become the next gold-set version.

* :mod:`evalops.annotation.agreement`: Cohen's kappa and Krippendorff's alpha (pure numpy);
* :mod:`evalops.annotation.queue`: the queue file read in priority order, and each item's state under the
  labels and adjudications stored in the warehouse (open, agreed, conflict, adjudicated);
* :mod:`evalops.annotation.merge`: ``evalops gold merge``, decided labels folded into a new gold-set version.

The labelling pages are in :mod:`evalops.dashboard.labelling`.
"""
