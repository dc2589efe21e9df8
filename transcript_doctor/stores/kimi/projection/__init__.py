"""Layer 4, projection: the request each engine sends for a history (normal and strict resend)
and the shape of each request message. May import `read` and `engines`."""
