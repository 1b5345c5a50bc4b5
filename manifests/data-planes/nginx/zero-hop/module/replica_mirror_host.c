/*
 * The request's Host as replica-mirror.lua reads it: the table's key, whether /v1/route would
 * take the name, an absolute-form target's authority, and the client's X-Mirror-* headers.
 */

#include "replica_mirror.h"

/* The table's key: a port of 1 to 5 digits and then one trailing dot stripped. The Lua's
 * `^(.*):(%d+)$` can only end at the last colon. */
void
rm_key_of(ngx_str_t *lowered, ngx_str_t *key)
{
    u_char  *p, *end, *colon;

    *key = *lowered;
    end = key->data + key->len;
    colon = NULL;
    for (p = key->data; p < end; p++) {
        if (*p == ':') {
            colon = p;
        }
    }
    if (colon != NULL && end - colon > 1 && end - colon <= 6) {
        for (p = colon + 1; p < end && *p >= '0' && *p <= '9'; p++) { /* void */ }
        if (p == end) {
            key->len = colon - key->data;
        }
    }
    if (key->len > 0 && key->data[key->len - 1] == '.') {
        key->len--;
    }
}

/* What /v1/route accepts: [a-z0-9_-] labels of 1 to 63 characters, at most 253 in all, one
 * optional trailing dot, an optional port of 1 to 5 digits (after the first colon); the last
 * label not a number (digits, or 0x and hex digits: an IPv4 literal in one of its spellings). */
ngx_uint_t
rm_valid(ngx_str_t *lowered)
{
    u_char  *p, *end, *name_end, *label, *last;

    name_end = lowered->data + lowered->len;
    p = ngx_strlchr(lowered->data, name_end, ':');
    if (p != NULL) {
        end = name_end;
        name_end = p;
        if (end - p < 2 || end - p > 6) {
            return 0;
        }
        for (p++; p < end; p++) {
            if (*p < '0' || *p > '9') {
                return 0;
            }
        }
    }
    if (name_end > lowered->data && name_end[-1] == '.') {
        name_end--;
    }
    if (name_end == lowered->data || name_end - lowered->data > 253) {
        return 0;
    }
    label = lowered->data;
    last = label;
    for (p = label; p <= name_end; p++) {
        if (p == name_end || *p == '.') {
            if (p == label || p - label > 63) {
                return 0;
            }
            last = label;
            label = p + 1;
            continue;
        }
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-')) {
            return 0;
        }
    }
    for (p = last; p < name_end && *p >= '0' && *p <= '9'; p++) { /* void */ }
    if (p == name_end) {
        return 0;
    }
    if (name_end - last >= 2 && last[0] == '0' && last[1] == 'x') {
        for (p = last + 2; p < name_end && isxdigit(*p); p++) { /* void */ }
        if (p == name_end) {
            return 0;
        }
    }
    return 1;
}

/* An absolute-form target's authority: `^%S+ [hH][tT][tT][pP][sS]?://([^/?#%s]+)`. */
ngx_uint_t
rm_authority(ngx_str_t *line, ngx_str_t *authority)
{
    u_char  *p, *end, *start;

    p = line->data;
    end = p + line->len;
    for (start = p; p < end && !isspace(*p); p++) { /* void */ }
    if (p == start || end - p < 8 || *p != ' ') {
        return 0;
    }
    p++;
    if (ngx_strncasecmp(p, (u_char *) "http", 4) != 0) {
        return 0;
    }
    p += 4;
    if (*p == 's' || *p == 'S') {
        p++;
    }
    if (end - p < 4 || ngx_strncmp(p, "://", 3) != 0) {
        return 0;
    }
    for (p += 3, start = p; p < end && !isspace(*p) && *p != '/' && *p != '?' && *p != '#'; p++)
    {
        /* void */
    }
    if (p == start) {
        return 0;
    }
    authority->data = start;
    authority->len = p - start;
    return 1;
}

static ngx_uint_t
rm_forged(ngx_table_elt_t *h)
{
    return h->key.len >= 9 && ngx_strncasecmp(h->key.data, (u_char *) "x-mirror-", 9) == 0;
}

/* The client's own X-Mirror-* headers, whatever their case or place, never reach the upstream:
 * taken out of the list proxy_pass copies. No header moves (r->headers_in.host and the like point
 * into the list): the list is made of the runs of headers kept, each a part of its own. */
ngx_int_t
rm_strip_client_headers(ngx_http_request_t *r)
{
    ngx_uint_t        i, start, found;
    ngx_list_t       *l;
    ngx_list_part_t   orig, *part, *last, *run;
    ngx_table_elt_t  *h;

    l = &r->headers_in.headers;
    found = 0;
    for (part = &l->part; part && !found; part = part->next) {
        for (h = part->elts, i = 0; i < part->nelts && !found; i++) {
            found = rm_forged(&h[i]);
        }
    }
    if (!found) {
        return NGX_OK;
    }

    orig = l->part;
    last = NULL;
    for (part = &orig; part; part = part->next) {
        h = part->elts;
        for (start = 0, i = 0; i <= part->nelts; i++) {
            if (i < part->nelts && !rm_forged(&h[i])) {
                continue;
            }
            if (i > start) {
                run = last ? ngx_palloc(r->pool, sizeof(ngx_list_part_t)) : &l->part;
                if (run == NULL) {
                    return NGX_ERROR;
                }
                run->elts = &h[start];
                run->nelts = i - start;
                if (last) {
                    last->next = run;
                }
                last = run;
            }
            start = i + 1;
        }
    }
    if (last == NULL) {
        /* Nothing kept: one empty part, the first's room as it was. */
        l->part.elts = orig.elts;
        l->part.nelts = 0;
        l->part.next = NULL;
        l->last = &l->part;
        return NGX_OK;
    }
    last->next = NULL;
    l->last = last;
    /* A header pushed later goes to a part of its own, never over a kept one. */
    l->nalloc = last->nelts;
    return NGX_OK;
}
