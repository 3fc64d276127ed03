"""The Barbican backend of the certificate store, as Octavia's
``barbican_cert_manager`` reads it.

A reference is Barbican's ``.../v1/containers/<id>`` (a certificate
container: ``certificate``, ``private_key``, optionally ``intermediates``
and ``private_key_passphrase``) or ``.../v1/secrets/<id>`` (a PKCS12 bundle
for a certificate reference, PEM text for a client CA or CRL). Only the id
and the kind are taken from it: the request goes to the key-manager endpoint
of the Keystone catalog, so the service's token never goes to a host a
caller names.

Barbican's secrets and containers cannot change once stored, so what was
read is kept (the most recently used ``CACHED`` references): the agents'
periodic fetches do not ask Barbican again, and a Barbican briefly away
does not take certificates from load balancers already serving them.

Reads are the service user's (``[service_auth]`` when it has an
``auth_type``, as Octavia's, else ``[keystone_authtoken]``). Before a write
the API puts that user into the read ACL of each reference (and of the
secrets of a container) with the caller's own token, as Octavia's
``barbican_acl`` auth does: a caller can hand over only what it can share.
"""
from __future__ import annotations

import re
import threading
from collections import OrderedDict
from typing import Any, Callable

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading, session, token_endpoint

from neutrino.context import Context
from neutrino.plugins.lb_haproxy.certificates import (
    CertificateError,
    CertStore,
    pem_bundle,
    pkcs12_bundle,
)

REF = re.compile(r"/(secrets|containers)/([0-9a-fA-F-]{36})/?$")
PARTS = ("certificate", "private_key", "intermediates", "private_key_passphrase")
CACHED = 4096


def parse(ref: str) -> tuple[str, str]:
    """(``secrets`` or ``containers``, id) of a Barbican reference."""
    found = REF.search(ref or "")
    if found is None:
        raise CertificateError([ref])
    return found.group(1), found.group(2).lower()


class BarbicanStore(CertStore):
    def __init__(self, conf: Any) -> None:
        self.conf = conf
        self._lock = threading.Lock()
        self._session: session.Session | None = None
        self._endpoint: str | None = None
        self._read: OrderedDict[tuple[str, str], str] = OrderedDict()

    # -- the service's side -----------------------------------------------------

    def _auth_group(self) -> str:
        return "service_auth" if self.conf.service_auth.auth_type else "keystone_authtoken"

    def service(self) -> session.Session:
        """The service user's session, made on first use (after an API worker's fork)."""
        with self._lock:
            if self._session is None:
                group = self._auth_group()
                loading.register_auth_conf_options(self.conf, group)
                auth = loading.load_auth_from_conf_options(self.conf, group)
                self._session = loading.load_session_from_conf_options(
                    self.conf, "service_auth", auth=auth)
            return self._session

    def endpoint(self) -> str:
        """Barbican's URL, without its version: ``[certificates] endpoint`` or the catalog's."""
        if self._endpoint is None:
            opts = self.conf.certificates
            url = opts.endpoint or self.service().get_endpoint(
                service_type="key-manager", interface=opts.endpoint_type,
                region_name=opts.region_name)
            if not url:
                raise ks_exc.EndpointNotFound("no key-manager endpoint in the catalog")
            self._endpoint = re.sub(r"/v1/?$", "", url.rstrip("/"))
        return self._endpoint

    def _url(self, kind: str, oid: str) -> str:
        return f"{self.endpoint()}/v1/{kind}/{oid}"

    def _get(self, sess: session.Session, url: str, ref: str,
             accept: str = "application/json") -> Any:
        resp = sess.get(url, headers={"Accept": accept}, raise_exc=False)
        if resp.status_code != 200:
            raise CertificateError([ref])
        return resp

    def _payload(self, sess: session.Session, secret_url: str, ref: str) -> bytes:
        meta = self._get(sess, secret_url, ref).json()
        content = (meta.get("content_types") or {}).get("default")
        if not content:
            raise CertificateError([ref])
        return self._get(sess, secret_url + "/payload", ref, accept=content).content  # type: ignore[no-any-return]

    def _container(self, sess: session.Session, url: str, ref: str) -> dict[str, str]:
        """The container's secrets, by name."""
        body = self._get(sess, url, ref).json()
        return {s.get("name"): s.get("secret_ref") for s in body.get("secret_refs") or []}

    def _secret_url(self, secret_ref: str, ref: str) -> str:
        kind, oid = parse(secret_ref)
        if kind != "secrets":
            raise CertificateError([ref])
        return self._url(kind, oid)

    # -- the store --------------------------------------------------------------

    def _guard(self, fn: Any, ref: str) -> Any:
        try:
            return fn()
        except ks_exc.ClientException:
            raise CertificateError([ref]) from None

    def _cached(self, what: str, ref: str, read: Callable[[], str]) -> str:
        """``read()`` once per Barbican object (they never change)."""
        key = (what, "/".join(parse(ref)))
        with self._lock:
            if key in self._read:
                self._read.move_to_end(key)
                return self._read[key]
        found: str = self._guard(read, ref)
        with self._lock:
            self._read[key] = found
            while len(self._read) > CACHED:
                self._read.popitem(last=False)
        return found

    def bundle(self, ref: str) -> str:
        kind, oid = parse(ref)

        def read() -> str:
            sess = self.service()
            if kind == "secrets":
                return pkcs12_bundle(ref, self._payload(sess, self._url(kind, oid), ref))
            parts = self._container(sess, self._url(kind, oid), ref)
            if not parts.get("certificate") or not parts.get("private_key"):
                raise CertificateError([ref])
            got = {name: self._payload(sess, self._secret_url(parts[name], ref), ref)
                   for name in PARTS if parts.get(name)}
            return pem_bundle(ref, got["certificate"], got["private_key"],
                              got.get("intermediates"), got.get("private_key_passphrase"))
        return self._cached("bundle", ref, read)

    def plain(self, ref: str) -> str:
        kind, oid = parse(ref)
        if kind != "secrets":
            raise CertificateError([ref])

        def read() -> str:
            data = self._payload(self.service(), self._url(kind, oid), ref)
            return data.decode(errors="replace")
        return self._cached("plain", ref, read)

    def grant(self, ctx: Context, ref: str) -> None:
        """The service user into the read ACL of ``ref`` (and of a container's
        secrets), with the caller's token; nothing without one (noauth)."""
        kind, oid = parse(ref)
        if not ctx.auth_token:
            return

        def add() -> None:
            user_id = self.service().get_user_id()
            mine = session.Session(auth=token_endpoint.Token(self.endpoint(), ctx.auth_token),
                                   verify=self.service().verify)
            urls = [self._url(kind, oid)]
            if kind == "containers":
                parts = self._container(mine, urls[0], ref)
                urls += [self._secret_url(r, ref) for r in parts.values() if r]
            for url in urls:
                acl = (self._get(mine, url + "/acl", ref).json() or {}).get("read") or {}
                users = list(acl.get("users") or [])
                if user_id in users:
                    continue
                resp = mine.put(url + "/acl", json={"read": {
                    "users": users + [user_id],
                    "project-access": acl.get("project-access", True)}}, raise_exc=False)
                if resp.status_code not in (200, 201):
                    raise CertificateError([ref])
        self._guard(add, ref)
