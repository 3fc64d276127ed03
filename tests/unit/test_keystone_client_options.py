"""The keystoneauth options of ``[nova]`` and ``[placement]``
(``conf/keystone_client.py``) are keystoneauth's own, by name, destination,
type, default and deprecated name: its loaders read them from our
declarations."""
from __future__ import annotations

from keystoneauth1 import loading
from oslo_config import cfg

from neutrino.conf import keystone_client


def _shape(opt: cfg.Opt) -> tuple[object, ...]:
    return (opt.name, opt.dest, type(opt.type).__name__ if not isinstance(opt.type, type)
            else "String", opt.default, sorted((d.name, d.group) for d in opt.deprecated_opts),
            getattr(opt.type, "choices", None) and sorted(opt.type.choices, key=str))


def test_the_options_are_keystoneauths() -> None:
    theirs = loading.get_session_conf_options() + loading.get_auth_common_conf_options()
    assert [_shape(o) for o in keystone_client.options()] == [_shape(o) for o in theirs]


def test_keystoneauth_loads_a_session_and_auth_from_them(tmp_path) -> None:  # type: ignore[no-untyped-def]
    conf = cfg.ConfigOpts()
    conf.register_opts(keystone_client.options(), "nova")
    path = tmp_path / "n.conf"
    path.write_text("[nova]\nauth_type = password\nauth_url = http://127.0.0.1:5000/v3\n"
                    "username = neutron\npassword = secret\nproject_name = service\n"
                    "user_domain_name = Default\nproject_domain_name = Default\n"
                    "insecure = true\ntimeout = 7\n")
    conf(["--config-file", str(path)])
    auth = loading.load_auth_from_conf_options(conf, "nova")
    session = loading.load_session_from_conf_options(conf, "nova", auth=auth)
    assert type(auth).__name__ == "Password"
    assert session.verify is False and session.timeout == 7.0
