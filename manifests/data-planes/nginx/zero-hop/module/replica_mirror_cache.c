/*
 * Each worker's routes by Host, as replica-mirror.lua keeps them: a request to a Host seen since
 * the last push reads "current" and no entry. Dropped whenever "current" changes (every push, a
 * rotation included) and when it holds RM_CACHED_ROUTES Hosts. A request copies what it keeps
 * past its handler (variables, the peer) into its own pool: a push may drop the cache meanwhile.
 */

#include "replica_mirror.h"

#define RM_CACHED_ROUTES  16384
/* The bytes the routes hold, copied once per Host (its Host, entry and credential): at most
 * 32 MB a worker, as the Lua's 4,096 credentials of at most 8 KiB. */
#define RM_CACHED_BYTES   (32 * 1024 * 1024)
#define RM_SLOTS          (2 * RM_CACHED_ROUTES)

typedef struct {
    ngx_str_t    header;
    ngx_uint_t   hash;
    rm_route_t  *route;
} rm_slot_t;

static ngx_pool_t  *rm_pool;
static rm_slot_t   *rm_slots;
static ngx_uint_t   rm_count;
static size_t       rm_bytes;
static u_char      *rm_held;
static size_t       rm_held_len;
static rm_current_t rm_held_current;

static ngx_int_t
rm_cache_reset(void)
{
    if (rm_pool != NULL) {
        ngx_destroy_pool(rm_pool);
    }
    rm_count = 0;
    rm_bytes = 0;
    rm_pool = ngx_create_pool(16384, ngx_cycle->log);
    if (rm_pool == NULL) {
        return NGX_ERROR;
    }
    rm_slots = ngx_pcalloc(rm_pool, RM_SLOTS * sizeof(rm_slot_t));
    return rm_slots ? NGX_OK : NGX_ERROR;
}

static ngx_uint_t
rm_digits(u_char *p, u_char *end)
{
    u_char  *s = p;

    while (p < end && *p >= '0' && *p <= '9') {
        p++;
    }
    return p - s;
}

/* "<gen> <revision>" or "<gen> <revision> <overlay>": `^(%d+) (%d+) ?(%d*)$`. */
static ngx_int_t
rm_parse_current(u_char *p, u_char *end, rm_current_t *cur)
{
    ngx_uint_t  n;

    n = rm_digits(p, end);
    if (n == 0 || p + n == end || p[n] != ' ') {
        return NGX_ERROR;
    }
    cur->gen.data = p;
    cur->gen.len = n;
    p += n + 1;
    n = rm_digits(p, end);
    if (n == 0) {
        return NGX_ERROR;
    }
    cur->revision.data = p;
    cur->revision.len = n;
    p += n;
    if (p < end && *p == ' ') {
        p++;
    }
    n = rm_digits(p, end);
    if (p + n != end) {
        return NGX_ERROR;
    }
    cur->overlay.data = p;
    cur->overlay.len = n;
    return NGX_OK;
}

/* The table `current` (as read from the dict) names, held by this worker until it changes. */
ngx_int_t
rm_cache_hold(ngx_str_t *current, rm_current_t **cur)
{
    u_char        *copy;
    rm_current_t   parsed;

    if (rm_held != NULL && current->len == rm_held_len
        && ngx_memcmp(current->data, rm_held, rm_held_len) == 0)
    {
        *cur = &rm_held_current;
        return NGX_OK;
    }
    copy = ngx_alloc(current->len + 1, ngx_cycle->log);
    if (copy == NULL) {
        return NGX_ERROR;
    }
    ngx_memcpy(copy, current->data, current->len);
    if (rm_parse_current(copy, copy + current->len, &parsed) != NGX_OK
        || rm_cache_reset() != NGX_OK)
    {
        ngx_free(copy);
        return NGX_ERROR;
    }
    ngx_free(rm_held);
    rm_held = copy;
    rm_held_len = current->len;
    rm_held_current = parsed;
    *cur = &rm_held_current;
    return NGX_OK;
}

static rm_slot_t *
rm_slot(ngx_str_t *header, ngx_uint_t hash)
{
    ngx_uint_t  i;
    rm_slot_t  *s;

    for (i = hash & (RM_SLOTS - 1); /* void */; i = (i + 1) & (RM_SLOTS - 1)) {
        s = &rm_slots[i];
        if (s->route == NULL || (s->hash == hash && s->header.len == header->len
                                 && ngx_memcmp(s->header.data, header->data, header->len) == 0))
        {
            return s;
        }
    }
}

rm_route_t *
rm_cache_find(ngx_str_t *header)
{
    return rm_slot(header, ngx_hash_key(header->data, header->len))->route;
}

/* The pool a route (copying `bytes` in all) is built in, for rm_cache_add: the routes
 * held so far are dropped when they are as many, or their credentials as large, as allowed. */
ngx_pool_t *
rm_cache_pool(size_t bytes)
{
    if ((rm_count >= RM_CACHED_ROUTES || rm_bytes + bytes > RM_CACHED_BYTES)
        && rm_cache_reset() != NGX_OK)
    {
        return NULL;
    }
    rm_bytes += bytes;
    return rm_pool;
}

void
rm_cache_add(ngx_str_t *header, rm_route_t *route)
{
    ngx_uint_t  hash;
    rm_slot_t  *s;
    u_char     *copy;

    copy = ngx_pnalloc(rm_pool, header->len);
    if (copy == NULL) {
        return;
    }
    ngx_memcpy(copy, header->data, header->len);
    hash = ngx_hash_key(header->data, header->len);
    s = rm_slot(header, hash);
    if (s->route == NULL) {
        rm_count++;
    }
    s->header.data = copy;
    s->header.len = header->len;
    s->hash = hash;
    s->route = route;
}
