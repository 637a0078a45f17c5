"""`inference-infra catalog`: the accelerator catalog as a table or JSON."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict

import click

from inference_infra.components.cli import app


@app.command()
@click.option("--cloud", type=click.Choice(["aws", "gcp"]), help="Only this cloud (both by default).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def catalog(cloud: str | None, as_json: bool) -> None:
    """List the catalog's accelerator instance types with devices, memory and prices."""
    from inference_infra.components.catalog import accelerator, instance_types

    items = instance_types(cloud)
    if as_json:
        rows = [asdict(i) | {"accelerator_memory_gib": i.accelerator_memory_gib} for i in items]
        json.dump(rows, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
        return
    click.echo(
        f"{'CLOUD':<5} {'TYPE':<22} {'ACCELERATORS':<30} {'ACC GiB':>8} {'vCPU':>5} {'USD/H':>9}  REGION"
    )
    for i in items:
        device = accelerator(i.accelerator)
        click.echo(
            f"{i.cloud.value:<5} {i.name:<22} {f'{i.accelerator_count} x {device.name}'[:30]:<30} "
            f"{i.accelerator_memory_gib:>8.0f} {i.vcpus:>5} {i.hourly_usd[i.reference_region]:>9.3f}  "
            f"{i.reference_region}"
        )
