/* Interning tables behind sprof_profile (frames and stacks hashed so that
 * adding a stack that already exists only adds to its counts). Internal. */
#ifndef SPROF_PROFILE_INTERNAL_H
#define SPROF_PROFILE_INTERNAL_H

#include <uthash.h>

#include "sprof/profile.h"

typedef struct sprof_frame_entry {
    UT_hash_handle hh;
    uint32_t index;
    size_t keylen;
    char key[]; /* name\0c_name\0file\0module\0 + line,kind,cost,flags */
} sprof_frame_entry;

typedef struct sprof_stack_entry {
    UT_hash_handle hh;
    uint32_t index;
    uint32_t key[]; /* tid, frames... */
} sprof_stack_entry;

struct sprof_profile_internal {
    sprof_frame_entry *frame_table;
    sprof_stack_entry *stack_table;
    size_t frames_cap, stacks_cap;
    uint8_t *roles;    /* per frame: cached frame_roles.h bits (stack_shape.c) */
    size_t roles_cap;
};

#endif
