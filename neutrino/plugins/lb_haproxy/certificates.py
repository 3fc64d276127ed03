"""The certificate store of the haproxy provider: files on the server, laid
out as Octavia's local certificate manager keeps them.

A TLS container reference (``default_tls_container_ref``,
``sni_container_refs``) names ``<id>.crt``, ``<id>.key`` and optionally
``<id>.int`` and ``<id>.pass`` under ``[certificates] storage_path``; a
reference that is a URL (a Barbican container's, say) is read by its last
path segment. Each one is checked (the key opens, with the passphrase if
any, and belongs to the certificate) and handed to the agent as one PEM
bundle (certificate, unencrypted key, intermediates), which is what
haproxy's ``crt`` reads. A client CA or CRL reference names one ``.crt``.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from neutrino.resources.lb_graph import Listener


class CertificateError(Exception):
    """A reference the store cannot give (Octavia's ``Could not retrieve certificate``)."""

    def __init__(self, refs: list[str]) -> None:
        super().__init__(f"Could not retrieve certificate: {refs}")
        self.refs = refs


def _id(ref: str) -> str:
    name = ref.rstrip("/").rsplit("/", 1)[-1]
    if not name or name in (".", "..") or "\\" in name:
        raise CertificateError([ref])
    return name


@dataclasses.dataclass(frozen=True)
class CertStore:
    path: str

    def _read(self, ref: str, suffix: str, binary: bool = False) -> bytes | None:
        target = Path(self.path) / f"{_id(ref)}{suffix}"
        try:
            return target.read_bytes()
        except OSError:
            return None

    def bundle(self, ref: str) -> str:
        """The certificate of ``ref`` with its key and intermediates, as one PEM."""
        cert_pem, key_pem = self._read(ref, ".crt"), self._read(ref, ".key")
        if cert_pem is None or key_pem is None:
            raise CertificateError([ref])
        passphrase = self._read(ref, ".pass")
        try:
            cert = x509.load_pem_x509_certificate(cert_pem)
            key = serialization.load_pem_private_key(
                key_pem, password=passphrase.strip() if passphrase else None)
        except (ValueError, TypeError):
            raise CertificateError([ref]) from None
        if key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo) != \
                cert.public_key().public_bytes(
                    serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo):
            raise CertificateError([ref])
        plain = key.private_bytes(serialization.Encoding.PEM,
                                  serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption())
        chain = self._read(ref, ".int") or b""
        return (cert.public_bytes(serialization.Encoding.PEM) + plain + chain).decode()

    def plain(self, ref: str) -> str:
        """A client CA or CRL (one PEM file)."""
        found = self._read(ref, ".crt")
        if found is None:
            raise CertificateError([ref])
        return found.decode(errors="replace")

    def for_listener(self, listener: Listener) -> dict[str, object]:
        """What the agent writes for ``listener``: ``default``, ``sni``,
        ``client_ca``, ``client_crl``; every reference it cannot give raises."""
        if listener.protocol != "TERMINATED_HTTPS":
            return {}
        missing: list[str] = []
        out: dict[str, object] = {}

        def take(ref: str, read: object) -> str | None:
            try:
                return read(ref)  # type: ignore[operator, no-any-return]
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
