"""The HTML report (``rankhouse report``, ``Warehouse.report``): what it gathers from the
warehouse (:mod:`.gather`), each system's trend (:mod:`.trends`), its figures
(:mod:`.figures`) and the page (:mod:`.report`). It draws with :mod:`rankhouse.present`'s
tables and panels, as the terminal and the notebook do; kept apart from that package because
it runs the verbs (compare, evaluate, history) that the tables only show.
"""
