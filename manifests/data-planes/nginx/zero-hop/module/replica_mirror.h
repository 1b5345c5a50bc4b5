/*
 * replica-mirror's zero-hop routing in C: what replica-mirror.lua's route() and balance() do,
 * reading the same lua_shared_dict that the Lua push endpoints fill (ADR 86).
 */

#ifndef REPLICA_MIRROR_H
#define REPLICA_MIRROR_H

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

/* The variables route() sets, indexed once at configuration (nginx.conf declares them). */
enum {
    RM_VAR_APP, RM_VAR_REVISION, RM_VAR_HOST, RM_VAR_PORT, RM_VAR_UPSTREAM, RM_VAR_AUTHORITY,
    RM_VAR_AUTHORIZATION, RM_VAR_COUNT
};

typedef struct {
    ngx_str_t         zone_name;
    ngx_shm_zone_t   *zone;
    ngx_int_t         vars[RM_VAR_COUNT];
} rm_main_conf_t;

typedef struct {
    ngx_flag_t        route;
} rm_loc_conf_t;

/* A routed request's peer, which the balancer hands to nginx (and keepalive). */
typedef struct {
    struct sockaddr_in  sin;
    ngx_str_t           name;
} rm_peer_t;

/* "current": the generation, revision and overlay ("" for none) the request reads from. */
typedef struct {
    ngx_str_t  gen;
    ngx_str_t  revision;
    ngx_str_t  overlay;
} rm_current_t;

/* A Host's route: a refusal (status) or an entry's fields, with its peer for an IPv4 one. */
typedef struct {
    ngx_str_t    key;
    ngx_uint_t   status;
    const char  *reason;
    const char  *retry_after;
    const char  *text;
    u_char       kind;
    ngx_str_t    app;
    ngx_str_t    host;
    ngx_str_t    port;
    ngx_str_t    upstream;
    ngx_uint_t   credentialed;
    ngx_str_t    credential;
    ngx_uint_t   peer_ok;
    rm_peer_t    peer;
} rm_route_t;

extern ngx_module_t  ngx_http_replica_mirror_module;

/* replica_mirror_table.c */
ngx_int_t rm_dict_read(ngx_shm_zone_t *zone, u_char *key, size_t len, ngx_str_t *value);
ngx_int_t rm_lookup(ngx_http_request_t *r, ngx_shm_zone_t *zone, rm_current_t *cur, u_char kind,
    ngx_str_t *key, ngx_str_t *value);
void rm_overlay_drop(void);

/* replica_mirror_cache.c */
ngx_int_t rm_cache_hold(ngx_str_t *current, rm_current_t **cur);
rm_route_t *rm_cache_find(ngx_str_t *header);
ngx_pool_t *rm_cache_pool(size_t bytes);
void rm_cache_add(ngx_str_t *header, rm_route_t *route);

/* replica_mirror_entry.c */
ngx_int_t rm_route_of(ngx_pool_t *pool, ngx_str_t *key, ngx_str_t *value, rm_route_t **route);
ngx_int_t rm_apply(ngx_http_request_t *r, rm_main_conf_t *mcf, rm_current_t *cur,
    rm_route_t *route);

/* replica_mirror_host.c */
void rm_key_of(ngx_str_t *lowered, ngx_str_t *key);
ngx_uint_t rm_valid(ngx_str_t *lowered);
ngx_uint_t rm_authority(ngx_str_t *request_line, ngx_str_t *authority);
ngx_int_t rm_strip_client_headers(ngx_http_request_t *r);

/* replica_mirror_answer.c */
ngx_int_t rm_answer(ngx_http_request_t *r, ngx_uint_t status, const char *reason,
    const char *retry_after, const char *text, ngx_str_t *app);

/* replica_mirror_balancer.c */
char *rm_balancer(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);

#endif
