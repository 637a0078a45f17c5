"""Every host a GCP node's boot reaches, derived from the rendered startup script, held against its network
(issue #38 item 1 for GCP): Private Google Access answers *.googleapis.com and *.pkg.dev, Cloud NAT the
rest, endpoints-only only the Google API range; a fleet whose boot needs a host its network cannot reach
is refused, naming the host, why and the fix."""

from __future__ import annotations

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.gcp import startup
from inference_infra.components.gcp.gpu_fleet import GpuFleet, validate_gpu_fleet
from inference_infra.components.gcp.node_services import (
    NodeNetwork,
    boot_hosts,
    host_problems,
    unreachable,
    written_files,
)
from inference_infra.components.gcp.startup import StartupConfig, render_startup_script
from inference_infra.components.resources import GCP_INSTANCE, GCP_TPU_VM
from tests.components.gcp.helpers import files_of
from tests.components.gcp.test_node_egress import MIRRORS, closed_fleet

TEMPLATE = "gcp:compute/instanceTemplate:InstanceTemplate"
NAT = "gcp:compute/routerNat:RouterNat"
SUBNET = "gcp:compute/subnetwork:Subnetwork"
FIREWALL = "gcp:compute/firewall:Firewall"
FQDN_RULE = "gcp:compute/networkFirewallPolicyRule:NetworkFirewallPolicyRule"
URI = "gs://models/llama"
COVERED = ["google-cloud-ops-agent", "nfs-common", "mdadm"]


def _script(**overrides) -> str:
    config = StartupConfig(
        model_uris=(URI,), manifest_sha256={URI: "ab" * 32}, gpu_metrics=True, local_ssd_count=2, **overrides
    )
    return render_startup_script(config)


def test_node_services_decodes_every_file_the_boot_writes():
    script = _script(host_exporters=True, gpu_exporter=True)
    assert written_files(script) == files_of(script)  # the tests' own decoder agrees, indented lines too


def test_node_services_boot_hosts_of_a_gpu_boot():
    hosts = boot_hosts(_script(host_exporters=True, gpu_exporter=True))
    assert hosts["storage.googleapis.com"] == ["gcs_weights.py calls it"]
    assert "logging.googleapis.com" in hosts
    assert "monitoring.googleapis.com" in hosts
    assert hosts["packages.cloud.google.com"] == ["the Ops Agent's apt repository and signing keys"]
    assert "developer.download.nvidia.com" in hosts  # DCGM when the image lacks it
    assert "archive.ubuntu.com" in hosts  # mdadm for the two local SSDs when the image lacks it
    assert any(w.startswith("image pull nvcr.io/nvidia/k8s/dcgm-exporter") for w in hosts["nvcr.io"])
    assert "quay.io" in hosts
    # the metadata server is no network call
    assert "metadata.google.internal" not in hosts


def test_node_services_closed_boot_names_no_download_host():
    hosts = boot_hosts(_script(package_downloads=False, image_mirrors=MIRRORS, host_exporters=True))
    assert not {"packages.cloud.google.com", "archive.ubuntu.com", "developer.download.nvidia.com"} & set(
        hosts
    )
    assert {h for h in hosts if not h.endswith("googleapis.com")} == {"us-central1-docker.pkg.dev"}


def test_node_services_network_reaches_per_private_google_access_and_nat():
    mirrored = {"quay.io": MIRRORS["quay.io"]}
    hosts = boot_hosts(_script(host_exporters=True, gpu_exporter=True, image_mirrors=mirrored))
    assert unreachable(hosts, NodeNetwork(nat=True)) == {}
    no_nat = unreachable(hosts, NodeNetwork(nat=False))
    assert "storage.googleapis.com" not in no_nat  # Private Google Access
    assert "us-central1-docker.pkg.dev" not in no_nat
    assert {"packages.cloud.google.com", "archive.ubuntu.com", "nvcr.io"} <= set(no_nat)
    assert set(unreachable(hosts, NodeNetwork(nat=False, private_google_access=False))) == set(hosts)
    # endpoints-only: the private zones cover googleapis.com and pkg.dev, not gcr.io
    assert NodeNetwork(nat=False).reaches("gcr.io")
    assert not NodeNetwork.of_fleet(internet_egress=False).reaches("gcr.io")
    assert NodeNetwork.of_fleet(internet_egress=False).reaches("europe-west4-docker.pkg.dev")


def test_node_services_problem_names_the_host_why_and_the_fix():
    problems = {p.value: p.allowed for p in host_problems(_script(), NodeNetwork.of_fleet(False))}
    assert "nvcr.io" not in problems  # no exporters, no engines: no image
    ops = problems["packages.cloud.google.com"]
    assert "the Ops Agent's apt repository and signing keys" in ops
    assert "egress endpoints-only" in ops
    assert "preinstalled_packages" in ops
    images = {p.value: p.allowed for p in host_problems(_script(host_exporters=True), NodeNetwork(nat=False))}
    assert "mirror quay.io in Artifact Registry" in images["quay.io"]


