/* prof_internal.h — declarations shared between the core's files (their prefixes: core/README.md); never installed. */
#ifndef PROF_INTERNAL_H
#define PROF_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "prof.h"

#if defined(__GNUC__)
#define PROF_INTERNAL __attribute__((visibility("hidden"))) extern
#else
#define PROF_INTERNAL extern
#endif

#define PROF_ERRMSG_SIZE 512
/* Open module calls per thread: the frame stack starts at PROF_STACK_INIT and doubles (cold) up to
   PROF_STACK_MAX, so a deep model costs memory only when it runs. */
#define PROF_STACK_INIT 256
#define PROF_STACK_MAX 65536
/* Levels of the module tree. Each module's path names every level above it, so a chain's paths
   (and its JSON profile) grow with the square of its depth: 10,000 levels is about 100 MB. */
#define PROF_DEPTH_MAX 10000
#define PROF_STR_(x) #x
#define PROF_STR(x) PROF_STR_(x)

/* {====================== memory and errors (state.c) ======================} */

/* Allocation through S's allocator; sizes must be passed back to free/realloc. */
PROF_INTERNAL void *profI_alloc(prof_State *S, size_t size);
PROF_INTERNAL void *profI_realloc(prof_State *S, void *ptr, size_t osize, size_t nsize);
PROF_INTERNAL void profI_free(prof_State *S, void *ptr, size_t size);
PROF_INTERNAL char *profI_strdup(prof_State *S, const char *s);
PROF_INTERNAL void profI_strfree(prof_State *S, char *s);

/* Formats S's error message and returns code, so that `return profI_error(S, ...)` reads well. */
PROF_INTERNAL int profI_error(prof_State *S, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* {====================== files (atomic_file.c) ======================} */

/* Creates the directories above path (mkdir -p of its dirname). [may fail: PROF_ERRIO] */
PROF_INTERNAL int profI_make_parents(prof_State *S, const char *path);

/* path as a message shows it: a long one keeps its head and tail, with its middle cut, in buf. */
PROF_INTERNAL const char *profI_short_path(const char *path, char *buf, size_t size);

/*
** Opens the output path for streaming (what prof_write_file_atomic does, in steps): *fd is a
** staged temporary (st->tmp) or, for a device or FIFO (st->tmp ""), the target itself. Write with
** profI_out_write, close with profI_out_close, then prof_commit_file or prof_discard_file.
** Messages name path. [may fail: PROF_ERRIO]
*/
PROF_INTERNAL int profI_out_open(prof_State *S, const char *path, prof_Staged *st, int *fd);
PROF_INTERNAL int profI_out_write(prof_State *S, const char *path, int fd, const char *data,
                                  size_t len);
PROF_INTERNAL int profI_out_close(prof_State *S, const char *path, int fd);

/* {====================== clock (clock.c) ======================} */

/* Monotonic nanoseconds; the one host clock every timestamp is expressed in. */
PROF_INTERNAL int64_t profI_now_ns(void);

/* {====================== flop formulas (flops_*.c) ======================} */

/*
** Fills op->macs, flops, bytes_read, bytes_written under conventions conv. Pure. On failure returns
** PROF_ERRARG and writes a message (op name, operand shapes) into err.
*/
PROF_INTERNAL int profF_count(prof_Conventions conv, prof_Op *op, char *err, size_t errlen);

/* Formats an operand as "[2, 3, 4]" into buf; returns buf. */
PROF_INTERNAL const char *profF_shape_str(const prof_Operand *o, char *buf, size_t size);

/* {====================== JSON text (json_writer.c) ======================} */

/*
** A streaming JSON writer: values are written as they come through a prof_WriteFn, with commas
** and nesting handled here, so large documents never exist in memory as a tree.
*/
typedef struct profW_Writer {
  prof_WriteFn fn;
  void *ud;
  int failed;                  /* sticky: the write callback failed */
  int depth;
  int need_comma[64];
  int pretty;
} profW_Writer;

PROF_INTERNAL void profW_init(profW_Writer *w, prof_WriteFn fn, void *ud, int pretty);
PROF_INTERNAL void profW_begin_object(profW_Writer *w);
PROF_INTERNAL void profW_end_object(profW_Writer *w);
PROF_INTERNAL void profW_begin_array(profW_Writer *w);
PROF_INTERNAL void profW_end_array(profW_Writer *w);
PROF_INTERNAL void profW_key(profW_Writer *w, const char *key);
PROF_INTERNAL void profW_string(profW_Writer *w, const char *s);
PROF_INTERNAL void profW_int(profW_Writer *w, int64_t v);
PROF_INTERNAL void profW_double(profW_Writer *w, double v);   /* NaN and inf: null */
PROF_INTERNAL void profW_bool(profW_Writer *w, int v);
PROF_INTERNAL void profW_null(profW_Writer *w);

#endif
