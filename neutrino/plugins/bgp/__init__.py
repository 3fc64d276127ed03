"""BGP dynamic routing: speakers, peers, their routes and the DR agents hosting them."""
