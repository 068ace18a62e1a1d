/* A small protobuf (proto3 wire format) encoder: just what profile.proto
 * needs. Messages are built in growable byte buffers; a nested message is
 * encoded into its own buffer and appended as a length-delimited field.
 * Allocation failure is sticky (buf->oom) so callers check once at the end. */
#ifndef SPROF_PROTO_ENCODE_H
#define SPROF_PROTO_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sprof_pbuf {
    uint8_t *data;
    size_t len, cap;
    int oom; /* 1 once an allocation failed; later writes are dropped */
} sprof_pbuf;

enum sprof_pb_wire { SPROF_PB_VARINT = 0, SPROF_PB_LEN = 2 };

void sprof_pbuf_init(sprof_pbuf *b);
void sprof_pbuf_free(sprof_pbuf *b);
void sprof_pbuf_reset(sprof_pbuf *b); /* len = 0, keeps memory */

void sprof_pb_raw(sprof_pbuf *b, const void *data, size_t n);
void sprof_pb_varint(sprof_pbuf *b, uint64_t v);
void sprof_pb_tag(sprof_pbuf *b, uint32_t field, enum sprof_pb_wire wire);

/* Scalar fields. The _opt forms skip zero (proto3 default), the others always write. */
void sprof_pb_uint64(sprof_pbuf *b, uint32_t field, uint64_t v);
void sprof_pb_uint64_opt(sprof_pbuf *b, uint32_t field, uint64_t v);
void sprof_pb_int64(sprof_pbuf *b, uint32_t field, int64_t v);   /* two's complement varint */
void sprof_pb_int64_opt(sprof_pbuf *b, uint32_t field, int64_t v);
void sprof_pb_bool(sprof_pbuf *b, uint32_t field, int v);         /* writes only when true */

/* Length-delimited fields. */
void sprof_pb_bytes(sprof_pbuf *b, uint32_t field, const void *data, size_t n);
void sprof_pb_string(sprof_pbuf *b, uint32_t field, const char *s);
void sprof_pb_message(sprof_pbuf *b, uint32_t field, const sprof_pbuf *msg);
/* Packed repeated varints (nothing written when n == 0). */
void sprof_pb_packed_uint64(sprof_pbuf *b, uint32_t field, const uint64_t *v, size_t n);
void sprof_pb_packed_int64(sprof_pbuf *b, uint32_t field, const int64_t *v, size_t n);

#ifdef __cplusplus
}
#endif
#endif
