"""accelerator-service-account-restricted: own service account, no cloud-platform scope."""

from __future__ import annotations

import pulumi_gcp as gcp

from inference_infra.policy.rules import accelerator_service_account_restricted as rule
from inference_infra.policy.rules._base import UNKNOWN, Outcome

VM = "gcp:compute/instance:Instance"
POOL = "gcp:container/nodePool:NodePool"
TPU = "gcp:tpu/v2Vm:V2Vm"
QUEUED = "gcp:tpu/v2QueuedResource:V2QueuedResource"
DEFAULT_SA = "123456789012-compute@developer.gserviceaccount.com"
OWN_SA = "gpu-sa@p.iam.gserviceaccount.com"
NARROW = ["https://www.googleapis.com/auth/devstorage.read_only"]
GPU = {"machineType": "g2-standard-8", "zone": "us-central1-a"}
DEFAULT_FIX = "give it a dedicated service account with only the roles it needs."
SCOPE_FIX = (
    "so its token reaches every Google API its account may call; narrow the scopes (devstorage.read_only, "
    "logging.write, monitoring.write)."
)


def test_accelerator_service_account_restricted_passes_an_own_account_with_narrow_scopes(check):
    assert check(rule, VM, {**GPU, "serviceAccount": {"email": OWN_SA, "scopes": NARROW}}) == Outcome()
    assert check(rule, VM, GPU) == Outcome()  # no account at all: no credentials on the VM
    pool = {"nodeConfig": {"machineType": "g2-standard-8", "serviceAccount": OWN_SA, "oauthScopes": NARROW}}
    assert check(rule, POOL, pool) == Outcome()
    assert check(
        rule, VM, {"machineType": "e2-small", "serviceAccount": {"email": DEFAULT_SA}}
    ).not_applicable


def test_accelerator_service_account_restricted_rejects_the_default_account_with_cloud_platform(check):
    vm = {
        **GPU,
        "serviceAccount": {"email": DEFAULT_SA, "scopes": ["https://www.googleapis.com/auth/cloud-platform"]},
    }
    assert check(rule, VM, vm, name="gpu").violations == (
        f"{VM} 'gpu' runs g2-standard-8 as the Compute Engine default service account (serviceAccount.email "
        f"'{DEFAULT_SA}'); {DEFAULT_FIX}",
        f"{VM} 'gpu' runs g2-standard-8 with the cloud-platform scope (serviceAccount.scopes), {SCOPE_FIX}",
    )
    unset = check(rule, POOL, {"nodeConfig": {"machineType": "g2-standard-8"}}, name="pool")
    assert unset.violations == (
        f"{POOL} 'pool' runs g2-standard-8 as the Compute Engine default service account "
        f"(nodeConfig.serviceAccount unset); {DEFAULT_FIX}",
    )
    tpu = {"acceleratorType": "v5litepod-1", "zone": "us-central1-a"}
    assert "default service account (serviceAccount.email unset)" in check(rule, TPU, tpu).violations[0]
    queued = {"tpu": {"nodeSpecs": [{"node": {"acceleratorType": "v5litepod-8", "runtimeVersion": "v2"}}]}}
    assert (
        check(rule, QUEUED, queued, name="q")
        .violations[0]
        .startswith(
            f"{QUEUED} 'q' runs v5litepod-8 as the Compute Engine default service account (a queued resource"
        )
    )
    assert check(rule, QUEUED, queued, {"allowedNames": ["q"]}, name="q") == Outcome()


def test_accelerator_service_account_restricted_does_not_judge_values_not_known_yet(check):
    vm = {**GPU, "serviceAccount": {"email": UNKNOWN, "scopes": NARROW}}
    assert check(rule, VM, vm) == Outcome(unknown=("serviceAccount.email",))


def test_accelerator_service_account_restricted_on_captured_resources(plan_of, run_pack):
    gcp.compute.Instance(
        "gpu",
        machine_type="g2-standard-4",
        zone="us-central1-a",
        boot_disk={"initialize_params": {"image": "debian-12"}},
        network_interfaces=[{"network": "default"}],
        service_account={"email": DEFAULT_SA, "scopes": ["cloud-platform"]},
    )
    report = run_pack(plan_of(), rule.NAME)
    assert len(report.violations) == 2
