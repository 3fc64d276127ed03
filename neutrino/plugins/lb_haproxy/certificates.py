"""The certificate store of the haproxy provider, behind one interface with
two backends, as Octavia's certificate managers: files on the server
(``local_cert_manager``, ``FileStore`` here) or Barbican
(``barbican_cert_manager``, ``barbican.BarbicanStore``).

A store turns a TLS reference into what haproxy reads: a certificate
reference (``default_tls_container_ref``, ``sni_container_refs``, a pool's
``tls_container_ref``) into one PEM bundle (certificate, unencrypted key,
intermediates), after checking that the key opens and belongs to the
certificate; a secret reference (client CA, CRL) into its PEM text. The API
asks it before anything is written (``check``, on behalf of the caller: the
caller must be able to hand the reference over), the server again whenever
an agent fetches a load balancer.
"""
from __future__ import annotations

import abc
from typing import Any, Callable

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs7, pkcs12

from neutrino.context import Context
from neutrino.resources.lb_graph import Listener, Pool

LOCAL, BARBICAN = "local_cert_manager", "barbican_cert_manager"


class CertificateError(Exception):
    """A reference the store cannot give (Octavia's ``Could not retrieve certificate``)."""

    def __init__(self, refs: list[str]) -> None:
        super().__init__(f"Could not retrieve certificate: {refs}")
        self.refs = refs


def _spki(key_or_cert: Any) -> bytes:
    return key_or_cert.public_key().public_bytes(  # type: ignore[no-any-return]
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def _chain_pem(data: bytes | None) -> bytes:
    """Intermediates as PEM: given as PEM, or as PKCS7 (PEM or DER), as Octavia takes them."""
    if not data:
        return b""
    if b"-----BEGIN CERTIFICATE-----" in data:
        return b"".join(c.public_bytes(serialization.Encoding.PEM)
                        for c in x509.load_pem_x509_certificates(data))
    load = pkcs7.load_pem_pkcs7_certificates if b"-----BEGIN" in data \
        else pkcs7.load_der_pkcs7_certificates
    return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in load(data))


def pem_bundle(ref: str, cert_pem: bytes, key_pem: bytes, chain: bytes | None = None,
               passphrase: bytes | None = None) -> str:
    """Certificate, unencrypted key and intermediates as one PEM; raises
    ``CertificateError`` when they do not parse or the key is not the certificate's."""
    try:
        cert = x509.load_pem_x509_certificate(cert_pem)
        key = serialization.load_pem_private_key(
            key_pem, password=passphrase.strip() if passphrase else None)
        intermediates = _chain_pem(chain)
    except (ValueError, TypeError):
        raise CertificateError([ref]) from None
    if _spki(key) != _spki(cert):
        raise CertificateError([ref])
    plain = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption())
    return (cert.public_bytes(serialization.Encoding.PEM) + plain + intermediates).decode()


def pkcs12_bundle(ref: str, data: bytes) -> str:
    """A PKCS12 bundle without password (what Octavia takes as a secret
    reference) as one PEM."""
    try:
        key, cert, extra = pkcs12.load_key_and_certificates(data, None)
    except (ValueError, TypeError):
        raise CertificateError([ref]) from None
    if key is None or cert is None:
        raise CertificateError([ref])
    chain = b"".join(c.public_bytes(serialization.Encoding.PEM) for c in extra)
    return pem_bundle(ref, cert.public_bytes(serialization.Encoding.PEM),
                      key.private_bytes(serialization.Encoding.PEM,
                                        serialization.PrivateFormat.PKCS8,
                                        serialization.NoEncryption()), chain)


class CertStore(abc.ABC):
    """Where TLS references are read."""

    @abc.abstractmethod
    def bundle(self, ref: str) -> str:
        """The certificate of ``ref`` with its key and intermediates, as one PEM."""

    @abc.abstractmethod
    def plain(self, ref: str) -> str:
        """A client CA or CRL (one PEM text)."""

    def grant(self, ctx: Context, ref: str) -> None:
        """Let the server read ``ref`` later, as the caller ``ctx`` allows
        (Barbican: the service user in the reference's read ACL); raises
        ``CertificateError`` when the caller cannot."""

    def check(self, ctx: Context, certificates: list[str], secrets: list[str]) -> None:
        """The API's check before a write: every reference given, granted and
        read; raises ``CertificateError`` naming all that fail."""
        bad: list[str] = []
        for refs, read in ((certificates, self.bundle), (secrets, self.plain)):
            for ref in refs:
                try:
                    self.grant(ctx, ref)
                    read(ref)
                except CertificateError:
                    if ref not in bad:
                        bad.append(ref)
        if bad:
            raise CertificateError(bad)

    def for_listener(self, listener: Listener) -> dict[str, object]:
        """What the agent writes for ``listener``: ``default``, ``sni``,
        ``client_ca``, ``client_crl``; every reference it cannot give raises."""
        if listener.protocol != "TERMINATED_HTTPS":
            return {}
        missing: list[str] = []
        out: dict[str, object] = {}

        def take(ref: str, read: Callable[[str], str]) -> str | None:
            try:
                return read(ref)
            except CertificateError:
                missing.append(ref)
                return None

        sni = [take(r, self.bundle) for r in listener.sni_container_refs]
        if listener.default_tls_container_ref:
            out["default"] = take(listener.default_tls_container_ref, self.bundle)
        elif sni:
            out["default"] = sni[0]  # haproxy's first certificate answers clients without SNI
        out["sni"] = [s for s in sni if s]
        if listener.client_ca_tls_container_ref:
            out["client_ca"] = take(listener.client_ca_tls_container_ref, self.plain)
        if listener.client_crl_container_ref:
            out["client_crl"] = take(listener.client_crl_container_ref, self.plain)
        if missing:
            raise CertificateError(missing)
        return out

    def for_pool(self, pool: Pool) -> dict[str, str]:
        """What the agent writes for a TLS ``pool``: ``client`` (the bundle it
        presents to members), ``ca`` and ``crl`` (how it verifies them)."""
        if not pool.tls_enabled:
            return {}
        missing: list[str] = []
        out: dict[str, str] = {}
        for key, ref, read in (("client", pool.tls_container_ref, self.bundle),
                               ("ca", pool.ca_tls_container_ref, self.plain),
                               ("crl", pool.crl_container_ref, self.plain)):
            if not ref:
                continue
            try:
                out[key] = read(ref)
            except CertificateError:
                missing.append(ref)
        if missing:
            raise CertificateError(missing)
        return out
