/*
 * A refusal, byte for byte what replica-mirror.lua's answer() sends: the status, Content-Type
 * text/plain, then X-Mirror-Reason, Retry-After and X-Mirror-App when given, and the text with a
 * newline; chunked over HTTP/1.1, with Content-Length over HTTP/1.0 (lua_http10_buffering).
 */

#include "replica_mirror.h"

static ngx_int_t
rm_header(ngx_http_request_t *r, const char *name, u_char *value, size_t len)
{
    ngx_table_elt_t  *h;

    h = ngx_list_push(&r->headers_out.headers);
    if (h == NULL) {
        return NGX_ERROR;
    }
    h->hash = 1;
    h->key.data = (u_char *) name;
    h->key.len = ngx_strlen(name);
    h->value.data = value;
    h->value.len = len;
    return NGX_OK;
}

/* Sends the answer and finalizes the request: the access handler then returns NGX_DONE. */
ngx_int_t
rm_answer(ngx_http_request_t *r, ngx_uint_t status, const char *reason, const char *retry_after,
    const char *text, ngx_str_t *app)
{
    size_t        len;
    ngx_buf_t    *b;
    ngx_int_t     rc;
    ngx_chain_t   out;

    r->headers_out.status = status;
    ngx_str_set(&r->headers_out.content_type, "text/plain");
    r->headers_out.content_type_len = r->headers_out.content_type.len;
    r->headers_out.content_type_lowcase = NULL;
    if ((reason && rm_header(r, "X-Mirror-Reason", (u_char *) reason, ngx_strlen(reason)) != NGX_OK)
        || (retry_after
            && rm_header(r, "Retry-After", (u_char *) retry_after, ngx_strlen(retry_after))
               != NGX_OK)
        || (app && rm_header(r, "X-Mirror-App", app->data, app->len) != NGX_OK))
    {
        goto failed;
    }

    len = ngx_strlen(text) + 1;
    if (r->http_version < NGX_HTTP_VERSION_11 && r->method != NGX_HTTP_HEAD) {
        r->headers_out.content_length_n = len;
    }
    rc = ngx_http_send_header(r);
    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
        ngx_http_finalize_request(r, rc);
        return NGX_DONE;
    }
    if (ngx_http_discard_request_body(r) != NGX_OK) {
        goto failed;
    }

    b = ngx_create_temp_buf(r->pool, len);
    if (b == NULL) {
        goto failed;
    }
    b->last = ngx_cpymem(b->last, text, len - 1);
    *b->last++ = '\n';
    b->last_buf = 1;
    b->last_in_chain = 1;
    out.buf = b;
    out.next = NULL;
    ngx_http_finalize_request(r, ngx_http_output_filter(r, &out));
    return NGX_DONE;

failed:
    ngx_http_finalize_request(r, NGX_HTTP_INTERNAL_SERVER_ERROR);
    return NGX_DONE;
}
