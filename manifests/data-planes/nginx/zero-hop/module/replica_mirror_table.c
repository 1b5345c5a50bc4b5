/*
 * The table as replica-mirror.lua keeps it in the shared dict: "current" names the generation,
 * the revision and the overlay (a PATCH's body, one value), read once a request; entries are
 * "<gen>=<host>", "<gen>*<suffix>" and credentials "<gen>c<app>". Each worker parses an overlay
 * once, as the Lua does, so that a request finds its lines without the dict's lock.
 */

#include "replica_mirror.h"

/* lua-nginx-module's public API (ngx_http_lua_api.h, 0.10.x), which its .so exports. */
typedef struct {
    uint8_t  type;
    union {
        int        b;
        double     n;
        ngx_str_t  s;
    } value;
} rm_lua_value_t;

#define RM_LUA_TSTRING  4

ngx_int_t ngx_http_lua_shared_dict_get(ngx_shm_zone_t *zone, u_char *key_data, size_t key_len,
    rm_lua_value_t *value);

/* Values are copied out under the dict's lock: into this buffer first, grown when one fills it. */
static u_char  *rm_buf;
static size_t   rm_buf_size;

/* Reads `key` into this worker's buffer (valid until the next read): NGX_DECLINED when the
 * dict holds no string under it. */
ngx_int_t
rm_dict_read(ngx_shm_zone_t *zone, u_char *key, size_t len, ngx_str_t *value)
{
    rm_lua_value_t  v;
    ngx_int_t       rc;

    if (rm_buf == NULL) {
        rm_buf_size = 4096;
        rm_buf = ngx_alloc(rm_buf_size, ngx_cycle->log);
        if (rm_buf == NULL) {
            return NGX_ERROR;
        }
    }

    for ( ;; ) {
        v.value.s.data = rm_buf;
        v.value.s.len = rm_buf_size;
        rc = ngx_http_lua_shared_dict_get(zone, key, len, &v);
        if (rc != NGX_OK) {
            return rc == NGX_ERROR ? NGX_ERROR : NGX_DECLINED;
        }
        if (v.type != RM_LUA_TSTRING) {
            return NGX_DECLINED;
        }
        /* A value as long as the buffer may have been cut: read it again into twice the room. */
        if (v.value.s.len < rm_buf_size) {
            break;
        }
        ngx_free(rm_buf);
        rm_buf_size *= 2;
        rm_buf = ngx_alloc(rm_buf_size, ngx_cycle->log);
        if (rm_buf == NULL) {
            rm_buf_size = 0;
            return NGX_ERROR;
        }
    }
    value->data = rm_buf;
    value->len = v.value.s.len;
    return NGX_OK;
}

/* The same, copied into `pool` (or ngx_alloc'ed when pool is NULL). */
static ngx_int_t
rm_dict_copy(ngx_pool_t *pool, ngx_shm_zone_t *zone, u_char *key, size_t len, ngx_str_t *value)
{
    ngx_int_t  rc;
    ngx_str_t  v;

    rc = rm_dict_read(zone, key, len, &v);
    if (rc != NGX_OK) {
        return rc;
    }
    value->len = v.len;
    value->data = pool ? ngx_pnalloc(pool, v.len + 1) : ngx_alloc(v.len + 1, ngx_cycle->log);
    if (value->data == NULL) {
        return NGX_ERROR;
    }
    ngx_memcpy(value->data, v.data, v.len);
    value->data[v.len] = '\0';
    return NGX_OK;
}

/* This worker's parsed overlay: its lines by kind and key, the last of a key winning. */
typedef struct {
    u_char     kind;
    ngx_str_t  key;
    ngx_str_t  value;
} rm_line_t;

static u_char     rm_over_id[NGX_INT64_LEN + 1];
static size_t     rm_over_id_len;
static ngx_str_t  rm_over_text;
static rm_line_t *rm_over_lines;
static ngx_uint_t rm_over_mask;

void
rm_overlay_drop(void)
{
    ngx_free(rm_over_text.data);
    ngx_free(rm_over_lines);
    ngx_str_null(&rm_over_text);
    rm_over_lines = NULL;
    rm_over_mask = 0;
    rm_over_id_len = 0;
}

static rm_line_t *
rm_over_slot(u_char kind, u_char *key, size_t len)
{
    ngx_uint_t  i;
    rm_line_t  *l;

    i = (ngx_hash_key(key, len) * 31 + kind) & rm_over_mask;
    for ( ;; ) {
        l = &rm_over_lines[i];
        if (l->kind == 0 || (l->kind == kind && l->key.len == len
                             && ngx_memcmp(l->key.data, key, len) == 0))
        {
            return l;
        }
        i = (i + 1) & rm_over_mask;
    }
}

