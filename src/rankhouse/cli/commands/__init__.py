"""The commands of the ``rankhouse`` CLI, one module per concept; :mod:`rankhouse.cli.app`
registers them in ``--help`` order.

* :mod:`.common`: the warehouse from the global options, the options several commands share;
  :mod:`.output`: tables that fit the terminal, TSV, CSV and JSON.
* :mod:`.catalog`: ``ingest qrels|run``, ``runs list|show|rm``, ``qrels list|rm``.
* :mod:`.evaluate`: ``eval``, ``measures``, ``trec-eval``, ``history``.
* :mod:`.compare`: ``compare``; :mod:`.report`: ``report``.
* :mod:`.regress`: ``regress`` and ``gate status|accept``.
* :mod:`.sql`: ``sql`` and ``migrate``.
"""
