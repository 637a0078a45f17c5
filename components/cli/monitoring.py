"""`inference-infra monitoring`: Prometheus rules, scrape configs and Grafana dashboards for GPU fleets."""

from __future__ import annotations

from pathlib import Path

import click

from inference_infra.components.cli import app


@app.group()
def monitoring() -> None:
    """Prometheus and Grafana configuration for GPU fleets (YAML/JSON, printed or written)."""


@monitoring.command()
@click.option(
    "--stack",
    "-s",
    help="Print the rules this stack deploys: its program is planned offline and the PrometheusRule "
    "of its GpuObservability is read back.",
)
@click.option(
    "--cwd",
    type=click.Path(path_type=Path),
    default=Path("."),
    help="Folder of the Pulumi project (--stack).",
)
@click.option(
    "--component",
    metavar="NAME",
    help="With --stack: the GpuObservability whose rules to print, when the stack has several.",
)
@click.option(
    "--threshold",
    "-t",
    "overrides",
    multiple=True,
    metavar="NAME=VALUE",
    help="Override one threshold, e.g. idle_utilization_percent=20 or idleMinutes=60 (repeatable).",
)
@click.option(
    "--runbook-url",
    help="Runbook the alerts link to (an http(s) URL without a fragment, spaces, quotes or braces); "
    "'#<alert name>' anchors are appended.",
)
@click.option("--aws-price-region", help="Price AWS GPUs in this region (default: the catalog's reference).")
@click.option("--gcp-price-region", help="Price GCP GPUs in this region (default: the catalog's reference).")
def rules(
    stack: str | None,
    cwd: Path,
    component: str | None,
    overrides: tuple[str, ...],
    runbook_url: str | None,
    aws_price_region: str | None,
    gcp_price_region: str | None,
) -> None:
    """Print the Prometheus rule file: the GPU alerts and the idle-cost recording rules."""
    from dataclasses import replace

    from inference_infra.components.errors import InputError, raise_if_invalid
    from inference_infra.components.monitoring.rules import (
        RuleSettings,
        dump_yaml,
        render_rules_yaml,
        validate_rule_settings,
    )

    if stack:
        options = {
            "--threshold": overrides,
            "--runbook-url": runbook_url,
            "--aws-price-region": aws_price_region,
            "--gcp-price-region": gcp_price_region,
        }
        if given := [flag for flag, value in options.items() if value]:
            raise InputError(
                f"{', '.join(given)} set the rules rendered without --stack; with --stack the rules are "
                "the ones the stack deploys, set by its own config: drop one or the other."
            )
        from inference_infra.components.offline_plan.monitoring import stack_rule_file

        click.echo(dump_yaml(stack_rule_file(cwd, stack, component)), nl=False)
        return
    if component:
        raise InputError("--component picks a stack's GpuObservability: it needs --stack.")
    defaults = RuleSettings()
    settings = replace(
        defaults,
        thresholds=defaults.thresholds.with_overrides(_overrides(overrides)),
        runbook_url=runbook_url or defaults.runbook_url,
        aws_price_region=aws_price_region or defaults.aws_price_region,
        gcp_price_region=gcp_price_region or defaults.gcp_price_region,
    )
    raise_if_invalid("monitoring rules", validate_rule_settings(settings, where="rules"))
    click.echo(render_rules_yaml(settings), nl=False)


