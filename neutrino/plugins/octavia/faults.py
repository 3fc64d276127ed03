"""Octavia's errors: each answers ``{"faultcode", "faultstring", "debuginfo"}``
with its status (``faultcode`` Client below 500, Server from 500), the
messages as Octavia words them."""
from __future__ import annotations


class Fault(Exception):
    code = 500
    msg = "Something unknown went wrong"

    def __init__(self, message: str | None = None, **kwargs: object) -> None:
        self.message = message if message is not None else self.msg % kwargs
        super().__init__(self.message)

    def body(self) -> dict[str, object]:
        return {"faultcode": "Client" if self.code < 500 else "Server",
                "faultstring": self.message, "debuginfo": None}


class InvalidInput(Fault):
    """WSME's refusal of a body attribute."""

    code = 400

    def __init__(self, attr: str, value: object, reason: str) -> None:
        super().__init__(f"Invalid input for field/attribute {attr}. Value: '{value}'. {reason}")


class UnknownAttribute(Fault):
    code = 400

    def __init__(self, where: str, names: list[str]) -> None:
        super().__init__(f"Unknown attribute for argument {where}: {', '.join(sorted(names))}")


class BadRequest(Fault):
    code = 400


class NotFound(Fault):
    code = 404
    msg = "%(resource)s %(id)s not found."


class PolicyForbidden(Fault):
    code = 403
    msg = "Policy does not allow this request to be performed."


class Validation(Fault):
    code = 400
    msg = "Validation failure: %(detail)s"


class InvalidOption(Fault):
    code = 400
    msg = "%(value)s is not a valid option for %(option)s"


class DisabledOption(Fault):
    code = 400
    msg = "The selected %(option)s is not allowed in this deployment: %(value)s"


class InvalidSubresource(Fault):
    code = 400
    msg = "%(resource)s %(id)s not found."


class VIPValidation(Fault):
    code = 400
    msg = "Validation failure: VIP must contain one of: %(objects)s."


class InvalidSortKey(Fault):
    code = 400
    msg = "Supplied sort key '%(key)s' is not valid."


class InvalidSortDirection(Fault):
    code = 400
    msg = "Supplied sort direction '%(key)s' is not valid."


class InvalidMarker(Fault):
    code = 400
    msg = "Supplied pagination marker '%(key)s' is not valid."


class InvalidLimit(Fault):
    code = 400
    msg = "Supplied pagination limit '%(key)s' is not valid."


class InvalidFilterArgument(Fault):
    code = 400
    msg = "One or more arguments are either duplicate or invalid"


class DuplicateListener(Fault):
    code = 409
    msg = ("Another Listener on this Load Balancer is already using protocol "
           "%(protocol)s and protocol_port %(port)d")


class DuplicateMember(Fault):
    code = 409
    msg = "Another member on this pool is already using ip %(ip_address)s on protocol_port %(port)d"


class DuplicateHealthMonitor(Fault):
    code = 409
    msg = "This pool already has a health monitor"


class DuplicatePool(Fault):
    code = 409
    msg = "This listener already has a default pool"


class PoolInUseByL7Policy(Fault):
    code = 409
    msg = "Pool %(id)s is in use by L7 policy %(l7policy_id)s"


class Immutable(Fault):
    code = 409
    msg = "%(resource)s %(id)s is immutable and cannot be updated."


class PendingState(Fault):
    code = 409
    msg = "Invalid state %(state)s of loadbalancer resource %(id)s"


class TooManyRules(Fault):
    code = 409
    msg = "Too many rules on L7 policy %(id)s"


class RecordExists(Fault):
    code = 409
    msg = "A %(field)s of %(name)s already exists."


class ObjectInUse(Fault):
    code = 409
    msg = "%(object)s %(id)s is in use and cannot be modified."


class Quota(Fault):
    code = 403
    msg = "Quota has been met for resources: %(resource)s"


class ProviderNotEnabled(Fault):
    code = 400
    msg = "Provider '%(prov)s' is not enabled."


class ProviderNotFound(Fault):
    code = 501
    msg = "Provider '%(prov)s' was not found."


class ProviderUnsupported(Fault):
    code = 501
    msg = "Provider '%(prov)s' does not support a requested option: %(user_msg)s"


class ProviderFlavorMismatch(Fault):
    code = 400
    msg = "Flavor '%(flav)s' is not compatible with provider '%(prov)s'"


class Conflict(Fault):
    code = 409


class CertificateRetrieval(Fault):
    """A TLS reference the provider cannot read for the caller (nothing written)."""
    code = 400
    msg = "Could not retrieve certificate: %(ref)s"
