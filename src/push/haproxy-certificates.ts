// HAProxy's certificates by SNI (ADR 56): each App's served certificate, added at run time to the
// crt-list the zero-hop haproxy.cfg binds :8443 with.

/** The crt-list of the shipped zero-hop haproxy.cfg: its first line names the default certificate. */
export const DEFAULT_HAPROXY_CRT_LIST = "/usr/local/etc/haproxy/replica-mirror.crt-list";
