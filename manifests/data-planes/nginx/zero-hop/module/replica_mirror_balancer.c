/*
 * `replica_mirror_balancer;` in an upstream block, before `keepalive`: the peer is the one the
 * access handler chose (its sockaddr and name), so keepalive's pool finds a kept connection to
 * it as it would for a balancer_by_lua peer. One try, as set_current_peer gave.
 */

#include "replica_mirror.h"

typedef struct {
    rm_peer_t  *peer;
} rm_peer_data_t;

static ngx_int_t
rm_get_peer(ngx_peer_connection_t *pc, void *data)
{
    rm_peer_data_t  *pd = data;

    pc->cached = 0;
    pc->connection = NULL;
    pc->sockaddr = (struct sockaddr *) &pd->peer->sin;
    pc->socklen = sizeof(struct sockaddr_in);
    pc->name = &pd->peer->name;
    return NGX_OK;
}

static void
rm_free_peer(ngx_peer_connection_t *pc, void *data, ngx_uint_t state)
{
    if (pc->tries) {
        pc->tries--;
    }
}

static ngx_int_t
rm_init_peer(ngx_http_request_t *r, ngx_http_upstream_srv_conf_t *us)
{
    rm_peer_t       *peer;
    rm_peer_data_t  *pd;

    peer = ngx_http_get_module_ctx(r, ngx_http_replica_mirror_module);
    if (peer == NULL) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "replica-mirror: a request reached the pool without a route");
        return NGX_ERROR;
    }
    pd = ngx_palloc(r->pool, sizeof(rm_peer_data_t));
    if (pd == NULL) {
        return NGX_ERROR;
    }
    pd->peer = peer;
    r->upstream->peer.data = pd;
    r->upstream->peer.get = rm_get_peer;
    r->upstream->peer.free = rm_free_peer;
    r->upstream->peer.tries = 1;
    return NGX_OK;
}

static ngx_int_t
rm_init_upstream(ngx_conf_t *cf, ngx_http_upstream_srv_conf_t *us)
{
    if (ngx_http_upstream_init_round_robin(cf, us) != NGX_OK) {
        return NGX_ERROR;
    }
    us->peer.init = rm_init_peer;
    return NGX_OK;
}

char *
rm_balancer(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_upstream_srv_conf_t  *uscf;

    uscf = ngx_http_conf_get_module_srv_conf(cf, ngx_http_upstream_module);
    if (uscf->peer.init_upstream) {
        return "must come before keepalive and any other balancer";
    }
    uscf->peer.init_upstream = rm_init_upstream;
    return NGX_CONF_OK;
}
