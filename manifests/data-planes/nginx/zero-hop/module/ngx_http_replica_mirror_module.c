/*
 * replica-mirror's zero-hop request path without Lua (ADR 86): `replica_mirror_route on;` in a
 * location does what replica-mirror.lua's route() did in access_by_lua, from the same shared
 * dict (`replica_mirror_zone`), and `replica_mirror_balancer;` what balance() did. The answers,
 * headers and variables are the Lua's, so nginx.conf's proxy_pass lines stay as they were.
 */

#include "replica_mirror.h"

ngx_shm_zone_t *ngx_http_lua_find_zone(u_char *name_data, size_t name_len);

static ngx_int_t rm_postconfiguration(ngx_conf_t *cf);
static ngx_int_t rm_init_process(ngx_cycle_t *cycle);
static void *rm_create_main_conf(ngx_conf_t *cf);
static void *rm_create_loc_conf(ngx_conf_t *cf);
static char *rm_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child);
ngx_int_t rm_route(ngx_http_request_t *r, rm_main_conf_t *mcf);

static ngx_command_t  rm_commands[] = {
    { ngx_string("replica_mirror_zone"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1,
      ngx_conf_set_str_slot, NGX_HTTP_MAIN_CONF_OFFSET, offsetof(rm_main_conf_t, zone_name),
      NULL },
    { ngx_string("replica_mirror_route"), NGX_HTTP_LOC_CONF | NGX_CONF_FLAG,
      ngx_conf_set_flag_slot, NGX_HTTP_LOC_CONF_OFFSET, offsetof(rm_loc_conf_t, route), NULL },
    { ngx_string("replica_mirror_balancer"), NGX_HTTP_UPS_CONF | NGX_CONF_NOARGS,
      rm_balancer, 0, 0, NULL },
    ngx_null_command
};

static ngx_http_module_t  rm_module_ctx = {
    NULL, rm_postconfiguration, rm_create_main_conf, NULL, NULL, NULL, rm_create_loc_conf,
    rm_merge_loc_conf
};

ngx_module_t  ngx_http_replica_mirror_module = {
    NGX_MODULE_V1, &rm_module_ctx, rm_commands, NGX_HTTP_MODULE, NULL, NULL, rm_init_process,
    NULL, NULL, NULL, NULL, NGX_MODULE_V1_PADDING
};

static ngx_str_t  rm_var_names[RM_VAR_COUNT] = {
    ngx_string("mirror_app"), ngx_string("mirror_revision"), ngx_string("mirror_host"),
    ngx_string("mirror_port"), ngx_string("mirror_upstream"), ngx_string("mirror_authority"),
    ngx_string("mirror_authorization")
};

static void *
rm_create_main_conf(ngx_conf_t *cf)
{
    return ngx_pcalloc(cf->pool, sizeof(rm_main_conf_t));
}

static void *
rm_create_loc_conf(ngx_conf_t *cf)
{
    rm_loc_conf_t  *conf;

    conf = ngx_palloc(cf->pool, sizeof(rm_loc_conf_t));
    if (conf == NULL) {
        return NULL;
    }
    conf->route = NGX_CONF_UNSET;
    return conf;
}

static char *
rm_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
    rm_loc_conf_t   *prev = parent, *conf = child;
    rm_main_conf_t  *mcf;

    ngx_conf_merge_value(conf->route, prev->route, 0);
    mcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_replica_mirror_module);
    if (conf->route && mcf->zone_name.len == 0) {
        return "needs replica_mirror_zone in the http block";
    }
    return NGX_CONF_OK;
}

static ngx_int_t
rm_access_handler(ngx_http_request_t *r)
{
    rm_loc_conf_t   *lcf;
    rm_main_conf_t  *mcf;

    lcf = ngx_http_get_module_loc_conf(r, ngx_http_replica_mirror_module);
    if (!lcf->route) {
        return NGX_DECLINED;
    }
    mcf = ngx_http_get_module_main_conf(r, ngx_http_replica_mirror_module);
    if (mcf->zone == NULL) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "replica-mirror: no lua_shared_dict \"%V\"", &mcf->zone_name);
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }
    return rm_route(r, mcf);
}

static ngx_int_t
rm_postconfiguration(ngx_conf_t *cf)
{
    ngx_uint_t                  i;
    rm_main_conf_t             *mcf;
    ngx_http_handler_pt        *h;
    ngx_http_core_main_conf_t  *cmcf;

    mcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_replica_mirror_module);
    if (mcf->zone_name.len == 0) {
        return NGX_OK;
    }
    for (i = 0; i < RM_VAR_COUNT; i++) {
        mcf->vars[i] = ngx_http_get_variable_index(cf, &rm_var_names[i]);
        if (mcf->vars[i] == NGX_ERROR) {
            return NGX_ERROR;
        }
    }
    cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module);
    h = ngx_array_push(&cmcf->phases[NGX_HTTP_ACCESS_PHASE].handlers);
    if (h == NULL) {
        return NGX_ERROR;
    }
    *h = rm_access_handler;
    return NGX_OK;
}

/* The dict is the Lua module's: found by name once each worker runs, when it exists. */
static ngx_int_t
rm_init_process(ngx_cycle_t *cycle)
{
    rm_main_conf_t  *mcf;

    mcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_replica_mirror_module);
    if (mcf == NULL || mcf->zone_name.len == 0) {
        return NGX_OK;
    }
    mcf->zone = ngx_http_lua_find_zone(mcf->zone_name.data, mcf->zone_name.len);
    if (mcf->zone == NULL) {
        ngx_log_error(NGX_LOG_EMERG, cycle->log, 0,
                      "replica-mirror: no lua_shared_dict \"%V\"", &mcf->zone_name);
    }
    return NGX_OK;
}
