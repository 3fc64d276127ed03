"""One ``[agent] extensions`` line can name several kinds' extensions (the
all-in-one's file holds the L3 and the OVS agent's): each agent loads and
reports only its own."""
from __future__ import annotations

from oslo_config import cfg

from neutrino.conf.agents import common


def _conf(extensions: str) -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    conf.register_opts([cfg.ListOpt("extensions", default=[])], "AGENT")
    conf([], default_config_files=[])
    conf.set_override("extensions", extensions.split(","), "AGENT")
    return conf


def test_each_agent_keeps_its_own_extensions_of_a_shared_line() -> None:
    conf = _conf("qos, fip_qos,gateway_ip_qos, vpnaas,fwaas_v2,log,local_ip")
    assert common.extensions(conf, "ovs") == {"qos", "log", "local_ip", "fwaas_v2"}
    assert common.extensions(conf, "l3") == {"fip_qos", "gateway_ip_qos", "vpnaas",
                                             "fwaas_v2"}


def test_an_extension_of_no_kind_is_loaded_by_none() -> None:
    conf = _conf("bogus,qos")
    assert common.extensions(conf, "ovs") == {"qos"}
    assert common.extensions(conf, "l3") == frozenset()
