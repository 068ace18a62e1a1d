/* Interning tables behind sprof_profile (frames and stacks hashed so that
 * adding a stack that already exists only adds to its counts). Stacks are
 * indexed in place and their frames live in one arena: a stack costs its
 * sprof_pstack, its frame ids and 8 bytes of index. Internal. */
#ifndef SPROF_PROFILE_INTERNAL_H
#define SPROF_PROFILE_INTERNAL_H

#include <uthash.h>

#include "arena.h"
#include "index_table.h"

#include "sprof/profile.h"

typedef struct sprof_frame_entry {
    UT_hash_handle hh;
    uint32_t index;
    size_t keylen;
    char key[]; /* name\0c_name\0file\0module\0 + line,kind,cost,flags */
} sprof_frame_entry;

struct sprof_profile_internal {
    sprof_frame_entry *frame_table;
    sprof_index_table stack_index; /* over profile.stacks: tid + frames */
    sprof_arena stack_frames;      /* every stack's frames array */
    size_t frames_cap, stacks_cap;
    uint8_t *roles;    /* per frame: cached frame_roles.h bits (stack_shape.c) */
    size_t roles_cap;
};

#endif
