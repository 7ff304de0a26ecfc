"""Views for people: ``toolc trace``, ``sample`` and ``graph``, and what they share.

* :mod:`.explore`: an artifact's token-level automaton as a graph (edges, distances, paths).
* :mod:`.locate`: where in a call a text prefix stands (tool, JSON pointer), per format.
* :mod:`.trace`: walk a text through an artifact and explain the first rejection.
* :mod:`.sample`: random outputs an artifact accepts.
* :mod:`.graph`: draw the byte or token automaton (SVG or DOT).

Only the CLI and the tests import these; the runtime never does.
"""
