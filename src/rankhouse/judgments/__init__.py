"""Judgments as data (issue 38): relevance judgments kept, compared and planned like runs.

* :mod:`.versions`: a qrels set's versions and their lineage, and what changed between two
  sets (``rankhouse qrels diff``).
* :mod:`.agreement`: how two qrels sets, or raters, agree on the pairs both judged (Cohen's
  kappa, weighted and not, Krippendorff's alpha, Fleiss' kappa, the confusion matrix), and
  how two sets rank the same runs (Kendall's tau, tau_AP, Spearman's rho),
  ``rankhouse qrels agreement``.
* :mod:`.raters`: raters and their individual judgments (``rankhouse ingest judgments``,
  ``qrels raters``), the qrels sets built from them by a rule (``qrels build``), and their
  agreement (``qrels agreement --raters``).
* :mod:`.pools`: the documents to judge next, pooled from runs to a depth or a budget
  (``rankhouse pool``).
"""
