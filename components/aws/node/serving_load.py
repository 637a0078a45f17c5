"""An elastic pool's load signal: the engines' in-flight requests to CloudWatch (aws/elastic_group.py).

Every interval: running + waiting requests summed over the node's engines (their /metrics on 127.0.0.1),
published as <namespace> InFlightRequests by AutoScalingGroupName (the instance's own
aws:autoscaling:groupName tag); the namespace is the pool's own (InferenceInfra/Serving/<pool>), the one
its role may publish to.

With --complete-launch HOOK it completes the group's launch action once every engine has answered
(the engines have loaded the model, and on Neuron compiled it into the root volume's cache): a
warm-pool machine is stopped only after that, so its warm start skips the load and the compile. Until
then it records a heartbeat every interval, which keeps the hook open past its timeout (the cold
start's grace) while the engines load, up to --launch-deadline seconds after the start; a machine
whose engines have not answered by then is left to the hook's ABANDON, and the group replaces it.
Nothing is published unless every engine answers (the unit starts after the weights are verified),
nor while the machine's target lifecycle state (instance metadata autoscaling/target-lifecycle-state)
is anything but InService: a machine the group is terminating keeps running through its load
balancer's drain and its termination hook, and a warm-pool machine being prepared answers before it
stops; their near-zero datapoints would count in the group's Average per machine (the scaling policies'
and alarms' metric, against GroupInServiceInstances, which leaves them out) and make the pool look
quieter than its serving machines are. EC2 Auto Scaling User Guide, "Retrieve the target lifecycle
state through instance metadata" and "Amazon EC2 Auto Scaling instance lifecycle" (a terminating
instance is deregistered from the load balancer, its connections allowed to continue for the
deregistration delay, before the lifecycle hooks run), read 2026-12-02. The item is missing (404) on an
instance that has not changed state since March 2022; then the node publishes, as before.

usage: serving_load.py --ports 8000[,8001...] --region REGION [--interval 60] [--namespace NS]
                       [--complete-launch HOOK [--launch-deadline SECONDS]]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request

NAMESPACE = "InferenceInfra/Serving"
METRIC = "InFlightRequests"
DIMENSION = "AutoScalingGroupName"
# vLLM's gauges (components/monitoring/serving.py: the same names in 0.28.0, 0.29.x and 0.9.1).
GAUGES = ("vllm:num_requests_running", "vllm:num_requests_waiting")
IMDS = "http://169.254.169.254/latest"
TIMEOUT_SECONDS = 5


def log(message: str) -> None:
    sys.stderr.write(f"serving-load: {message}\n")
    sys.stderr.flush()


def in_flight(exposition: str) -> float | None:
    """Running + waiting requests in one engine's metrics text; None when neither gauge is there."""
    total, seen = 0.0, False
    for line in exposition.splitlines():
        if not line or line.startswith("#"):
            continue
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name not in GAUGES:
            continue
        rest = line.rsplit("}", 1)[1] if "{" in line else line[len(name) :]
        try:  # `name{labels} value [timestamp]`
            total += float(rest.split()[0])
        except (IndexError, ValueError):
            continue
        seen = True
    return total if seen else None


def machine_load(ports: list[int], fetch) -> float | None:
    """The sum over the node's engines; None when any engine does not answer or reports no gauge."""
    total = 0.0
    for port in ports:
        text = fetch(port)
        value = in_flight(text) if text is not None else None
        if value is None:
            return None
        total += value
    return total


def fetch_metrics(port: int) -> str | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=TIMEOUT_SECONDS) as r:
            return r.read(64 * 1024 * 1024).decode("utf-8", "replace")
    except (OSError, urllib.error.URLError):
        return None


def put_command(aws: str, group: str, value: float, region: str, namespace: str = NAMESPACE) -> list[str]:
    return [
        aws,
        "cloudwatch",
        "put-metric-data",
        "--region",
        region,
        "--namespace",
        namespace,
        "--metric-name",
        METRIC,
        "--dimensions",
        f"{DIMENSION}={group}",
        "--unit",
        "Count",
        "--value",
        f"{value:g}",
    ]


def complete_command(aws: str, hook: str, group: str, instance: str, region: str) -> list[str]:
    return [
        aws,
        "autoscaling",
        "complete-lifecycle-action",
        "--region",
        region,
        "--lifecycle-hook-name",
        hook,
        "--auto-scaling-group-name",
        group,
        "--instance-id",
        instance,
        "--lifecycle-action-result",
        "CONTINUE",
    ]


def heartbeat_command(aws: str, hook: str, group: str, instance: str, region: str) -> list[str]:
    return [
        aws,
        "autoscaling",
        "record-lifecycle-action-heartbeat",
        "--region",
        region,
        "--lifecycle-hook-name",
        hook,
        "--auto-scaling-group-name",
        group,
        "--instance-id",
        instance,
    ]


