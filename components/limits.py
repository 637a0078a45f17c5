"""Upper bounds on how many machines a fleet may plan.

Standard library only, so a stack file's counts can be checked before any component, provider
SDK or typed config is imported (`infra/stack_bounds.py`): a mistyped `count: 100000` is one
error in well under a second, not a plan that takes the machine down.
"""

from __future__ import annotations

# The most machines one fleet may plan unless its `max_machines` says more (the largest reference
# pool has 4 machines), and the most it may say.
MAX_MACHINES_PER_FLEET = 1_000
MAX_MACHINES_PER_FLEET_CEILING = 10_000
