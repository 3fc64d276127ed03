"""The request context an agent sends with its calls to the server.

Upstream's agents call with an admin context (neutron-lib's
``get_admin_context_without_session``), and upstream's server acts on it:
an empty context deserialises as a non-admin one, which sees no port, so a
neutrino agent talking to upstream's server never wired anything. Neutrino's
server ignores the context; the dictionary carries the keys upstream's
``Context.from_dict`` reads.
"""
from __future__ import annotations

import datetime
import uuid
from typing import Any


def admin_context() -> dict[str, Any]:
    """A fresh admin context, serialised as upstream's agents send it (a new
    request id per call, so the server can tell calls apart in its log)."""
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    return {"user_id": None, "project_id": None, "user": None, "project": None,
            "is_admin": True, "roles": ["reader", "member", "admin"],
            "request_id": f"req-{uuid.uuid4()}", "global_request_id": None,
            "read_only": False, "show_deleted": False, "auth_token": None,
            "timestamp": now.strftime("%Y-%m-%d %H:%M:%S.%f"),
            "has_global_access": True, "can_set_project_id": True,
            "is_admin_project": True}
