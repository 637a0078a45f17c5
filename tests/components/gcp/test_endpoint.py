"""GcpInferenceEndpoint: backends per pool (instance groups, NEGs for TPU VMs), health checks, URL map."""

from __future__ import annotations

from dataclasses import replace

import pytest

from inference_infra.components.endpoints import POOL_HEADER, EndpointPool, PoolWeight, Route
from inference_infra.components.gcp.endpoint import (
    GcpInferenceEndpoint,
    GcpInferenceEndpointArgs,
    GcpPoolBackend,
)

BACKENDS = {
    "small-l4": GcpPoolBackend(
        zone="us-central1-a", instances=["vm-0", "vm-1"], service_account_email="l4@x"
    ),
    "qwen7b-tpu": GcpPoolBackend(zone="us-central1-a", tpu_ips=["10.40.0.9"], service_account_email="tpu@x"),
    "llama70b-h100": GcpPoolBackend(
        zone="us-central1-a", instances=["vm-a3"], instance_ips=["10.40.0.7"], service_account_email="a3@x"
    ),
}
POOLS = [
    EndpointPool(name="small-l4", model="qwen2.5-7b", ports=[8000], backend=BACKENDS["small-l4"]),
    EndpointPool(
        name="qwen7b-tpu",
        model="qwen2.5-7b",
        ports=[8000, 8001],
        unhealthy_after_seconds=600,
        backend=BACKENDS["qwen7b-tpu"],
    ),
    EndpointPool(
        name="llama70b-h100", model="llama-3.1-70b", ports=[8000, 8001], backend=BACKENDS["llama70b-h100"]
    ),
]
ARGS = GcpInferenceEndpointArgs(  # region: the gcp:region config (us-central1)
    network="net",
    subnetwork="subnet",
    pools=POOLS,
    routes=[Route(pools=[PoolWeight("small-l4", 80), PoolWeight("qwen7b-tpu", 20)])],
)


def test_gcp_endpoint_is_internal_with_proxy_only_subnet(plan_of):
    capture = plan_of(GcpInferenceEndpoint("llm", ARGS))
    rule = capture.one("gcp:compute/forwardingRule:ForwardingRule").props
    assert (rule["loadBalancingScheme"], rule["portRange"]) == ("INTERNAL_MANAGED", "80")
    subnet = capture.one("gcp:compute/subnetwork:Subnetwork").props
    assert (subnet["purpose"], subnet["role"]) == ("REGIONAL_MANAGED_PROXY", "ACTIVE")


def test_gcp_endpoint_backends_instance_groups_and_negs(plan_of):
    capture = plan_of(GcpInferenceEndpoint("llm", ARGS))
    group = capture.one("gcp:compute/instanceGroup:InstanceGroup").props
    assert group["instances"] == ["vm-0", "vm-1"]
    negs = {
        n.name: n.props["networkEndpointType"]
        for n in capture.of_type("gcp:compute/networkEndpointGroup:NetworkEndpointGroup")
    }
    assert negs == {
        "llm-qwen7b-tpu-neg": "NON_GCP_PRIVATE_IP_PORT",
        "llm-llama70b-h100-neg": "GCE_VM_IP_PORT",
    }
    endpoints = {
        (e.props["ipAddress"], e.props["port"])
        for e in capture.of_type("gcp:compute/networkEndpoint:NetworkEndpoint")
    }
    assert endpoints == {("10.40.0.9", 8000), ("10.40.0.9", 8001), ("10.40.0.7", 8000), ("10.40.0.7", 8001)}
    services = capture.of_type("gcp:compute/regionBackendService:RegionBackendService")
    assert {s.props["loadBalancingScheme"] for s in services} == {"INTERNAL_MANAGED"}


def test_gcp_endpoint_health_checks_the_engine(plan_of):
    capture = plan_of(GcpInferenceEndpoint("llm", ARGS))
    checks = {c.name: c.props for c in capture.of_type("gcp:compute/regionHealthCheck:RegionHealthCheck")}
    tpu = checks["llm-qwen7b-tpu-hc"]
    assert tpu["httpHealthCheck"]["requestPath"] == "/health"
    assert tpu["unhealthyThreshold"] == 10


def test_gcp_endpoint_url_map_weights_and_header_rules(plan_of):
    capture = plan_of(GcpInferenceEndpoint("llm", ARGS))
    url_map = capture.one("gcp:compute/regionUrlMap:RegionUrlMap").props
    hosts = {r["pathMatcher"]: r["hosts"] for r in url_map["hostRules"]}
    assert hosts == {"pools": ["*"], "route0": ["qwen2-5-7b"]}
    route = next(m for m in url_map["pathMatchers"] if m["name"] == "route0")
    headers = [r["matchRules"][0].get("headerMatches") for r in route["routeRules"]]
    assert headers[0] == [{"headerName": POOL_HEADER, "exactMatch": "small-l4"}]
    weighted = route["routeRules"][-1]["routeAction"]["weightedBackendServices"]
    assert [w["weight"] for w in weighted] == [80, 20]


