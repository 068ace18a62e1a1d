/* Protobuf wire-format encoding into growable buffers (see proto_encode.h). */
#include "sprof/proto_encode.h"

#include <stdlib.h>
#include <string.h>

void sprof_pbuf_init(sprof_pbuf *b)
{
    memset(b, 0, sizeof *b);
}

void sprof_pbuf_free(sprof_pbuf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

void sprof_pbuf_reset(sprof_pbuf *b)
{
    b->len = 0;
}

static int reserve(sprof_pbuf *b, size_t n)
{
    if (b->oom)
        return -1;
    if (n <= b->cap - b->len)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n) {
        if (cap > SIZE_MAX / 2) {
            b->oom = 1;
            return -1;
        }
        cap *= 2;
    }
    uint8_t *d = realloc(b->data, cap);
    if (!d) {
        b->oom = 1;
        return -1;
    }
    b->data = d;
    b->cap = cap;
    return 0;
}

void sprof_pb_raw(sprof_pbuf *b, const void *data, size_t n)
{
    if (n == 0 || reserve(b, n) != 0)
        return;
    memcpy(b->data + b->len, data, n);
    b->len += n;
}

void sprof_pb_varint(sprof_pbuf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        uint8_t byte = v & 0x7f;
        v >>= 7;
        tmp[n++] = byte | (v ? 0x80 : 0);
    } while (v);
    sprof_pb_raw(b, tmp, n);
}

void sprof_pb_tag(sprof_pbuf *b, uint32_t field, enum sprof_pb_wire wire)
{
    sprof_pb_varint(b, ((uint64_t)field << 3) | (uint64_t)wire);
}

void sprof_pb_uint64(sprof_pbuf *b, uint32_t field, uint64_t v)
{
    sprof_pb_tag(b, field, SPROF_PB_VARINT);
    sprof_pb_varint(b, v);
}

void sprof_pb_uint64_opt(sprof_pbuf *b, uint32_t field, uint64_t v)
{
    if (v)
        sprof_pb_uint64(b, field, v);
}

void sprof_pb_int64(sprof_pbuf *b, uint32_t field, int64_t v)
{
    sprof_pb_uint64(b, field, (uint64_t)v);
}

void sprof_pb_int64_opt(sprof_pbuf *b, uint32_t field, int64_t v)
{
    if (v)
        sprof_pb_int64(b, field, v);
}

void sprof_pb_bool(sprof_pbuf *b, uint32_t field, int v)
{
    if (v)
        sprof_pb_uint64(b, field, 1);
}

void sprof_pb_bytes(sprof_pbuf *b, uint32_t field, const void *data, size_t n)
{
    sprof_pb_tag(b, field, SPROF_PB_LEN);
    sprof_pb_varint(b, n);
    sprof_pb_raw(b, data, n);
}

void sprof_pb_string(sprof_pbuf *b, uint32_t field, const char *s)
{
    sprof_pb_bytes(b, field, s, strlen(s));
}

void sprof_pb_message(sprof_pbuf *b, uint32_t field, const sprof_pbuf *msg)
{
    if (msg->oom)
        b->oom = 1;
    sprof_pb_bytes(b, field, msg->data, msg->len);
}

static size_t varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

void sprof_pb_packed_uint64(sprof_pbuf *b, uint32_t field, const uint64_t *v, size_t n)
{
    if (n == 0)
        return;
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += varint_size(v[i]);
    sprof_pb_tag(b, field, SPROF_PB_LEN);
    sprof_pb_varint(b, bytes);
    for (size_t i = 0; i < n; i++)
        sprof_pb_varint(b, v[i]);
}

void sprof_pb_packed_int64(sprof_pbuf *b, uint32_t field, const int64_t *v, size_t n)
{
    if (n == 0)
        return;
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += varint_size((uint64_t)v[i]);
    sprof_pb_tag(b, field, SPROF_PB_LEN);
    sprof_pb_varint(b, bytes);
    for (size_t i = 0; i < n; i++)
        sprof_pb_varint(b, (uint64_t)v[i]);
}
