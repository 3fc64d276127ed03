"""Descriptors of API extensions, as ``GET /v2.0/extensions`` shows them.

Only the descriptor lives here; whether an alias is listed depends on the
loaded plugins declaring support for it (``supported_extension_aliases``).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExtensionDescriptor:
    alias: str
    name: str
    description: str
    updated: str

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "alias": self.alias,
                "description": self.description, "updated": self.updated,
                "links": []}


_KNOWN = [
    ("subnet-external-network", "Subnet belongs to an external network",
     "Informs if the subnet belongs to an external network", "2024-02-05T18:00:00-00:00"),
    ("external-net", "Neutron external network",
     "Adds external network attribute to network resource.", "2013-01-14T10:00:00-00:00"),
    ("port-security", "Port Security", "Provides port security", "2012-07-23T10:00:00-00:00"),
    ("binding", "Port Binding",
     "Expose port bindings of a virtual port to external application",
     "2014-02-03T10:00:00-00:00"),
    ("quotas", "Quota management support",
     "Expose functions for quotas management per project", "2012-07-29T10:00:00-00:00"),
    ("quota_details", "Quota details management support",
     "Expose functions for quotas usage statistics per project",
     "2017-02-10T10:00:00-00:00"),
    ("quota-check-limit", "Quota engine limit check",
     "Support for checking the resource usage before applying a new quota limit",
     "2021-09-08T16:00:00-00:00"),
    ("quota-check-limit-default", "Quota engine limit check by default",
     "By default, the Neutron quota engine checks the resource usage before applying "
     "a new quota limit", "2024-08-21T16:00:00-00:00"),
    ("allowed-address-pairs", "Allowed Address Pairs",
     "Provides allowed address pairs", "2013-07-23T10:00:00-00:00"),
    ("default-subnetpools", "Default Subnetpools",
     "Provides ability to mark and use a subnetpool as the default.",
     "2016-02-18T18:00:00-00:00"),
    ("empty-string-filtering", "Empty String Filtering Extension",
     "Allow filtering by attributes with empty string value",
     "2018-05-01T10:00:00-00:00"),
    ("extra_dhcp_opt", "Neutron Extra DHCP options",
     "Extra options configuration for DHCP. For example PXE boot options to "
     "DHCP clients can be specified (e.g. tftp-server, server-ip-address, "
     "bootfile-name)", "2013-03-17T12:00:00-00:00"),
    ("filter-validation", "Filter parameters validation",
     "Provides validation on filter parameters.", "2018-07-04T10:00:00-00:00"),
    ("ip-substring-filtering", "IP address substring filtering",
     "Provides IP address substring filtering when listing ports",
     "2017-11-28T09:00:00-00:00"),
    ("net-mtu", "Network MTU", "Provides MTU attribute for a network resource.",
     "2015-03-25T10:00:00-00:00"),
    ("net-mtu-writable", "Network MTU (writable)",
     "Provides a writable MTU attribute for a network resource.",
     "2017-07-12T00:00:00-00:00"),
    ("pagination", "Pagination support",
     "Extension that indicates that pagination is enabled.",
     "2016-06-12T00:00:00-00:00"),
    ("provider", "Provider Network",
     "Expose mapping of virtual networks to physical networks",
     "2012-09-07T10:00:00-00:00"),
    ("multi-provider", "Multi Provider Network",
     "Expose mapping of virtual networks to multiple physical networks",
     "2013-06-27T10:00:00-00:00"),
    ("project-id", "project_id field enabled",
     "Extension that indicates that project_id field is enabled.",
     "2016-09-09T09:09:09-09:09"),
    ("revision-if-match", "If-Match constraints based on revision_number",
     "Extension indicating that If-Match based on revision_number is supported.",
     "2016-12-11T00:00:00-00:00"),
    ("standard-attr-revisions", "Resource revision numbers",
     "This extension will display the revision number of neutron resources.",
     "2016-04-11T10:00:00-00:00"),
    ("sorting", "Sorting support",
     "Extension that indicates that sorting is enabled.",
     "2016-06-12T00:00:00-00:00"),
    ("standard-attr-description", "standard-attr-description",
     "Extension to add descriptions to standard attributes",
     "2016-02-10T10:00:00-00:00"),
    ("subnet_allocation", "Subnet Allocation",
     "Enables allocation of subnets from a subnet pool",
     "2015-03-30T10:00:00-00:00"),
    ("subnetpool-prefix-ops", "Subnet Pool Prefix Operations",
     "Provides support for adjusting the prefix list of subnet pools",
     "2019-02-08T10:00:00-00:00"),
    ("rbac-policies", "RBAC Policies",
     "Allows creation and modification of policies that control project access to "
     "resources.", "2015-06-17T12:15:12-00:00"),
    ("rbac-subnetpool", "Add subnetpool type to RBAC",
     "Add subnetpool type to RBAC", "2020-02-05T00:00:00-00:00"),
    ("tag-creation", "Tag creation extension",
     "Allow to create multiple tags for a resource", "2024-23-07T10:00:00-00:00"),
    ("standard-attr-tag",
     "Tag support for resources with standard attribute: port, subnet, "
     "subnetpool, network, security_group, router, floatingip, policy, trunk, "
     "network_segment_range",
     "Enables to set tag on resources with standard attribute.",
     "2017-01-01T00:00:00-00:00"),
    ("standard-attr-timestamp", "Resource timestamps",
     "Adds created_at and updated_at fields to all Neutron resources that have "
     "Neutron standard attributes.", "2016-09-12T10:00:00-00:00"),
    ("dns-integration", "DNS Integration", "Provides integration with DNS.",
     "2015-08-15T18:00:00-00:00"),
    ("security-group", "security-group",
     "The security groups extension.", "2012-10-05T10:00:00-00:00"),
    ("address-group", "Address group",
     "Support address group", "2020-07-15T10:00:00-00:00"),
    ("security-groups-remote-address-group",
     "Remote address group id field for security group rules",
     "Add new field of remote address group id in SG rules", "2020-08-25T10:00:00-00:00"),
    ("security-groups-normalized-cidr", "Normalized CIDR field for security group rules",
     "Add new field with normalized remote_ip_prefix cidr in SG rule",
     "2020-07-28T10:00:00-00:00"),
    ("stateful-security-group", "Stateful security group",
     "Indicates if the security group is stateful or not", "2019-11-26T09:00:00-00:00"),
    ("port-security-groups-filtering", "Port filtering on security groups",
     "Provides security groups filtering when listing ports", "2018-01-09T09:00:00-00:00"),
    ("security-groups-rules-belongs-to-default-sg",
     "Security group rule belongs to the project's default security group",
     "Flag to determine if the security group rule belongs to the project's default "
     "security group", "2023-05-23T10:00:00-00:00"),
]

KNOWN: dict[str, ExtensionDescriptor] = {
    alias: ExtensionDescriptor(alias, name, desc, updated)
    for alias, name, desc, updated in _KNOWN
}


def register(descriptor: ExtensionDescriptor) -> None:
    """Let a plugin or third-party package add the descriptor of its alias."""
    KNOWN[descriptor.alias] = descriptor
