"""List semantics shared by every collection: fields, filters, sorting,
pagination, standard attributes and the tag API."""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.api import _helpers as h

COLLECTIONS = ["networks", "subnets", "ports", "subnetpools"]


def make(client, plural, marker, i=0):
    """One resource of ``plural`` whose description is ``marker``."""
    if plural == "networks":
        return h.network(client, description=marker, name=f"{marker}-{i}")
    if plural == "subnetpools":
        return h.pool(client, [f"10.{200 + i}.0.0/16"], description=marker, name=f"{marker}-{i}")
    net = h.network(client)
    if plural == "subnets":
        return h.subnet(client, net["id"], f"10.{i}.0.0/24", description=marker,
                        name=f"{marker}-{i}")
    return h.port(client, net["id"], description=marker, name=f"{marker}-{i}")


def names(result, plural):
    status, body = result
    assert status == 200, body
    return [x["name"].rsplit("-", 1)[-1] for x in body[plural]]


def path_of(href):
    parts = urlsplit(href)
    return f"{parts.path}?{parts.query}"


@pytest.mark.parametrize("plural", COLLECTIONS)
def test_standard_attributes_on_every_resource(member, plural):
    item = make(member, plural, h.unique())
    assert {"id", "project_id", "tenant_id", "name", "description", "created_at",
            "updated_at", "revision_number", "tags"} <= set(item)


@pytest.mark.parametrize("plural", COLLECTIONS)
def test_fields_is_repeatable_on_list_and_show(member, plural):
    marker = h.unique()
    item = make(member, plural, marker)
    status, body = member.get(f"/v2.0/{plural}?description={marker}&fields=id&fields=name")
    assert status == 200 and body[plural] == [{"id": item["id"], "name": item["name"]}]
    singular = plural[:-1]
    status, body = member.get(f"/v2.0/{plural}/{item['id']}?fields=id&fields=revision_number"
                              f"&fields=tags")
    assert body[singular] == {"id": item["id"], "revision_number": item["revision_number"],
                              "tags": []}


@pytest.mark.parametrize("plural", COLLECTIONS)
def test_unknown_filter_is_400(member, plural):
    msg = h.error(member.get(f"/v2.0/{plural}?colour=red"), 400)
    assert "colour" in msg and "invalid attribute for filtering" in msg


@pytest.mark.parametrize("plural", COLLECTIONS)
def test_repeated_filter_values_are_or(member, plural):
    marker = h.unique()
    for i in range(3):
        make(member, plural, marker, i)
    got = names(member.get(f"/v2.0/{plural}?description={marker}&name={marker}-0"
                           f"&name={marker}-2&sort_key=name&sort_dir=asc"), plural)
    assert got == ["0", "2"]


@pytest.mark.parametrize("plural", COLLECTIONS)
def test_sort_asc_and_desc(member, plural):
    marker = h.unique()
    for i in (1, 0, 2):
        make(member, plural, marker, i)
    base = f"/v2.0/{plural}?description={marker}&sort_key=name"
    assert names(member.get(base + "&sort_dir=asc"), plural) == ["0", "1", "2"]
    assert names(member.get(base + "&sort_dir=desc"), plural) == ["2", "1", "0"]


def test_bad_sort_dir_and_sort_key_are_400(member):
    h.error(member.get("/v2.0/networks?sort_key=name&sort_dir=sideways"), 400)
    h.error(member.get("/v2.0/networks?sort_key=colour&sort_dir=asc"), 400)


def test_bad_limit_is_400(member):
    msg = h.error(member.get("/v2.0/networks?limit=-1"), 400, "BadRequest")
    assert msg == "Bad limit request: Limit must be an integer 0 or greater and not '-1'."


def test_filter_by_id_and_revision_number(member):
    marker = h.unique()
    a, b = make(member, "networks", marker, 0), make(member, "networks", marker, 1)
    assert names(member.get(f"/v2.0/networks?id={b['id']}"), "networks") == ["1"]
    member.put(f"/v2.0/networks/{a['id']}", {"network": {"admin_state_up": False}})
    got = names(member.get(f"/v2.0/networks?description={marker}&revision_number="
                           f"{b['revision_number']}"), "networks")
    assert got == ["1"]


def test_boolean_filter(member):
    marker = h.unique()
    h.network(member, description=marker, name=f"{marker}-0", admin_state_up=False)
    h.network(member, description=marker, name=f"{marker}-1")
    assert names(member.get(f"/v2.0/networks?description={marker}&admin_state_up=false"),
                 "networks") == ["0"]
    h.error(member.get("/v2.0/networks?admin_state_up=maybe"), 400)


@pytest.mark.parametrize("plural", ["networks", "subnetpools"])
def test_pagination_walks_forward_and_back_with_links(member, plural):
    marker = h.unique()
    for i in range(4):
        make(member, plural, marker, i)
    url = f"/v2.0/{plural}?description={marker}&sort_key=name&sort_dir=asc&limit=2"
    status, page1 = member.get(url)
    assert [x["name"][-1] for x in page1[plural]] == ["0", "1"]
    links = {link["rel"]: link["href"] for link in page1[f"{plural}_links"]}
    assert set(links) == {"next", "previous"}
    assert f"marker={page1[plural][-1]['id']}" in links["next"]
    assert "page_reverse=True" in links["previous"]
    status, page2 = member.get(path_of(links["next"]))
    assert [x["name"][-1] for x in page2[plural]] == ["2", "3"]
    back = {link["rel"]: link["href"] for link in page2[f"{plural}_links"]}["previous"]
    status, again = member.get(path_of(back))
    assert [x["name"][-1] for x in again[plural]] == ["0", "1"]


