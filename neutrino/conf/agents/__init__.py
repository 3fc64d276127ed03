"""Options of the agents, one module per agent (``common`` for what several
share), with upstream's names, groups and defaults.

Each agent runs with its own ``ConfigOpts``; an option two agents declare
differently (``[securitygroup] firewall_driver``) is declared once per agent.
"""
