"""accelerator-service-account-restricted: a dedicated account with narrow roles; cloud-platform is fine."""

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
CLOUD_PLATFORM = ["https://www.googleapis.com/auth/cloud-platform"]
DEFAULT_FIX = (
    "give it a dedicated service account with only the roles it needs (the library's GpuFleet and TpuVm "
    "make one when service_account_email is unset); the cloud-platform scope is fine on that account."
)


def test_accelerator_service_account_restricted_passes_an_own_account_with_narrow_scopes(check):
    assert check(rule, VM, {**GPU, "serviceAccount": {"email": OWN_SA, "scopes": NARROW}}) == Outcome()
    assert check(rule, VM, GPU) == Outcome()  # no account at all: no credentials on the VM
    pool = {"nodeConfig": {"machineType": "g2-standard-8", "serviceAccount": OWN_SA, "oauthScopes": NARROW}}
    assert check(rule, POOL, pool) == Outcome()
    assert check(
        rule, VM, {"machineType": "e2-small", "serviceAccount": {"email": DEFAULT_SA}}
    ).not_applicable


def test_accelerator_service_account_restricted_passes_a_dedicated_account_with_cloud_platform(check):
    # Google's advice: a dedicated account, the cloud-platform scope, access limited by IAM roles.
    vm = {**GPU, "serviceAccount": {"email": OWN_SA, "scopes": CLOUD_PLATFORM}}
    assert check(rule, VM, vm) == Outcome()
    pool = {
        "nodeConfig": {
            "machineType": "g2-standard-8",
            "serviceAccount": OWN_SA,
            "oauthScopes": ["cloud-platform"],
        }
    }
    assert check(rule, POOL, pool) == Outcome()


def test_accelerator_service_account_restricted_rejects_the_default_account_whatever_the_scopes(check):
    for scopes in (CLOUD_PLATFORM, NARROW, []):
        vm = {**GPU, "serviceAccount": {"email": DEFAULT_SA, "scopes": scopes}}
        assert check(rule, VM, vm, name="gpu").violations == (
            f"{VM} 'gpu' runs g2-standard-8 as the Compute Engine default service account "
            f"(serviceAccount.email '{DEFAULT_SA}'), shared by every VM of the project; {DEFAULT_FIX}",
        )
    for email in ("default", "", None, "serviceAccount:123-compute@developer.gserviceaccount.com"):
        vm = {**GPU, "serviceAccount": {"email": email, "scopes": NARROW}}
        assert len(check(rule, VM, vm).violations) == 1, email
    unset = check(rule, POOL, {"nodeConfig": {"machineType": "g2-standard-8"}}, name="pool")
    assert unset.violations == (
        f"{POOL} 'pool' runs g2-standard-8 as the Compute Engine default service account "
        f"(nodeConfig.serviceAccount unset), shared by every VM of the project; {DEFAULT_FIX}",
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


def _account(name: str, account_id: str) -> gcp.serviceaccount.Account:
    return gcp.serviceaccount.Account(name, account_id=account_id)


def _vm(name: str, email, scopes=("cloud-platform",), depends_on=()) -> None:
    import pulumi

    gcp.compute.Instance(
        name,
        machine_type="g2-standard-8",
        zone="us-central1-a",
        boot_disk={"initialize_params": {"image": "debian-12"}},
        network_interfaces=[{"network": "default"}],
        service_account={"email": email, "scopes": list(scopes)},
        opts=pulumi.ResourceOptions(depends_on=list(depends_on)),
    )


def test_accelerator_service_account_restricted_rejects_a_dedicated_account_with_broad_roles(
    plan_of, run_pack
):
    for i, role in enumerate(
        ("roles/editor", "roles/owner", "roles/storage.admin", "roles/iam.serviceAccountTokenCreator")
    ):
        gcp.projects.IAMMember(f"grant{i}", project="p", role=role, member=f"serviceAccount:{OWN_SA}")
    gcp.projects.IAMMember(
        "narrow", project="p", role="roles/logging.logWriter", member=f"serviceAccount:{OWN_SA}"
    )
    _vm("gpu", OWN_SA)
    report = run_pack(plan_of(), rule.NAME)
    roles = sorted(m.split("grants ")[1].split(" (")[0] for m in (v.message for v in report.violations))
    assert roles == [
        "'roles/editor'",
        "'roles/iam.serviceAccountTokenCreator'",
        "'roles/owner'",
        "'roles/storage.admin'",
    ]
    assert all(
        "grant predefined roles with only the permissions it needs" in v.message for v in report.violations
    )


def test_accelerator_service_account_restricted_rejects_broad_roles_found_through_the_account_resource(
    plan_of, run_pack
):
    # Before deploy the email is an output: the grant and the VM both depend on the account resource.
    account = _account("gpu-sa", "gpu-sa")
    gcp.projects.IAMMember(
        "editor",
        project="p",
        role="roles/Editor".lower(),
        member=account.email.apply(lambda e: f"serviceAccount:{e}"),
    )
    _vm("gpu", account.email)
    report = run_pack(plan_of(), rule.NAME)
    assert len(report.violations) == 1
    assert "'roles/editor'" in report.violations[0].message


def test_accelerator_service_account_restricted_passes_a_dedicated_account_with_narrow_roles(
    plan_of, run_pack
):
    account = _account("gpu-sa", "gpu-sa")
    member = account.email.apply(lambda e: f"serviceAccount:{e}")
    gcp.projects.IAMMember("logs", project="p", role="roles/logging.logWriter", member=member)
    gcp.projects.IAMMember("metrics", project="p", role="roles/monitoring.metricWriter", member=member)
    # A broad role held by someone else is gcp-no-basic-roles' business, not this machine's.
    gcp.projects.IAMMember("other", project="p", role="roles/editor", member="group:admins@example.com")
    _vm("gpu", account.email)
    assert run_pack(plan_of(), rule.NAME).violations == []


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
    assert len(report.violations) == 1  # the default account; the scope alone is no longer a finding