COMPLETE, HEARTBEAT, GIVE_UP, DONE = "complete", "heartbeat", "give-up", "done"


def launch_step(*, loaded: bool, elapsed_seconds: float, deadline_seconds: float, state: str) -> str:
    """What the launch hook needs now: complete it once the engines answer, keep it open while they
    load (until the deadline), then leave it to its ABANDON. `state` is the previous step's result."""
    if state in (COMPLETE, DONE):
        return DONE
    if loaded:
        return COMPLETE
    if state == GIVE_UP or elapsed_seconds >= deadline_seconds:
        return GIVE_UP
    return HEARTBEAT


def imds(path: str) -> str:
    """One instance metadata item (IMDSv2: a session token first)."""
    token_request = urllib.request.Request(
        f"{IMDS}/api/token", method="PUT", headers={"X-aws-ec2-metadata-token-ttl-seconds": "300"}
    )
    with urllib.request.urlopen(token_request, timeout=TIMEOUT_SECONDS) as r:
        token = r.read().decode()
    request = urllib.request.Request(f"{IMDS}/meta-data/{path}", headers={"X-aws-ec2-metadata-token": token})
    with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as r:
        return r.read().decode().strip()


def instance_id() -> str:
    return imds("instance-id")


def target_lifecycle_state() -> str | None:
    """The group's target lifecycle state for this machine (module doc); None when metadata lacks it."""
    try:
        return imds("autoscaling/target-lifecycle-state") or None
    except (OSError, urllib.error.URLError):
        return None


def publishes(target_state: str | None) -> bool:
    """Whether this machine's load belongs in the group's Average now: only while it is headed for (or
    in) InService; unknown (no metadata item) counts as in service (module doc)."""
    return target_state is None or target_state == "InService"


def group_name(aws: str, instance: str, region: str) -> str | None:
    done = subprocess.run(
        [
            aws,
            "ec2",
            "describe-tags",
            "--region",
            region,
            "--filters",
            f"Name=resource-id,Values={instance}",
            "Name=key,Values=aws:autoscaling:groupName",
            "--query",
            "Tags[0].Value",
            "--output",
            "text",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    name = done.stdout.strip()
    if done.returncode != 0 or not name or name == "None":
        log(f"cannot read the group's name (exit {done.returncode}): {done.stderr.strip()}")
        return None
    return name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="serving_load.py", description=__doc__.split("\n")[0])
    parser.add_argument("--ports", required=True, help="the engines' API ports, comma-separated")
    parser.add_argument("--region", required=True)
    parser.add_argument("--interval", type=int, default=60, help="seconds between datapoints")
    parser.add_argument("--complete-launch", default="", help="the launch lifecycle hook to complete")
    parser.add_argument("--namespace", default=NAMESPACE, help="the pool's CloudWatch namespace")
    parser.add_argument(
        "--launch-deadline", type=int, default=3600, help="seconds the engines may take to load"
    )
    args = parser.parse_args(argv)
    ports = [int(p) for p in args.ports.split(",") if p]
    aws = shutil.which("aws")
    if aws is None:
        log("the aws command is not installed; nothing is published")
        return 1
    instance = instance_id()
    group = None
    while group is None:
        group = group_name(aws, instance, args.region)
        if group is None:
            time.sleep(args.interval)
    began = time.monotonic()
    state = HEARTBEAT if args.complete_launch else DONE
    while True:
        started = time.monotonic()
        value = machine_load(ports, fetch_metrics)
        previous = state
        state = launch_step(
            loaded=value is not None,
            elapsed_seconds=started - began,
            deadline_seconds=args.launch_deadline,
            state=state,
        )
        if state in (COMPLETE, HEARTBEAT):
            build = complete_command if state == COMPLETE else heartbeat_command
            done = subprocess.run(
                build(aws, args.complete_launch, group, instance, args.region),
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:  # the hook then times out with ABANDON: the group replaces the machine
                log(f"{state} of {args.complete_launch} failed: {done.stderr.strip()}")
        elif state == GIVE_UP and previous != GIVE_UP:
            log(
                f"the engines did not answer within {args.launch_deadline} s; "
                f"{args.complete_launch} is left to time out"
            )
        if value is not None and publishes(target_lifecycle_state()):
            done = subprocess.run(
                put_command(aws, group, value, args.region, args.namespace),
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                log(f"publishing {args.namespace} {METRIC} failed: {done.stderr.strip()}")
        time.sleep(max(1.0, args.interval - (time.monotonic() - started)))


if __name__ == "__main__":
    sys.exit(main())
