"""The Barbican certificate store against a real Barbican and Keystone: a
user's container or PKCS12 secret becomes readable by the service once that
user's token put the service user into its ACL, as Octavia's barbican_acl
auth does; what the user cannot share stays unreadable."""
from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from oslo_config import cfg

from neutrino.conf import lb_haproxy as lb_conf
from neutrino.context import Context
from neutrino.plugins.lb_haproxy.barbican import BarbicanStore
from neutrino.plugins.lb_haproxy.certificates import CertificateError
from tests.barbican.conftest import Barbican, Users, authtoken
from tests.barbican.kms import Kms, p12
from tests.keystone.conftest import REGION, Identity, Keystone
from tests.lbhaproxy import certs

pytestmark = [pytest.mark.keystone, pytest.mark.barbican]


@pytest.fixture
def store(keystone: Keystone, users: Users, tmp_path: Path) -> BarbicanStore:
    conf = cfg.ConfigOpts()
    lb_conf.register(conf)
    path = tmp_path / "neutron.conf"
    path.write_text("[certificates]\ncert_manager = barbican_cert_manager\n"
                    f"region_name = {REGION}\n" + authtoken(keystone, users))
    conf([], project="neutrino", default_config_files=[str(path)])
    return BarbicanStore(conf)


def ctx(who: Identity) -> Context:
    return Context(user_id=who.user_id, project_id=who.project_id, roles=who.roles,
                   auth_token=who.token)


def cert_of(bundle: str) -> bytes:
    return x509.load_pem_x509_certificate(bundle.encode()).public_bytes(
        serialization.Encoding.PEM)


def test_a_container_is_read_once_its_owner_let_the_service_read_it(
        barbican: Barbican, users: Users, store: BarbicanStore) -> None:
    kms = Kms(barbican.url, users.a.token)
    cert, key = certs.make("www.example.com", passphrase=b"pw")
    inter, _ = certs.make("intermediate.example.com")
    ref = kms.container(certificate=kms.secret(cert), private_key=kms.secret(key),
                        intermediates=kms.secret(inter),
                        private_key_passphrase=kms.secret(b"pw"))
    with pytest.raises(CertificateError):  # not the service's yet
        store.bundle(ref)
    store.check(ctx(users.a), [ref], [])
    bundle = store.bundle(ref)
    assert cert_of(bundle) == cert
    assert "BEGIN PRIVATE KEY" in bundle and "ENCRYPTED" not in bundle  # opened for haproxy
    assert bundle.count("BEGIN CERTIFICATE") == 2  # with its intermediate
    assert store.service().get_user_id() in kms.acl_users(ref)


def test_a_pkcs12_secret_and_a_ca_secret_are_read(barbican: Barbican, users: Users,
                                                   store: BarbicanStore) -> None:
    kms = Kms(barbican.url, users.a.token)
    cert, key = certs.make("p12.example.com")
    ca, _ = certs.make("ca.example.com")
    cert_ref, ca_ref = kms.secret(p12(cert, key)), kms.secret(ca)
    store.check(ctx(users.a), [cert_ref], [ca_ref])
    assert cert_of(store.bundle(cert_ref)) == cert
    assert store.plain(ca_ref) == ca.decode()


def test_another_projects_secret_is_refused_and_its_acl_left_alone(
        barbican: Barbican, users: Users, store: BarbicanStore) -> None:
    theirs = Kms(barbican.url, users.b.token)
    cert, key = certs.make("b.example.com")
    ref = theirs.secret(p12(cert, key))
    missing = f"{barbican.url}/v1/secrets/{uuid.uuid4()}"
    with pytest.raises(CertificateError) as refused:
        store.check(ctx(users.a), [ref, missing], [])
    assert refused.value.refs == [ref, missing]
    assert theirs.acl_users(ref) == []
    with pytest.raises(CertificateError):
        store.bundle(ref)


def test_a_reference_is_read_from_the_catalogs_barbican_whatever_host_it_names(
        barbican: Barbican, users: Users, store: BarbicanStore) -> None:
    kms = Kms(barbican.url, users.a.token)
    cert, key = certs.make("c.example.com")
    ref = kms.secret(p12(cert, key))
    elsewhere = ref.replace(barbican.url, "http://kms.invalid:9311")
    store.check(ctx(users.a), [elsewhere], [])  # the service token never leaves for kms.invalid
    assert cert_of(store.bundle(elsewhere)) == cert
    assert store.endpoint() == barbican.url


def test_a_tls_pools_client_certificate_ca_and_crl_are_read(
        barbican: Barbican, users: Users, store: BarbicanStore) -> None:
    from neutrino.resources.lb_graph import Pool
    kms = Kms(barbican.url, users.a.token)
    cert, key = certs.make("client.example.com")
    ca, _ = certs.make("members-ca.example.com")
    crl = b"-----BEGIN X509 CRL-----\nMA==\n-----END X509 CRL-----\n"
    refs = kms.secret(p12(cert, key)), kms.secret(ca), kms.secret(crl)
    store.check(ctx(users.a), [refs[0]], [refs[1], refs[2]])
    pool = Pool(id="p", loadbalancer_id="lb", protocol="HTTP", lb_algorithm="ROUND_ROBIN",
                tls_enabled=True, tls_container_ref=refs[0],
                ca_tls_container_ref=refs[1], crl_container_ref=refs[2])
    got = store.for_pool(pool)
    assert cert_of(got["client"]) == cert
    assert (got["ca"], got["crl"]) == (ca.decode(), crl.decode())


def test_what_was_read_is_served_again_with_barbican_away(
        barbican: Barbican, users: Users, store: BarbicanStore) -> None:
    kms = Kms(barbican.url, users.a.token)
    cert, key = certs.make("cached.example.com")
    ref, unread = kms.secret(p12(cert, key)), kms.secret(p12(cert, key))
    store.check(ctx(users.a), [ref], [])
    first = store.bundle(ref)
    store._endpoint = "http://127.0.0.1:9"  # Barbican unreachable from now on
    assert store.bundle(ref) == first  # an agent's resync still gets it
    with pytest.raises(CertificateError):
        store.check(ctx(users.a), [unread], [])