/* The lines replica-mirror.lua's tables_of reads: "\n([=*cnk]) (%S+) ([^\n]*)". */
static ngx_int_t
rm_overlay_parse(void)
{
    u_char     *p, *end, *key, *value;
    ngx_uint_t  lines, size;
    rm_line_t  *l;

    end = rm_over_text.data + rm_over_text.len;
    for (lines = 0, p = rm_over_text.data; p < end; p++) {
        lines += (*p == '\n');
    }
    for (size = 16; size < 2 * lines + 2; size *= 2) { /* void */ }
    rm_over_lines = ngx_calloc(size * sizeof(rm_line_t), ngx_cycle->log);
    if (rm_over_lines == NULL) {
        return NGX_ERROR;
    }
    rm_over_mask = size - 1;

    for (p = rm_over_text.data; p + 3 < end; p++) {
        if (p[0] != '\n' || ngx_strchr("=*cnk", p[1]) == NULL || p[1] == '\0' || p[2] != ' ') {
            continue;
        }
        for (key = p + 3; key < end && !isspace(*key); key++) { /* void */ }
        if (key == p + 3 || key == end || *key != ' ') {
            continue;
        }
        for (value = key + 1; value < end && *value != '\n'; value++) { /* void */ }
        l = rm_over_slot(p[1], p + 3, key - (p + 3));
        l->kind = p[1];
        l->key.data = p + 3;
        l->key.len = key - (p + 3);
        l->value.data = key + 1;
        l->value.len = value - (key + 1);
        p = value - 1;
    }
    return NGX_OK;
}

static ngx_int_t
rm_overlay_hold(ngx_shm_zone_t *zone, ngx_str_t *id)
{
    u_char     key[NGX_INT64_LEN + sizeof("#table")];
    ngx_int_t  rc;

    if (id->len == rm_over_id_len && ngx_memcmp(id->data, rm_over_id, id->len) == 0) {
        return NGX_OK;
    }
    rm_overlay_drop();
    if (id->len > NGX_INT64_LEN) {
        return NGX_ERROR;
    }
    ngx_memcpy(key, id->data, id->len);
    ngx_memcpy(key + id->len, "#table", 6);
    rc = rm_dict_copy(NULL, zone, key, id->len + 6, &rm_over_text);
    if (rc == NGX_ERROR) {
        return NGX_ERROR;
    }
    /* An overlay the dict lost reads as empty, as `dict:get(id .. "#table") or ""` does. */
    if (rc == NGX_DECLINED) {
        ngx_str_null(&rm_over_text);
    }
    if (rm_overlay_parse() != NGX_OK) {
        rm_overlay_drop();
        return NGX_ERROR;
    }
    ngx_memcpy(rm_over_id, id->data, id->len);
    rm_over_id_len = id->len;
    return NGX_OK;
}

/* The line `kind key` of the table `cur` names: the overlay's, else the generation's. The value
 * is the request's own copy. */
ngx_int_t
rm_lookup(ngx_http_request_t *r, ngx_shm_zone_t *zone, rm_current_t *cur, u_char kind,
    ngx_str_t *key, ngx_str_t *value)
{
    rm_line_t  *l;
    ngx_str_t   full;

    if (cur->overlay.len > 0) {
        if (rm_overlay_hold(zone, &cur->overlay) != NGX_OK) {
            return NGX_ERROR;
        }
        l = rm_over_slot(kind, key->data, key->len);
        if (l->kind != 0) {
            value->len = l->value.len;
            value->data = ngx_pnalloc(r->pool, value->len + 1);
            if (value->data == NULL) {
                return NGX_ERROR;
            }
            ngx_memcpy(value->data, l->value.data, value->len);
            value->data[value->len] = '\0';
            return NGX_OK;
        }
    }
    full.len = cur->gen.len + 1 + key->len;
    full.data = ngx_pnalloc(r->pool, full.len);
    if (full.data == NULL) {
        return NGX_ERROR;
    }
    ngx_memcpy(ngx_cpymem(full.data, cur->gen.data, cur->gen.len) + 1, key->data, key->len);
    full.data[cur->gen.len] = kind;
    return rm_dict_copy(r->pool, zone, full.data, full.len, value);
}
