//! Hostile clients against a real server on real sockets: stalled heads and bodies, oversized lines, headers and bodies, floods without a key. Every loop is bounded in count and time.