@monitoring.command("scrape-config")
@click.option("--cloud", type=click.Choice(["aws", "gcp"]), required=True, help="Where the GPU VMs run.")
@click.option("--region", "regions", multiple=True, help="AWS: a region to discover in (repeatable).")
@click.option("--tag", "tags", multiple=True, metavar="KEY=VALUE", help="AWS: only instances with this tag.")
@click.option("--role-arn", help="AWS: role Prometheus assumes to list instances (another account).")
@click.option("--project", help="GCP: the project to discover in.")
@click.option("--zone", "zones", multiple=True, help="GCP: a zone to discover in (repeatable).")
@click.option("--label", "labels", multiple=True, metavar="KEY=VALUE", help="GCP: only VMs with this label.")
@click.option("--scrape-interval", type=int, default=15, show_default=True, help="Seconds between scrapes.")
@click.option(
    "--rule-file", "rule_files", multiple=True, help="A rule file for Prometheus to load (repeatable)."
)
@click.option("--node-exporter/--no-node-exporter", default=True, show_default=True, help="Scrape :9100.")
@click.option(
    "--neuron-monitor/--no-neuron-monitor",
    default=False,
    show_default=True,
    help="AWS: also scrape neuron-monitor-prometheus (:8000) on Inferentia/Trainium.",
)
@click.option(
    "--engine-port",
    "engine_ports",
    multiple=True,
    type=int,
    help="A vLLM engine /metrics port (repeatable). Default: 8000. --no-engine leaves the engines out.",
)
@click.option("--no-engine", is_flag=True, default=False, help="Do not scrape the vLLM engines.")
def scrape_config(
    cloud: str,
    regions: tuple[str, ...],
    tags: tuple[str, ...],
    role_arn: str | None,
    project: str | None,
    zones: tuple[str, ...],
    labels: tuple[str, ...],
    scrape_interval: int,
    rule_files: tuple[str, ...],
    node_exporter: bool,
    neuron_monitor: bool,
    engine_ports: tuple[int, ...],
    no_engine: bool,
) -> None:
    """Print a prometheus.yml that discovers the GPU VMs by tag and scrapes dcgm-exporter (:9400)
    and node exporter (:9100), with instance id, type, zone and cost tags as labels."""
    from inference_infra.components.errors import InputError, raise_if_invalid
    from inference_infra.components.monitoring.scrape import (
        AwsDiscovery,
        GcpDiscovery,
        ScrapeSettings,
        render_scrape_config_yaml,
        validate_scrape_settings,
    )

    foreign = (
        {"--project": project, "--zone": zones, "--label": labels}
        if cloud == "aws"
        else {"--region": regions, "--tag": tags, "--role-arn": role_arn, "--neuron-monitor": neuron_monitor}
    )
    if misplaced := [flag for flag, value in foreign.items() if value]:
        other = "gcp" if cloud == "aws" else "aws"
        raise InputError(f"{', '.join(misplaced)} applies to --cloud {other}, not --cloud {cloud}.")
    discovery: AwsDiscovery | GcpDiscovery
    if cloud == "aws":
        discovery = AwsDiscovery(regions=list(regions), tags=_pairs("--tag", tags), role_arn=role_arn)
    else:
        discovery = GcpDiscovery(project=project or "", zones=list(zones), labels=_pairs("--label", labels))
    settings = ScrapeSettings(
        discovery=discovery,
        scrape_interval_seconds=scrape_interval,
        node_exporter=node_exporter,
        neuron_monitor=neuron_monitor,
        engine_ports=() if no_engine else (engine_ports or (8000,)),
        rule_files=list(rule_files),
    )
    raise_if_invalid(f"monitoring scrape-config --cloud {cloud}", validate_scrape_settings(settings))
    click.echo(render_scrape_config_yaml(settings), nl=False)


@monitoring.command()
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Folder to write the dashboard JSON files into (created if missing).",
)
@click.option("--neuron/--no-neuron", default=False, help="Add the NeuronCore utilization panel.")
def dashboards(out: Path, neuron: bool) -> None:
    """Write the Grafana dashboards (GPU fleet utilization, idle accelerator cost) as JSON files."""
    from inference_infra.components.errors import InputError
    from inference_infra.components.monitoring.dashboards import dashboards as build
    from inference_infra.components.monitoring.dashboards import to_json

    try:
        out.mkdir(parents=True, exist_ok=True)
        for file_name, model in build(neuron=neuron).items():
            (out / file_name).write_text(to_json(model) + "\n", encoding="utf-8")
            click.echo(str(out / file_name))
    except OSError as e:
        raise InputError(f"--out {str(out)!r}: {e.strerror}.") from None


def _overrides(items: tuple[str, ...]) -> dict[str, float | int]:
    from inference_infra.components.errors import InputError

    out: dict[str, float | int] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name.strip():
            raise InputError(f"--threshold {item!r} must be NAME=VALUE, e.g. idle_utilization_percent=20.")
        try:
            value: float | int = int(text) if name.endswith(("_minutes", "Minutes")) else float(text)
        except ValueError:
            what = "a whole number" if name.endswith(("_minutes", "Minutes")) else "a number"
            raise InputError(f"--threshold {item!r}: the value after '=' must be {what}.") from None
        out[name.strip()] = value
    return out


def _pairs(flag: str, items: tuple[str, ...]) -> dict[str, str]:
    from inference_infra.components.errors import InputError

    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise InputError(f"{flag} {item!r} must be KEY=VALUE, e.g. Environment=prod.")
        out[key] = value
    return out
