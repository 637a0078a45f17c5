"""Option choices read from the library's own vocabularies, loaded only when a command needs them.

The command modules import nothing heavy at import time (`inference-infra --version` stays fast), but
a choice list must come from the vocabulary it names rather than be restated: `PurchaseChoice` reads
the capacity modes (`components/fleet/capacity.py`, which loads the fleet package and the catalog)
the first time click parses the option or prints its help.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click


class PurchaseChoice(click.Choice):
    """`--purchase`: how a machine is bought, one of the fleets' capacity modes."""

    def __init__(self) -> None:
        super().__init__((), case_sensitive=True)

    @property  # type: ignore[override]
    def choices(self) -> Sequence[Any]:
        from inference_infra.components.fleet.capacity import mode_values

        return tuple(mode_values())

    @choices.setter
    def choices(self, _: Sequence[Any]) -> None:  # click.Choice.__init__ assigns it; the modes decide
        pass


def price_model_of(purchase: str) -> Any:
    """The catalog's price model of a `--purchase` value (a capacity mode)."""
    from inference_infra.components.fleet.capacity import price_model

    return price_model(purchase)
