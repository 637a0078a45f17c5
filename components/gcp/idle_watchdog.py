"""IdleGpuWatchdog (GCP): a scheduled Cloud Run function that stops GPU VMs and TPU VMs that are
provably idle, with the AWS watchdog's contract.

The function's source is `lambdas/gcp_idle_watchdog/` (Google's REST clients only) with the
watchdogs' shared core `lambdas/watchdog_core/` beside it under `lambdas/`, zipped with a `main.py`
at the root (the file the Python runtime's functions-framework loads, with the root on `sys.path`;
it imports the entry point from `lambdas.gcp_idle_watchdog.handler`), its `requirements.txt` and a
price table rendered from the catalog, and uploaded as an object of a private bucket (uniform access,
public access prevented); the object's name carries the archive's digest, so a code change rebuilds
the function. Around it:

- a Cloud Run function (gen2, `cloudfunctionsv2.Function`): ingress internal only, at most one
  instance handling one request at a time (runs never overlap), its own service account;
- that account holds two custom roles in each watched project, listing what it needs and nothing
  else: read (`compute.instances.list`, `tpu.nodes.list`, `monitoring.timeSeries.list`) and stop
  (`compute.instances.stop`, `tpu.nodes.stop`); no delete, no predefined role. IAM conditions cannot
  read labels (they read resource tags), so the `auto-shutdown=true` label is enforced by the code,
  which lists with a server-side label filter and checks the label again on every machine;
- a Cloud Scheduler job posting to the function with an OIDC token of a second service account, the
  only member holding `roles/run.invoker` on the function's service (no public invoker). Cloud Run
  counts Cloud Scheduler in the same project as internal traffic, so internal-only ingress admits it
  (cloud.google.com/run/docs/securing/ingress, read 2026-12-02);
- optionally a Pub/Sub topic for the run summaries, on which only the function may publish.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pulumi
import pulumi_gcp as gcp

from inference_infra.components.catalog import Cloud, PriceModel, hourly_price, instance_types
from inference_infra.components.errors import raise_if_invalid
from inference_infra.components.function_source import FunctionSource, digest
from inference_infra.components.gcp.idle_watchdog_args import (
    IdleGpuWatchdogArgs,
    cron_schedule,
    schedule_seconds,
    validate_idle_watchdog,
)
from inference_infra.components.gcp.service_account import account_id
from inference_infra.components.validation import check_types
from inference_infra.lambdas import gcp_idle_watchdog as function_package
from inference_infra.lambdas import watchdog_core
from inference_infra.lambdas.gcp_idle_watchdog.settings import Settings, default_period_seconds

SOURCE = FunctionSource.of(function_package, shared=(watchdog_core,))
SOURCE_DIR = SOURCE.directory
PACKAGE = SOURCE.name
ENTRY_POINT = "handler"
RUNTIME = "python313"
# functions-framework loads main.py from the source's root and puts that folder on sys.path
# (functions-framework-python, src/functions_framework/_function_registry.py: DEFAULT_SOURCE,
# load_function_module; read 2026-12-02 at 3.10.2); ENTRY_POINT names the function in main.py.
MAIN_PY = f"from {SOURCE.module}.handler import handler  # noqa: F401  (the function's entry point)\n"
READ_PERMISSIONS = ("compute.instances.list", "tpu.nodes.list", "monitoring.timeSeries.list")
STOP_PERMISSIONS = ("compute.instances.stop", "tpu.nodes.stop")
LABELS = {"role": "idle-gpu-watchdog"}

__all__ = ["IdleGpuWatchdog", "IdleGpuWatchdogArgs", "function_settings", "price_table", "source_archive"]


def function_settings(args: IdleGpuWatchdogArgs, projects: tuple[str, ...]) -> Settings:
    """The function's settings (all but the Pub/Sub topic, which may be an Output)."""
    return Settings(
        tag_key=args.tag_key,
        tag_value=args.tag_value,
        idle_minutes=args.idle_minutes,
        util_threshold_percent=float(args.util_threshold_percent),
        grace_minutes=args.grace_minutes,
        metric_name=args.metric_name,
        dry_run=args.dry_run,
        tpu_metric_name=args.tpu_metric_name,
        metric_period_seconds=args.metric_period_seconds or default_period_seconds(args.idle_minutes),
        exclude_tag_key=args.exclude_tag_key,
        stop_reserved_capacity=args.stop_reserved_capacity,
        projects=projects,
        tpu_locations=tuple(args.tpu_locations),
        discard_local_ssd=args.discard_local_ssd,
    )


