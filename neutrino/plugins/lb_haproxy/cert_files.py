"""The file backend of the certificate store, laid out as Octavia's local
certificate manager keeps it: for the deployments without Barbican.

A certificate reference names ``<id>.crt``, ``<id>.key`` and optionally
``<id>.int`` and ``<id>.pass`` under ``[certificates] storage_path``; a
reference that is a URL (a Barbican container's, say) is read by its last
path segment. A client CA or CRL reference names one ``<id>.crt``.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from neutrino.plugins.lb_haproxy.certificates import CertificateError, CertStore, pem_bundle


def _id(ref: str) -> str:
    name = ref.rstrip("/").rsplit("/", 1)[-1]
    if not name or name in (".", "..") or "\\" in name:
        raise CertificateError([ref])
    return name


@dataclasses.dataclass(frozen=True)
class FileStore(CertStore):
    path: str

    def _read(self, ref: str, suffix: str) -> bytes | None:
        target = Path(self.path) / f"{_id(ref)}{suffix}"
        try:
            return target.read_bytes()
        except OSError:
            return None

    def bundle(self, ref: str) -> str:
        cert_pem, key_pem = self._read(ref, ".crt"), self._read(ref, ".key")
        if cert_pem is None or key_pem is None:
            raise CertificateError([ref])
        return pem_bundle(ref, cert_pem, key_pem, self._read(ref, ".int"),
                          self._read(ref, ".pass"))

    def plain(self, ref: str) -> str:
        found = self._read(ref, ".crt")
        if found is None:
            raise CertificateError([ref])
        return found.decode(errors="replace")
