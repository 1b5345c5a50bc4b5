/*
 * route(): the request's Host looked up in the table held, as replica-mirror.lua resolves it:
 * the worker's route for that Host when it has one (replica_mirror_cache.c), else the entry,
 * exact name first, then the wildcards.
 */

#include "replica_mirror.h"

static ngx_int_t
rm_lower(ngx_http_request_t *r, ngx_str_t *from, ngx_str_t *to)
{
    to->len = from->len;
    to->data = ngx_pnalloc(r->pool, from->len + 1);
    if (to->data == NULL) {
        return NGX_ERROR;
    }
    ngx_strlow(to->data, from->data, from->len);
    return NGX_OK;
}

/* The entry of `key`, longest suffix first after the exact name: NGX_DECLINED for none,
 * NGX_ABORT for a name /v1/route would refuse. */
static ngx_int_t
rm_resolve(ngx_http_request_t *r, rm_main_conf_t *mcf, rm_current_t *cur, ngx_str_t *key,
    ngx_str_t *lowered, ngx_str_t *value)
{
    ngx_int_t  rc;
    ngx_str_t  suffix;
    u_char    *dot, *end;

    rc = rm_lookup(r, mcf->zone, cur, '=', key, value);
    if (rc != NGX_DECLINED) {
        return rc;
    }
    if (!rm_valid(lowered)) {
        return NGX_ABORT;
    }
    end = key->data + key->len;
    for (dot = ngx_strlchr(key->data, end, '.'); dot; dot = ngx_strlchr(dot + 1, end, '.')) {
        suffix.data = dot + 1;
        suffix.len = end - suffix.data;
        rc = rm_lookup(r, mcf->zone, cur, '*', &suffix, value);
        if (rc != NGX_DECLINED) {
            return rc;
        }
    }
    return NGX_DECLINED;
}

/* A Host the worker holds no route for. A route depends on the Host and the table alone unless
 * the Host's name is not nginx's $host (an absolute-form target): only then is it not kept. */
static ngx_int_t
rm_route_of_host(ngx_http_request_t *r, rm_main_conf_t *mcf, rm_current_t *cur,
    ngx_str_t *header, ngx_str_t *host, rm_route_t **route)
{
    ngx_int_t                  rc;
    ngx_str_t                  lowered, key, authority, value, credential;
    rm_route_t                *kept;
    ngx_uint_t                 cacheable;
    ngx_pool_t                *pool;
    ngx_http_variable_value_t *v;

    if (rm_lower(r, header, &lowered) != NGX_OK) {
        return NGX_ERROR;
    }
    rm_key_of(&lowered, &key);
    cacheable = 1;
    credential.len = 0;
    /* nginx's $host is an absolute-form target's authority, which wins over Host (RFC 9112
     * §3.2.2) and goes on to the upstream as Host ($mirror_authority). */
    if (key.len != host->len || ngx_memcmp(key.data, host->data, key.len) != 0) {
        cacheable = 0;
        if (rm_authority(&r->request_line, &authority)) {
            v = &r->variables[mcf->vars[RM_VAR_AUTHORITY]];
            v->data = authority.data;
            v->len = authority.len;
            v->valid = 1;
            v->no_cacheable = 0;
            v->not_found = 0;
            if (rm_lower(r, &authority, &lowered) != NGX_OK) {
                return NGX_ERROR;
            }
            rm_key_of(&lowered, &key);
        }
    }

    rc = rm_resolve(r, mcf, cur, &key, &lowered, &value);
    if (rc != NGX_OK) {
        return rc;
    }
    rc = rm_route_of(r->pool, &key, &value, route);
    if (rc != NGX_OK) {
        return rc;
    }
    /* The App's credential, the overlay's first. One the dict does not hold is looked for again
     * by the next request: the route is not kept. */
    if ((*route)->credentialed) {
        rc = rm_lookup(r, mcf->zone, cur, 'c', &(*route)->app, &credential);
        if (rc == NGX_ERROR) {
            return NGX_ERROR;
        }
        if (rc == NGX_DECLINED || credential.len == 0) {
            return NGX_OK;
        }
        (*route)->credential = credential;
    }
    if (!cacheable) {
        return NGX_OK;
    }
    /* Everything the kept route copies counts, the Host too: a client choosing 16,384 Hosts of
     * 8 KiB must not hold 128 MiB of a worker's memory until the next push. */
    pool = rm_cache_pool(header->len + key.len + value.len + credential.len);
    if (pool == NULL || rm_route_of(pool, &key, &value, &kept) != NGX_OK) {
        return NGX_ERROR;
    }
    if (kept->credentialed) {
        kept->credential.data = ngx_pnalloc(pool, credential.len);
        if (kept->credential.data == NULL) {
            return NGX_ERROR;
        }
        kept->credential.len = credential.len;
        ngx_memcpy(kept->credential.data, credential.data, credential.len);
    }
    rm_cache_add(header, kept);
    *route = kept;
    return NGX_OK;
}

ngx_int_t
rm_route(ngx_http_request_t *r, rm_main_conf_t *mcf)
{
    ngx_int_t                  rc;
    ngx_str_t                  current, header, *host;
    rm_route_t                *route;
    rm_current_t              *cur;
    ngx_http_core_srv_conf_t  *cscf;

    if (rm_strip_client_headers(r) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }
    rc = rm_dict_read(mcf->zone, (u_char *) "current", sizeof("current") - 1, &current);
    if (rc == NGX_DECLINED) {
        return rm_answer(r, NGX_HTTP_SERVICE_UNAVAILABLE, "not-synced", "1",
                         "routing table not synced yet", NULL);
    }
    if (rc != NGX_OK || rm_cache_hold(&current, &cur) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (r->headers_in.host) {
        header = r->headers_in.host->value;
    } else {
        ngx_str_set(&header, "");
    }
    cscf = ngx_http_get_module_srv_conf(r, ngx_http_core_module);
    host = r->headers_in.server.len ? &r->headers_in.server : &cscf->server_name;

    route = rm_cache_find(&header);
    if (route == NULL || route->key.len != host->len
        || ngx_memcmp(route->key.data, host->data, host->len) != 0)
    {
        rc = rm_route_of_host(r, mcf, cur, &header, host, &route);
        if (rc == NGX_ABORT) {
            return rm_answer(r, NGX_HTTP_BAD_REQUEST, "bad-host", NULL, "bad host", NULL);
        }
        if (rc == NGX_DECLINED) {
            return rm_answer(r, NGX_HTTP_NOT_FOUND, "unknown-host", NULL, "unknown host", NULL);
        }
        if (rc != NGX_OK) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }
    return rm_apply(r, mcf, cur, route);
}
