"""Exception translation: every error leaves as upstream's ``NeutronError`` body.

Plugins and hooks raise ``neutrino.errors`` classes; Falcon raises its own
for unknown URLs and methods; anything else is a bug and becomes a logged
500 whose body says nothing about the internals.
"""
from __future__ import annotations

import logging
import re
from typing import Any

import falcon
import orjson

from neutrino import errors

LOG = logging.getLogger("neutrino.api")


# An error quotes what it refuses; of an overlong value it quotes a prefix,
# so that an answer never grows with what a client sent. Runs up to
# LONGEST_RUN are left whole, as upstream quotes them: policy rule names,
# values just past an attribute's length (a 257-character FQDN).
QUOTED_PREFIX = 50
LONGEST_RUN = 512
MAX_MESSAGE = 2048
ELLIPSIS = "..."
# Quotes end a run, so that a shortened value keeps its closing quote.
_LONG_RUN = re.compile(r"[^\s'\"]{%d,}" % (LONGEST_RUN + 1))


def shortened(message: str) -> str:
    """``message`` with every unbroken run longer than any identifier cut to
    a short prefix, and the whole cut to a bound, each cut marked by an
    ellipsis."""
    message = _LONG_RUN.sub(lambda m: m.group(0)[:QUOTED_PREFIX] + ELLIPSIS, message)
    if len(message) > MAX_MESSAGE:
        message = message[:MAX_MESSAGE] + ELLIPSIS
    return message


def neutron_error(exc: errors.NeutronException | None, code: int, kind: str,
                  message: str) -> bytes:
    return orjson.dumps({"NeutronError": {"type": kind, "message": shortened(message),
                                          "detail": ""}})


def _handle_neutron(req: falcon.Request, resp: falcon.Response,
                    exc: errors.NeutronException, params: Any) -> None:
    resp.status = exc.code
    resp.content_type = "application/json"
    resp.data = neutron_error(exc, exc.code, exc.type, exc.msg)
    if exc.code >= 500:
        LOG.error("request failed: %s", exc)


def _handle_http(req: falcon.Request, resp: falcon.Response, exc: falcon.HTTPError,
                 params: Any) -> None:
    code = exc.status_code
    kinds = {404: "HTTPNotFound", 405: "HTTPMethodNotAllowed", 400: "HTTPBadRequest",
             401: "HTTPUnauthorized", 415: "HTTPUnsupportedMediaType"}
    message = {404: "The resource could not be found.",
               405: "The method is not allowed for this resource."}.get(
        code, exc.description or exc.title or "")
    resp.status = code
    resp.content_type = "application/json"
    resp.data = neutron_error(None, code, kinds.get(code, "HTTPError"), message)
    for key, value in (exc.headers or {}).items():
        resp.set_header(key, value)


def _handle_any(req: falcon.Request, resp: falcon.Response, exc: Exception,
                params: Any) -> None:
    if isinstance(exc, falcon.HTTPError):
        return _handle_http(req, resp, exc, params)
    if isinstance(exc, errors.NeutronException):
        return _handle_neutron(req, resp, exc, params)
    LOG.exception("unexpected error on %s %s", req.method, req.path)
    resp.status = 500
    resp.content_type = "application/json"
    resp.data = neutron_error(None, 500, "HTTPInternalServerError",
                              "Request Failed: internal server error while processing "
                              "your request.")


def add_error_handlers(app: falcon.App) -> None:
    app.add_error_handler(Exception, _handle_any)
    app.add_error_handler(falcon.HTTPError, _handle_http)
    app.add_error_handler(errors.NeutronException, _handle_neutron)