def test_gpu_fleet_rejects_a_boot_calling_a_host_its_network_cannot_reach(monkeypatch):
    # A node script that starts calling a host outside Google's APIs is seen in the rendered boot.
    fetcher = startup.fetcher_source()
    monkeypatch.setattr(
        startup, "fetcher_source", lambda: fetcher + '\nHUB = "https://huggingface.co/api/models"\n'
    )
    args = closed_fleet(image_mirrors=MIRRORS, preinstalled_packages=COVERED)
    problems = validate_gpu_fleet("h100", args, project="test-project")
    [problem] = [p for p in problems if p.value == "huggingface.co"]
    assert problem.input == "internet_egress"
    assert "gcs_weights.py calls it" in problem.allowed
    assert "give the network Cloud NAT" in problem.allowed
    with pytest.raises(InputError, match=r"huggingface.co"):
        GpuFleet("h100", args)


def test_gpu_fleet_reports_an_unmirrored_registry_once():
    problems = validate_gpu_fleet("h100", closed_fleet(preinstalled_packages=COVERED), project="test-project")
    assert [p.input for p in problems if "docker.io" in str(p.value) + p.allowed] == ["image_mirrors"]


def _network(capture) -> NodeNetwork:
    """The stack's network as its resources say: NAT, Private Google Access, endpoints-only firewall."""
    subnets = [s for s in capture.of_type(SUBNET) if s.props.get("purpose") in (None, "PRIVATE")]
    named = [r.props["match"]["destFqdns"] for r in capture.of_type(FQDN_RULE)]
    return NodeNetwork(
        private_google_access=all(s.props.get("privateIpGoogleAccess") for s in subnets),
        nat=bool(capture.of_type(NAT)),
        # named-hosts also allows the Google APIs by a "-google-apis" rule, then NAT to its named hosts
        endpoints_only=not named and any(f.name.endswith("-google-apis") for f in capture.of_type(FIREWALL)),
        named_hosts=frozenset(h for hosts in named for h in hosts) if named else None,
    )


def _boots(capture) -> dict[str, str]:
    scripts = {}
    for kind in (TEMPLATE, GCP_INSTANCE, GCP_TPU_VM):
        for resource in capture.of_type(kind):
            script = (resource.props.get("metadata") or {}).get("startup-script")
            if script:
                scripts[resource.name] = script
    return scripts


@pytest.mark.parametrize(("stack", "boots"), [("dev", 0), ("prod", 3)])
def test_every_gcp_boot_of_the_reference_plans_reaches_every_host_it_calls(plan_stack, stack, boots):
    capture = plan_stack(stack).capture
    scripts = _boots(capture)
    assert len(scripts) == boots  # dev has no GCP fleet; prod an instance, a template and a TPU VM
    network = _network(capture)
    for name, script in scripts.items():
        hosts = boot_hosts(script)
        assert "storage.googleapis.com" in hosts, name  # every reference boot fetches weights
        assert unreachable(hosts, network) == {}, (name, network)


def test_prod_gcp_boots_would_need_nat_for_their_downloads(plan_stack):
    # Held against the same subnet without Cloud NAT, prod's boots name what only NAT reaches.
    for name, script in _boots(plan_stack("prod").capture).items():
        missing = unreachable(boot_hosts(script), NodeNetwork(nat=False))
        assert missing, name
        assert not any(h.endswith((".googleapis.com", ".pkg.dev")) for h in missing), name


def test_gcp_stack_without_cloud_nat_holds_its_nodes_to_googles_apis(tmp_path):
    # egress internet but gcpNetwork.nat false: the nodes reach Google's APIs only (Private Google Access).
    from tests.infra.test_gcp_stack import BASE, FLEET, plan_config

    config = {**BASE, "inference-infra:gcpNetwork": {"nat": False}, "inference-infra:gcpGpuFleets": [FLEET]}
    with pytest.raises(InputError, match=r"packages\.cloud\.google\.com"):
        plan_config(tmp_path, config)
    with_nat = {**config, "inference-infra:gcpNetwork": {"nat": True}}
    assert plan_config(tmp_path, with_nat).capture.of_type(GCP_INSTANCE)


def test_named_hosts_reach_only_their_hosts_and_google_apis():
    network = NodeNetwork(nat=True, named_hosts=frozenset({"us-central1.gce.archive.ubuntu.com"}))
    assert network.reaches("storage.googleapis.com")  # Private Google Access
    assert network.reaches("archive.ubuntu.com")  # the image's mirror, by its GCE name
    assert not network.reaches("developer.download.nvidia.com")
    assert not network.reaches("evil.archive.ubuntu.com.attacker.example")
    assert "named-hosts" in network.describe()
