"""HTTP as this service speaks it, knowing nothing of convolutions: the connection
protocol and its deadlines, security headers and the Host check, methods, error
bodies, paced replies, per-client fair shares, the static page's folder, /docs."""
