"""Quotas, providers, flavors, availability zones and their profiles,
amphorae: who may read and write them, and what refuses."""
from __future__ import annotations

import json
import uuid

from tests.octavia.conftest import LB, make_lb, subnet


def test_providers_and_their_capabilities(owner, admin):
    status, body = owner.get(f"{LB}/providers")
    assert status == 200 and body == {"providers": [
        {"name": "noop_driver", "description": "The No-Op driver."}]}
    assert owner.get(f"{LB}/providers/noop_driver/flavor_capabilities")[0] == 403
    status, body = admin.get(f"{LB}/providers/noop_driver/flavor_capabilities")
    assert status == 200
    assert "loadbalancer_topology" in [c["name"] for c in body["flavor_capabilities"]]
    status, body = admin.get(f"{LB}/providers/nope/availability_zone_capabilities")
    assert status == 400 and body["faultstring"] == "Provider 'nope' is not enabled."


def test_flavors_are_admins_to_write_and_everyones_to_read(owner, admin):
    status, body = owner.post(f"{LB}/flavorprofiles", {"flavorprofile": {
        "name": "fp", "provider_name": "noop_driver", "flavor_data": "{}"}})
    assert status == 403
    status, body = admin.post(f"{LB}/flavorprofiles", {"flavorprofile": {
        "name": "fp", "provider_name": "noop_driver",
        "flavor_data": json.dumps({"loadbalancer_topology": "SINGLE"})}})
    assert status == 201, body
    profile = body["flavorprofile"]
    status, body = admin.post(f"{LB}/flavorprofiles", {"flavorprofile": {
        "name": "bad", "provider_name": "noop_driver", "flavor_data": '{"colour": 1}'}})
    assert status == 501
    name = f"small-{uuid.uuid4().hex[:6]}"
    status, body = admin.post(f"{LB}/flavors", {"flavor": {
        "name": name, "flavor_profile_id": profile["id"]}})
    assert status == 201, body
    flavor = body["flavor"]
    assert flavor["enabled"] is True
    assert owner.get(f"{LB}/flavors/{flavor['id']}")[0] == 200
    assert owner.req("DELETE", f"{LB}/flavors/{flavor['id']}")[0] == 403
    assert admin.post(f"{LB}/flavors", {"flavor": {
        "name": name, "flavor_profile_id": profile["id"]}})[0] == 409
    lb = make_lb(owner, flavor_id=flavor["id"])
    assert lb["flavor_id"] == flavor["id"]
    status, body = admin.req("DELETE", f"{LB}/flavors/{flavor['id']}")
    assert status == 409
    assert admin.req("DELETE", f"{LB}/flavorprofiles/{profile['id']}")[0] == 409


def test_a_disabled_flavor_cannot_be_used(owner, admin):
    _, body = admin.post(f"{LB}/flavorprofiles", {"flavorprofile": {
        "name": "fp2", "provider_name": "noop_driver", "flavor_data": "{}"}})
    _, body = admin.post(f"{LB}/flavors", {"flavor": {
        "name": f"off-{uuid.uuid4().hex[:6]}", "enabled": False,
        "flavor_profile_id": body["flavorprofile"]["id"]}})
    sub = subnet(owner)
    status, got = owner.post(f"{LB}/loadbalancers", {"loadbalancer": {
        "vip_subnet_id": sub["id"], "flavor_id": body["flavor"]["id"]}})
    assert status == 400 and "not allowed" in got["faultstring"]


def test_availability_zones_are_named(owner, admin):
    status, body = admin.post(f"{LB}/availabilityzoneprofiles", {"availability_zone_profile": {
        "name": "azp", "provider_name": "noop_driver",
        "availability_zone_data": json.dumps({"compute_zone": "az1"})}})
    assert status == 201, body
    name = f"az-{uuid.uuid4().hex[:6]}"
    status, body = admin.post(f"{LB}/availabilityzones", {"availability_zone": {
        "name": name, "availability_zone_profile_id": body["availability_zone_profile"]["id"]}})
    assert status == 201, body
    status, body = owner.get(f"{LB}/availabilityzones/{name}")
    assert status == 200 and body["availability_zone"]["name"] == name
    lb = make_lb(owner, availability_zone=name)
    assert lb["availability_zone"] == name
    assert admin.req("DELETE", f"{LB}/availabilityzones/{name}")[0] == 409
    status, body = admin.get(f"{LB}/availabilityzones/nowhere")
    assert status == 404


def test_quotas_are_enforced_and_written_by_admins(owner, admin):
    project = owner.session.headers["X-Project-Id"]
    assert owner.req("PUT", f"{LB}/quotas/{project}", {"quota": {"loadbalancer": 1}})[0] == 403
    status, body = admin.req("PUT", f"{LB}/quotas/{project}", {"quota": {"loadbalancer": 1}})
    assert status == 202
    assert body["quota"]["loadbalancer"] == 1 and body["quota"]["load_balancer"] == 1
    assert body["quota"]["listener"] == -1
    make_lb(owner)
    sub = subnet(owner, "10.40.0.0/24")
    status, body = owner.post(f"{LB}/loadbalancers", {"loadbalancer": {"vip_subnet_id": sub["id"]}})
    assert status == 403 and body["faultstring"].startswith("Quota has been met")
    status, body = owner.get(f"{LB}/quotas/{project}")
    assert status == 200 and body["quota"]["load_balancer"] == 1
    assert owner.get(f"{LB}/quotas/{uuid.uuid4().hex}")[0] == 403
    assert admin.req("DELETE", f"{LB}/quotas/{project}")[0] == 202
    status, body = owner.get(f"{LB}/quotas/{project}/default")
    assert status == 200 and body["quota"]["load_balancer"] == -1


def test_there_are_no_amphorae(owner, admin):
    assert owner.get("/load-balancer/v2/octavia/amphorae")[0] == 403
    status, body = admin.get("/load-balancer/v2/octavia/amphorae")
    assert status == 200 and body == {"amphorae": [], "amphorae_links": []}
    status, body = admin.get(f"/load-balancer/v2/octavia/amphorae/{uuid.uuid4()}")
    assert status == 404 and body["faultstring"].startswith("Amphora ")
