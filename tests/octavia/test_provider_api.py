"""The provider interface's plain data and the noop provider's reports."""
from neutrino.plugins.octavia import provider_api as api
from neutrino.plugins.octavia.noop_provider import NoopProvider
from neutrino.resources import lb_graph as g


def _graph(pool_status=g.PENDING_CREATE, lb_status=g.PENDING_UPDATE):
    hm = g.HealthMonitor("hm", "p1", "HTTP", 5, 3, 3, provisioning_status=pool_status)
    pool = g.Pool("p1", "lb", "HTTP", "ROUND_ROBIN", listener_ids=("l1",),
                  members=(g.Member("m1", "p1", "10.0.0.5", 80,
                                    provisioning_status=pool_status),),
                  healthmonitor=hm, provisioning_status=pool_status)
    rule = g.L7Rule("r1", "pol", "PATH", "STARTS_WITH", "/static", provisioning_status=g.ACTIVE)
    pol = g.L7Policy("pol", "l1", "REDIRECT_TO_POOL", 1, redirect_pool_id="p1",
                     rules=(rule,), provisioning_status=g.ACTIVE)
    lis = g.Listener("l1", "lb", "HTTP", 80, default_pool_id="p1", l7policies=(pol,),
                     insert_headers={"X-Forwarded-For": "true"},
                     provisioning_status=g.ACTIVE)
    return g.LoadBalancer("lb", "proj", "noop_driver",
                          g.Vip("10.0.0.10", "port", "sub", "net"),
                          listeners=(lis,), pools=(pool,), provisioning_status=lb_status)


def test_the_graph_survives_a_trip_through_plain_dicts():
    lb = _graph()
    assert g.LoadBalancer.from_dict(lb.to_dict()) == lb


def test_unknown_keys_from_a_newer_server_are_ignored():
    data = _graph().to_dict()
    data["some_new_field"] = 1
    data["pools"][0]["members"][0]["another"] = "x"
    assert g.LoadBalancer.from_dict(data) == _graph()


class _Reporter(api.StatusReporter):
    def __init__(self):
        self.seen = []

    def update_statuses(self, statuses):
        self.seen.extend(statuses)

    def update_stats(self, stats):
        pass

    def graph(self, loadbalancer_id):
        return None

    def graphs(self, provider):
        return []


def test_noop_reports_the_pending_objects_done_and_monitors_online():
    rep = _Reporter()
    NoopProvider(None, rep).pool_create(_graph(), "p1")
    got = {(s.kind, s.id): (s.provisioning_status, s.operating_status) for s in rep.seen}
    assert got == {("members", "m1"): ("ACTIVE", None),
                   ("healthmonitors", "hm"): ("ACTIVE", "ONLINE"),
                   ("pools", "p1"): ("ACTIVE", None),
                   ("loadbalancers", "lb"): ("ACTIVE", None)}


def test_a_delete_is_reported_deleted():
    rep = _Reporter()
    NoopProvider(None, rep).pool_delete(_graph(pool_status=g.PENDING_DELETE), "p1")
    assert {s.id: s.provisioning_status for s in rep.seen} == {
        "m1": "DELETED", "hm": "DELETED", "p1": "DELETED", "lb": "ACTIVE"}


def test_noop_refuses_source_ip_port_as_the_amphora_provider_does():
    lb = _graph()
    bad = g.LoadBalancer.from_dict({**lb.to_dict(), "pools": [
        {**lb.to_dict()["pools"][0], "lb_algorithm": "SOURCE_IP_PORT"}]})
    try:
        NoopProvider(None, _Reporter()).check(bad)
    except api.UnsupportedOption as exc:
        assert "SOURCE_IP_PORT" in str(exc)
    else:
        raise AssertionError("not refused")
