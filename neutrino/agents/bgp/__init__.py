"""The BGP dynamic routing agent: speakers peering with BGP routers, advertising routes."""
