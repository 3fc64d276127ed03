"""Moving an existing Neutron cloud onto neutrino: ``neutrino db import``.

``source`` reads an upstream Neutron database (never writing to it),
``rules`` says for every neutrino table where its rows come from in
upstream's schema, and ``importer`` checks what cannot be carried and
writes the rest into an empty neutrino database in one transaction.
"""