def test_gcp_endpoint_unmatched_host_gets_404_not_the_first_pool(plan_of):
    capture = plan_of(GcpInferenceEndpoint("llm", ARGS))
    url_map = capture.one("gcp:compute/regionUrlMap:RegionUrlMap").props
    not_found = {"faultInjectionPolicy": {"abort": {"httpStatus": 404, "percentage": 100.0}}}
    # The map's own default and the catch-all host's matcher (header rules only) abort with 404 ...
    assert url_map["defaultRouteAction"] == not_found
    catch_all = next(m for m in url_map["pathMatchers"] if m["name"] == "pools")
    assert catch_all["defaultRouteAction"] == not_found
    # ... and send nothing anywhere: no weighted services beside the default the API requires.
    assert "weightedBackendServices" not in catch_all["defaultRouteAction"]
    # A route's host reaches its weighted pools on the guarded API and the health path only; any other
    # path on that host ends at its matcher's default, which aborts with 404 too.
    route = next(m for m in url_map["pathMatchers"] if m["name"] == "route0")
    assert route["defaultRouteAction"] == not_found
    assert route["routeRules"][-1]["matchRules"] == [{"prefixMatch": "/v1/"}, {"fullPathMatch": "/health"}]


def test_gcp_endpoint_firewall_admits_proxies_and_health_checks_only(plan_of):
    capture = plan_of(GcpInferenceEndpoint("llm", ARGS))
    rule = capture.one("gcp:compute/firewall:Firewall").props
    assert rule["sourceRanges"] == ["10.40.64.0/23", "35.191.0.0/16", "130.211.0.0/22"]
    assert rule["allows"] == [{"protocol": "tcp", "ports": ["8000", "8001"]}]
    assert sorted(rule["targetServiceAccounts"]) == ["a3@x", "l4@x", "tpu@x"]


def test_gcp_endpoint_rejects_weights_not_summing_to_100(plan_of):
    routes = [Route(pools=[PoolWeight("small-l4", 80), PoolWeight("qwen7b-tpu", 30)])]
    with pytest.raises(ValueError, match=r"must sum to 100"):
        plan_of(GcpInferenceEndpoint("llm", replace(ARGS, routes=routes)))


def test_gcp_endpoint_rejects_internet_facing(plan_of):
    with pytest.raises(ValueError, match="internet_facing True is not offered on GCP"):
        plan_of(GcpInferenceEndpoint("llm", replace(ARGS, internet_facing=True)))


def test_gcp_endpoint_rejects_suffix_wildcard_host(plan_of):
    routes = [Route(pools=[PoolWeight("small-l4")], host="qwen.*")]
    with pytest.raises(ValueError, match=r"may use '\*' only as its first character"):
        plan_of(GcpInferenceEndpoint("llm", replace(ARGS, routes=routes)))


def test_gcp_endpoint_takes_the_region_of_the_provider_or_its_own(plan_of):
    capture = plan_of(
        GcpInferenceEndpoint("llm", ARGS), GcpInferenceEndpoint("eu", replace(ARGS, region="europe-west4"))
    )
    regions = {
        r.name: r.props["region"] for r in capture.of_type("gcp:compute/forwardingRule:ForwardingRule")
    }
    assert regions == {"llm-rule": "us-central1", "eu-rule": "europe-west4"}


@pytest.mark.stack_config({"gcp:region": ""})
def test_gcp_endpoint_rejects_a_missing_region(plan_of):
    with pytest.raises(ValueError, match=r"region \(unset\) is required: pass region or set the gcp:region"):
        GcpInferenceEndpoint("llm", ARGS)


def test_gcp_endpoint_request_timeout_reaches_the_backend_services(plan_of):
    capture = plan_of(GcpInferenceEndpoint("llm", replace(ARGS, request_timeout_seconds=1800)))
    services = capture.of_type("gcp:compute/regionBackendService:RegionBackendService")
    assert {s.props["timeoutSec"] for s in services} == {1800}


def test_gcp_endpoint_old_timeout_and_labels_names_warn_and_work(plan_of):
    with pytest.warns(DeprecationWarning, match="is deprecated since") as caught:
        args = GcpInferenceEndpointArgs(
            network="net", subnetwork="subnet", pools=POOLS, timeout_seconds=600, labels={"team": "ml"}
        )
    messages = [str(w.message) for w in caught]
    assert any(
        "(timeout_seconds=...) is deprecated" in m and "use request_timeout_seconds" in m for m in messages
    )
    assert any("(labels=...) is deprecated" in m and m.endswith("use tags") for m in messages)
    assert (args.request_timeout_seconds, dict(args.tags)) == (600, {"team": "ml"})
    capture = plan_of(GcpInferenceEndpoint("llm", args))
    assert capture.one("gcp:compute/forwardingRule:ForwardingRule").props["labels"]["team"] == "ml"


def test_gcp_endpoint_old_backends_dict_warns_and_still_serves(plan_of):
    bare = [replace(pool, backend=None) for pool in POOLS]
    with pytest.warns(DeprecationWarning, match=r"backends=...\) is deprecated .* fleet.endpoint_pool\(\)"):
        args = replace(ARGS, pools=bare, backends=BACKENDS)
    capture = plan_of(GcpInferenceEndpoint("llm", args))
    assert capture.one("gcp:compute/instanceGroup:InstanceGroup").props["instances"] == ["vm-0", "vm-1"]


def test_gcp_endpoint_rejects_a_pool_without_a_backend(plan_of):
    bare = [replace(POOLS[0], backend=None)]
    with pytest.raises(ValueError, match=r"pools\[small-l4\] 'small-l4' has no backend: build it with fleet"):
        GcpInferenceEndpoint("llm", replace(ARGS, pools=bare, routes=[]))


def test_gcp_endpoint_rejects_tags_outside_the_label_rules(plan_of):
    with pytest.raises(ValueError, match=r"tags key 'Team' must be a GCP label key"):
        GcpInferenceEndpoint("llm", replace(ARGS, tags={"Team": "ml"}))
