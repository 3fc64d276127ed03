"""``port-numa-affinity-policy`` and ``-socket`` declared as data: which NUMA
node placement the compute service must honour for a port's device."""
from __future__ import annotations

from neutrino.resources import validators as v
from neutrino.resources.attributes import AttributeMap, attr

POLICY = "numa_affinity_policy"
# ``socket`` is what the ``-socket`` alias adds; null clears the policy.
POLICIES = ("required", "preferred", "legacy", "socket")

PORT_NUMA_AFFINITY: AttributeMap = {
    "ports": [attr(POLICY, v.one_of(*POLICIES, None), default=None,
                   allow_post=True, allow_put=True)],
}