def test_last_page_is_short_and_has_only_previous_link(member):
    marker = h.unique()
    for i in range(3):
        make(member, "networks", marker, i)
    url = f"/v2.0/networks?description={marker}&sort_key=name&sort_dir=asc&limit=2"
    nxt = {link["rel"]: link["href"] for link in member.get(url)[1]["networks_links"]}["next"]
    status, page = member.get(path_of(nxt))
    assert [x["name"][-1] for x in page["networks"]] == ["2"]
    assert [link["rel"] for link in page["networks_links"]] == ["previous"]


def test_empty_page_after_last_has_previous_link_as_upstream(member):
    marker = h.unique()
    for i in range(2):
        make(member, "networks", marker, i)
    url = f"/v2.0/networks?description={marker}&sort_key=name&sort_dir=asc&limit=2"
    nxt = {link["rel"]: link["href"] for link in member.get(url)[1]["networks_links"]}["next"]
    status, page = member.get(path_of(nxt))
    assert page["networks"] == []
    assert [link["rel"] for link in page["networks_links"]] == ["previous"]


def test_limit_without_links_when_unpaginated(member):
    marker = h.unique()
    make(member, "networks", marker)
    status, body = member.get(f"/v2.0/networks?description={marker}")
    assert "networks_links" not in body


def test_sort_key_without_sort_dir_is_400_as_upstream(member):
    msg = h.error(member.get("/v2.0/networks?sort_key=name"), 400)
    assert msg == "The number of sort_keys and sort_dirs must be same"


def test_unknown_marker_with_limit_is_404_as_upstream(member):
    h.error(member.get(f"/v2.0/networks?limit=1&marker={h.ZERO_UUID}"), 404, "NetworkNotFound")


# -- tags ------------------------------------------------------------------------

@pytest.mark.parametrize("plural", COLLECTIONS)
def test_tag_api_status_codes(member, plural):
    item = make(member, plural, h.unique())
    base = f"/v2.0/{plural}/{item['id']}/tags"
    assert member.put(f"{base}/red")[0] == 201
    assert member.get(f"{base}/red") == (204, None)
    msg = h.error(member.get(f"{base}/blue"), 404, "TagNotFound")
    assert msg == "Tag blue could not be found."
    assert member.put(base, {"tags": ["x", "y"]}) == (200, {"tags": ["x", "y"]})
    assert member.get(base) == (200, {"tags": ["x", "y"]})
    assert member.delete(f"{base}/x")[0] == 204
    h.error(member.delete(f"{base}/x"), 404, "TagNotFound")
    assert member.get(f"/v2.0/{plural}/{item['id']}")[1][plural[:-1]]["tags"] == ["y"]
    assert member.delete(base)[0] == 204
    assert member.get(base) == (200, {"tags": []})


def test_tag_change_bumps_revision(member):
    net = h.network(member)
    member.put(f"/v2.0/networks/{net['id']}/tags/red")
    after = member.get(f"/v2.0/networks/{net['id']}")[1]["network"]
    assert after["revision_number"] == net["revision_number"] + 1


def test_tags_on_unknown_resource_are_404(member):
    h.error(member.put(f"/v2.0/networks/{h.ZERO_UUID}/tags/red"), 404, "NetworkNotFound")


def test_tags_body_must_be_a_list(member):
    net = h.network(member)
    h.error(member.put(f"/v2.0/networks/{net['id']}/tags", {"tags": "notalist"}), 400)


@pytest.mark.parametrize("plural", COLLECTIONS)
def test_tag_filters(member, plural):
    marker = h.unique()
    for i, tags in enumerate([["a"], ["a", "b"], ["b"], []]):
        item = make(member, plural, marker, i)
        member.put(f"/v2.0/{plural}/{item['id']}/tags", {"tags": [marker + t for t in tags]})
    a, b = marker + "a", marker + "b"
    base = f"/v2.0/{plural}?description={marker}&sort_key=name&sort_dir=asc"
    assert names(member.get(f"{base}&tags={a}"), plural) == ["0", "1"]
    assert names(member.get(f"{base}&tags={a},{b}"), plural) == ["1"]
    assert names(member.get(f"{base}&tags={a}&tags={b}"), plural) == ["1"]
    assert names(member.get(f"{base}&tags-any={a},{b}"), plural) == ["0", "1", "2"]
    assert names(member.get(f"{base}&not-tags={a},{b}"), plural) == ["0", "2", "3"]
    assert names(member.get(f"{base}&not-tags-any={a},{b}"), plural) == ["3"]


def test_duplicate_tags_in_put_are_400_as_upstream(member):
    net = h.network(member)
    msg = h.error(member.put(f"/v2.0/networks/{net['id']}/tags", {"tags": ["a", "a", "b"]}),
                  400, "InvalidInput")
    assert msg == "Invalid input for operation: Duplicate items in the list: 'a'."


def test_tag_with_comma_is_accepted_as_upstream(member):
    net = h.network(member)
    assert member.put(f"/v2.0/networks/{net['id']}/tags", {"tags": ["a,b"]}) == \
        (200, {"tags": ["a,b"]})


def test_over_long_tag_is_400(member):
    net = h.network(member)
    h.error(member.put(f"/v2.0/networks/{net['id']}/tags", {"tags": ["x" * 256]}), 400,
            "InvalidInput")
    h.error(member.put(f"/v2.0/networks/{net['id']}/tags/{'y' * 300}"), 400, "InvalidInput")
