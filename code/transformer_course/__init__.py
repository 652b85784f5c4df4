"""Shared code for the executable Transformer course.

Every chapter imports from here; the test suite checks all of it. Modules, in course order:

- ``notebook``: set-up for a chapter (seeds, threads, plot style) and glue helpers.
- ``checks``: argument checks shared by every public function.
- ``timing``: median wall-clock timing for the measured figures.
"""

__version__ = "0.1.0"