def price_table(region: str | None) -> dict[str, Any]:
    """The function's prices.json: on-demand and spot USD/hour of every GCP catalog type (VMs and TPUs)."""
    types = {}
    for item in sorted(instance_types(Cloud.GCP), key=lambda i: i.name):
        types[item.name] = {
            "on_demand": hourly_price(item, region=region, model=PriceModel.ON_DEMAND).hourly_usd,
            "spot": hourly_price(item, region=region, model=PriceModel.SPOT).hourly_usd,
        }
    where = region or "each type's reference region"
    basis = f"inference-infra catalog, {where}; spot from the catalog's snapshot"
    return {"version": 1, "region": region, "basis": basis, "types": types}


def source_files(prices: dict[str, Any]) -> dict[str, bytes]:
    """Archive path -> content: main.py, requirements.txt, the function's package with its price
    table, and the shared core."""
    files = {
        "main.py": MAIN_PY.encode(),
        "requirements.txt": (SOURCE_DIR / "requirements.txt").read_bytes(),
        **SOURCE.files({"prices.json": json.dumps(prices, indent=1, sort_keys=True).encode()}),
    }
    return dict(sorted(files.items()))


def source_archive(prices: dict[str, Any]) -> tuple[pulumi.AssetArchive, str]:
    """The function's source as an archive, and its digest (components/function_source.py)."""
    files = source_files(prices)
    assets: dict[str, pulumi.Asset | pulumi.Archive] = {
        path: pulumi.StringAsset(content.decode()) for path, content in files.items()
    }
    return pulumi.AssetArchive(assets), digest(files)


def role_id(name: str, what: str) -> str:
    """A custom role id (3-64 of [a-zA-Z0-9_.]) from the component name: 'idle-gpu-watchdog' ->
    'idleGpuWatchdogRead'."""
    words = [w for w in re.split(r"[^a-zA-Z0-9]+", name) if w] or ["watchdog"]
    camel = words[0].lower() + "".join(w.capitalize() for w in words[1:])
    return f"{camel[: 64 - len(what)]}{what}"


