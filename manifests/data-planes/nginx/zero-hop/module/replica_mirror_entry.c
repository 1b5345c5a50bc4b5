/*
 * An entry's route and what a request does with it: a refusal, or the variables nginx.conf sends
 * upstream and the peer (an IPv4 literal, through the pool) or the named location (a DNS name).
 */

#include "replica_mirror.h"

/* Entries: I|app|ipv4|port|flag|upstream, D|app|name|port|flag|upstream, N|app, and S|app,
 * U|app, O|app (503 secret-unavailable, secret-unusable, credentials-off); the upstream, last,
 * may hold '|'. */
ngx_int_t
rm_route_of(ngx_pool_t *pool, ngx_str_t *key, ngx_str_t *value, rm_route_t **out)
{
    u_char      *p, *end, *start;
    ngx_str_t    f[5];
    ngx_uint_t   n;
    ngx_int_t    port;
    in_addr_t    addr;
    rm_route_t  *route;

    route = ngx_pcalloc(pool, sizeof(rm_route_t));
    if (route == NULL) {
        return NGX_ERROR;
    }
    route->key.data = ngx_pnalloc(pool, key->len + value->len + 1);
    if (route->key.data == NULL) {
        return NGX_ERROR;
    }
    route->key.len = key->len;
    start = ngx_cpymem(route->key.data, key->data, key->len);
    ngx_memcpy(start, value->data, value->len);
    end = start + value->len;
    route->kind = value->len ? start[0] : '\0';

    ngx_memzero(f, sizeof(f));
    p = ngx_strlchr(start, end, '|');
    for (n = 0; p != NULL && n < 5; n++) {
        start = p + 1;
        p = n < 4 ? ngx_strlchr(start, end, '|') : NULL;
        f[n].data = start;
        f[n].len = (p ? p : end) - start;
    }
    route->app = f[0];
    *out = route;

    switch (route->kind) {
    case 'S':
        route->status = NGX_HTTP_SERVICE_UNAVAILABLE;
        route->reason = "secret-unavailable";
        route->retry_after = "5";
        route->text = "credentials not available yet";
        return NGX_OK;
    case 'U':
        route->status = NGX_HTTP_SERVICE_UNAVAILABLE;
        route->reason = "secret-unusable";
        route->retry_after = "5";
        route->text = "credentials not usable";
        return NGX_OK;
    case 'O':
        route->status = NGX_HTTP_SERVICE_UNAVAILABLE;
        route->reason = "credentials-off";
        route->text = "credentials not served";
        return NGX_OK;
    case 'N':
        route->status = NGX_HTTP_BAD_GATEWAY;
        route->text = "app has no http upstream";
        route->app.len = 0;
        route->app.data = NULL;
        return NGX_OK;
    }
    if (n < 5) {
        return NGX_ERROR;
    }
    route->host = f[1];
    route->port = f[2];
    route->credentialed = f[3].len > 0;
    route->upstream = f[4];
    if (route->kind == 'D') {
        return NGX_OK;
    }

    /* What set_current_peer takes: an IPv4 literal and a port. */
    addr = ngx_inet_addr(f[1].data, f[1].len);
    port = ngx_atoi(f[2].data, f[2].len);
    if (addr == INADDR_NONE || port < 1 || port > 65535) {
        return NGX_OK;
    }
    route->peer_ok = 1;
    route->peer.sin.sin_family = AF_INET;
    route->peer.sin.sin_port = htons((in_port_t) port);
    route->peer.sin.sin_addr.s_addr = addr;
    route->peer.name.len = f[1].len + 1 + f[2].len;
    route->peer.name.data = ngx_pnalloc(pool, route->peer.name.len);
    if (route->peer.name.data == NULL) {
        return NGX_ERROR;
    }
    p = ngx_cpymem(route->peer.name.data, f[1].data, f[1].len);
    *p++ = ':';
    ngx_memcpy(p, f[2].data, f[2].len);
    return NGX_OK;
}

static ngx_int_t
rm_set_var(ngx_http_request_t *r, rm_main_conf_t *mcf, ngx_uint_t var, ngx_str_t *value,
    ngx_uint_t copy)
{
    ngx_http_variable_value_t  *v;

    v = &r->variables[mcf->vars[var]];
    v->data = value->data;
    if (copy && value->len) {
        v->data = ngx_pnalloc(r->pool, value->len);
        if (v->data == NULL) {
            return NGX_ERROR;
        }
        ngx_memcpy(v->data, value->data, value->len);
    }
    v->len = value->len;
    v->valid = 1;
    v->no_cacheable = 0;
    v->not_found = 0;
    v->escape = 0;
    return NGX_OK;
}

ngx_int_t
rm_apply(ngx_http_request_t *r, rm_main_conf_t *mcf, rm_current_t *cur, rm_route_t *route)
{
    static ngx_str_t  by_name = ngx_string("@replica_mirror_by_name");
    ngx_int_t         rc;
    rm_peer_t        *peer;

    if (route->status) {
        return rm_answer(r, route->status, route->reason, route->retry_after, route->text,
                         route->app.len ? &route->app : NULL);
    }
    /* The App's credential replaces the client's Authorization ($mirror_authorization); a flagged
     * one the dict does not hold is refused, never sent on without it. */
    if (route->credentialed) {
        if (route->credential.len == 0) {
            return rm_answer(r, NGX_HTTP_SERVICE_UNAVAILABLE, "not-synced", "1",
                             "routing table not synced yet", NULL);
        }
        if (rm_set_var(r, mcf, RM_VAR_AUTHORIZATION, &route->credential, 1) != NGX_OK) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }
    if (rm_set_var(r, mcf, RM_VAR_APP, &route->app, 1) != NGX_OK
        || rm_set_var(r, mcf, RM_VAR_REVISION, &cur->revision, 1) != NGX_OK
        || rm_set_var(r, mcf, RM_VAR_UPSTREAM, &route->upstream, 1) != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (route->kind == 'D') {
        if (rm_set_var(r, mcf, RM_VAR_HOST, &route->host, 1) != NGX_OK
            || rm_set_var(r, mcf, RM_VAR_PORT, &route->port, 1) != NGX_OK)
        {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
        rc = ngx_http_named_location(r, &by_name);
        if (rc == NGX_ERROR || rc >= NGX_HTTP_SPECIAL_RESPONSE) {
            return rc;
        }
        ngx_http_finalize_request(r, NGX_DONE);
        return NGX_DONE;
    }

    /* As balance() failing in balancer_by_lua: nginx's own 500. */
    if (!route->peer_ok) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "replica-mirror: not a peer: \"%V:%V\"", &route->host, &route->port);
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }
    peer = ngx_palloc(r->pool, sizeof(rm_peer_t));
    if (peer == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }
    *peer = route->peer;
    peer->name.data = ngx_pnalloc(r->pool, peer->name.len);
    if (peer->name.data == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }
    ngx_memcpy(peer->name.data, route->peer.name.data, peer->name.len);
    ngx_http_set_ctx(r, peer, ngx_http_replica_mirror_module);
    return NGX_OK;
}
