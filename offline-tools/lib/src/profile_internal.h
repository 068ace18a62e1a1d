/* Interning tables behind sprof_profile (frames and stacks hashed so that
 * adding a stack that already exists only adds to its counts). Frames and
 * stacks are indexed in place, their strings and frame arrays live in
 * arenas: a stack costs its sprof_pstack, its frame ids and 8-16 bytes of
 * index, a frame its sprof_pframe and its key (which holds its strings). Internal. */
#ifndef SPROF_PROFILE_INTERNAL_H
#define SPROF_PROFILE_INTERNAL_H

#include "arena.h"
#include "index_table.h"

#include "sprof/profile.h"

/* A frame's identity: name\0c_name\0file\0module\0 + line,kind,cost,flags
 * (the raw name: the frame shows the demangled one). */
typedef struct sprof_frame_key {
    const char *key; /* in frame_strings */
    size_t keylen;
} sprof_frame_key;

struct sprof_profile_internal {
    sprof_frame_key *frame_keys;   /* per frame, frames_cap of them */
    sprof_index_table frame_index; /* over profile.frames by key */
    sprof_arena frame_strings;     /* keys and every frame's strings */
    char *key_buf;                 /* the key being looked up */
    size_t key_cap;
    sprof_index_table stack_index; /* over profile.stacks: tid + frames */
    sprof_arena stack_frames;      /* every stack's frames array */
    size_t frames_cap, stacks_cap;
    uint8_t *roles;    /* per frame: cached frame_roles.h bits (stack_shape.c) */
    size_t roles_cap;
};

#endif