class IdleGpuWatchdog(pulumi.ComponentResource):
    """Stops GPU VMs and TPU VMs labelled auto-shutdown=true that Cloud Monitoring shows idle."""

    def __init__(
        self, name: str, args: IdleGpuWatchdogArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        raise_if_invalid(f"IdleGpuWatchdog {name!r}", check_types(args) or validate_idle_watchdog(args))
        super().__init__("inference-infra:gcp:IdleGpuWatchdog", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        config = pulumi.Config("gcp")
        project = args.project or config.get("project")
        region = args.region or config.get("region")
        if not project or not region:
            missing = [n for n, v in (("project", project), ("region", region)) if not v]
            raise ValueError(
                f"IdleGpuWatchdog {name!r}: {' and '.join(missing)} is not set; pass it in "
                f"IdleGpuWatchdogArgs or set gcp:{missing[0]} in the stack config "
                "(components/gcp/idle_watchdog.py)."
            )
        projects = tuple(args.projects) or (project,)
        settings = function_settings(args, projects)
        every_seconds = schedule_seconds(args.schedule_expression)

        self.account = gcp.serviceaccount.Account(
            f"{name}-sa",
            account_id=account_id(name),
            project=project,
            display_name=f"Idle GPU watchdog {name}: lists and stops machines labelled "
            f"{args.tag_key}={args.tag_value}"[:100],
            opts=child,
        )
        member = self.account.email.apply(lambda email: f"serviceAccount:{email}")
        self.grants: list[pulumi.Resource] = []
        for n, watched in enumerate(projects):
            suffix = "" if n == 0 else f"-{watched}"
            for what, permissions in (("Read", READ_PERMISSIONS), ("Stop", STOP_PERMISSIONS)):
                role = gcp.projects.IAMCustomRole(
                    f"{name}-{what.lower()}{suffix}",
                    role_id=role_id(name, what),
                    project=watched,
                    title=f"Idle GPU watchdog {name}: {what.lower()}"[:100],
                    description=f"{', '.join(permissions)}; no delete (components/gcp/idle_watchdog.py)",
                    permissions=list(permissions),
                    stage="GA",
                    opts=child,
                )
                self.grants.append(
                    gcp.projects.IAMMember(
                        f"{name}-{what.lower()}-grant{suffix}",
                        project=watched,
                        role=role.name,
                        member=member,
                        opts=child,
                    )
                )

        self.topic: gcp.pubsub.Topic | None = None
        topic: pulumi.Input[str] | None = args.pubsub_topic
        if args.create_pubsub_topic:
            self.topic = gcp.pubsub.Topic(f"{name}-topic", project=project, labels=LABELS, opts=child)
            topic = self.topic.id
        if topic is not None:
            self.grants.append(
                gcp.pubsub.TopicIAMMember(
                    f"{name}-publish",
                    topic=topic,
                    project=project if self.topic is not None else None,
                    role="roles/pubsub.publisher",
                    member=member,
                    opts=child,
                )
            )

        self.bucket = gcp.storage.Bucket(
            f"{name}-source",
            project=project,
            location=region.upper(),
            uniform_bucket_level_access=True,
            public_access_prevention="enforced",
            force_destroy=True,  # it holds only the function's source, rebuilt from the repository
            labels=LABELS,
            opts=child,
        )
        archive, digest = source_archive(price_table(region))
        self.source = gcp.storage.BucketObject(
            f"{name}-source-zip",
            bucket=self.bucket.name,
            name=f"{PACKAGE}-{digest[:16]}.zip",
            source=archive,
            opts=child,
        )
        environment: dict[str, pulumi.Input[str]] = dict(settings.as_env())
        if topic is not None:
            environment["PUBSUB_TOPIC"] = topic
        self.function = gcp.cloudfunctionsv2.Function(
            name,
            project=project,
            location=region,
            description=f"Stops machines labelled {args.tag_key}={args.tag_value} idle "
            f"for {args.idle_minutes} min",
            labels=LABELS,
            build_config={
                "runtime": RUNTIME,
                "entry_point": ENTRY_POINT,
                "source": {"storage_source": {"bucket": self.bucket.name, "object": self.source.name}},
            },
            service_config={
                "service_account_email": self.account.email,
                "ingress_settings": "ALLOW_INTERNAL_ONLY",
                "all_traffic_on_latest_revision": True,
                "min_instance_count": 0,
                "max_instance_count": 1,  # runs never overlap
                "max_instance_request_concurrency": 1,
                "available_memory": f"{args.memory_size_mib}Mi",
                "timeout_seconds": args.timeout_seconds,
                "environment_variables": environment,
            },
            opts=pulumi.ResourceOptions(parent=self, depends_on=self.grants),
        )
        self.invoker = gcp.serviceaccount.Account(
            f"{name}-invoker",
            account_id=account_id(f"{name}-run"),
            project=project,
            display_name=f"Cloud Scheduler: invokes the idle GPU watchdog {name}"[:100],
            opts=child,
        )
        self.invoker_grant = gcp.cloudrunv2.ServiceIamMember(
            f"{name}-invoke",
            project=project,
            location=region,
            name=self.function.name,  # a gen2 function's Cloud Run service has its name
            role="roles/run.invoker",
            member=self.invoker.email.apply(lambda email: f"serviceAccount:{email}"),
            opts=child,
        )
        self.schedule = gcp.cloudscheduler.Job(
            f"{name}-schedule",
            project=project,
            region=region,
            description=f"Runs the idle GPU watchdog {name}",
            schedule=cron_schedule(args.schedule_expression),
            time_zone="Etc/UTC",
            attempt_deadline=f"{args.timeout_seconds}s",
            # A run older than one interval is stale: the next scheduled run does its work.
            retry_config={"retry_count": 2, "max_retry_duration": f"{every_seconds}s"},
            http_target={
                "http_method": "POST",
                "uri": self.function.url,
                "body": "e30=",  # base64 of {}
                "headers": {"Content-Type": "application/json"},
                "oidc_token": {"service_account_email": self.invoker.email, "audience": self.function.url},
            },
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.invoker_grant]),
        )

        self.function_name = self.function.name
        self.function_url = self.function.url
        self.schedule_name = self.schedule.name
        self.service_account_email = self.account.email
        self.topic_id: pulumi.Output[str] | None = (
            pulumi.Output.from_input(topic) if topic is not None else None
        )
        self.register_outputs(
            {
                "function_name": self.function_name,
                "function_url": self.function_url,
                "schedule_name": self.schedule_name,
                "service_account_email": self.service_account_email,
                "topic_id": self.topic_id,
            }
        )
