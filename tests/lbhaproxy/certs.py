"""Self-signed certificates for the TLS tests, made with cryptography."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def make(name: str, passphrase: bytes | None = None) -> tuple[bytes, bytes]:
    """(certificate PEM, key PEM) for ``name``."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .sign(key, hashes.SHA256()))
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(passphrase) if passphrase
        else serialization.NoEncryption())
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              encryption))


def store(path: Path, ref: str, name: str, passphrase: bytes | None = None) -> None:
    """``ref`` in the local certificate store at ``path``."""
    cert, key = make(name, passphrase)
    path.mkdir(parents=True, exist_ok=True)
    (path / f"{ref}.crt").write_bytes(cert)
    (path / f"{ref}.key").write_bytes(key)
    if passphrase:
        (path / f"{ref}.pass").write_bytes(passphrase)
