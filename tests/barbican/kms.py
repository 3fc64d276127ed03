"""What a cloud user does in Barbican before asking for a TLS listener: store
secrets and certificate containers with their own token (Barbican's v1 REST
API, as python-barbicanclient sends it)."""
from __future__ import annotations

import base64
from typing import Any

import requests
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12


class Kms:
    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token

    def _post(self, path: str, body: dict[str, Any]) -> str:
        resp = requests.post(f"{self.url}/v1/{path}", json=body, timeout=60,
                             headers={"X-Auth-Token": self.token})
        assert resp.status_code == 201, resp.text
        return str(resp.json()[f"{path[:-1]}_ref"])

    def secret(self, payload: bytes, name: str = "s") -> str:
        """A binary secret (what python-barbicanclient stores for bytes)."""
        return self._post("secrets", {
            "name": name, "payload": base64.b64encode(payload).decode(),
            "payload_content_type": "application/octet-stream",
            "payload_content_encoding": "base64"})

    def text(self, payload: str, name: str = "t") -> str:
        return self._post("secrets", {"name": name, "payload": payload,
                                      "payload_content_type": "text/plain"})

    def container(self, **parts: str) -> str:
        """A certificate container of secret references (``certificate``,
        ``private_key``, ``intermediates``, ``private_key_passphrase``)."""
        return self._post("containers", {"type": "certificate", "name": "c", "secret_refs": [
            {"name": name, "secret_ref": ref} for name, ref in parts.items()]})

    def acl_users(self, ref: str) -> list[str]:
        resp = requests.get(f"{ref}/acl", headers={"X-Auth-Token": self.token}, timeout=60)
        assert resp.status_code == 200, resp.text
        return list((resp.json().get("read") or {}).get("users") or [])


def p12(cert_pem: bytes, key_pem: bytes) -> bytes:
    """A PKCS12 bundle without password, as octavia-tempest-plugin stores them."""
    cert = x509.load_pem_x509_certificate(cert_pem)
    key = serialization.load_pem_private_key(key_pem, None)
    return pkcs12.serialize_key_and_certificates(
        b"tls", key, cert, None, serialization.NoEncryption())  # type: ignore[arg-type]
