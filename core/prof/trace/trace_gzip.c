/* trace_gzip.c — a gzip stream sink: a trace is compressed as it is written, never held whole. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <zlib.h>

#include "trace_internal.h"

#define OUT_SIZE (64 * 1024)
#define SLOTS 4                  /* pieces in flight to the compressor thread */

/*
** deflate costs about twice what writing the JSON does, so from the second piece on a thread of
** its own compresses while the writer goes on (a one-piece trace never starts it): the writer
** copies each piece into a ring of SLOTS buffers and waits only when all are full. Memory stays
** fixed whatever the trace's size. Without a thread (pthread_create failed) it compresses inline.
*/
struct profX_Gzip {
  prof_State *S;
  FILE *f;
  z_stream z;                    /* the compressor's: the caller's until the thread starts, the
                                    thread's while it runs, the caller's again after the join */
  int failed;                    /* under lock while the thread runs */
  int err;                       /* errno of a failed write; 0 when zlib itself failed */
  int pieces;                    /* pieces seen: the thread starts at the second */
  int threaded;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t filled, freed;  /* a slot was filled (or the input ended); a slot was freed */
  int head, count;               /* the ring: the slot compressed next, the slots filled */
  int ending;                    /* no more input: the thread drains the ring and returns */
  int discard;                   /* with ending: the stream is abandoned, the ring dropped */
  size_t len[SLOTS];
  unsigned char out[OUT_SIZE];
  unsigned char slot[SLOTS][OUT_SIZE];
};

/* zlib's allocator hooks through S's: zfree gets no size, so each block carries its own. */
typedef union Header {
  size_t size;
  max_align_t align;
} Header;

static voidpf z_alloc(voidpf ud, uInt items, uInt size) {
  size_t n = (size_t)items * size + sizeof(Header);
  Header *h = profI_alloc(ud, n);
  if (h == NULL) return Z_NULL;
  h->size = n;
  return h + 1;
}

static void z_free(voidpf ud, voidpf p) {
  if (p == NULL) return;
  Header *h = (Header *)p - 1;
  profI_free(ud, h, h->size);
}

profX_Gzip *profX_gzip_open(prof_State *S, FILE *f) {
  profX_Gzip *g = profI_alloc(S, sizeof *g);
  if (g == NULL) {
    profI_error(S, PROF_ERRMEM, "trace: out of memory for the gzip stream");
    return NULL;
  }
  memset(g, 0, offsetof(profX_Gzip, out));
  g->S = S;
  g->f = f;
  g->z.zalloc = z_alloc;
  g->z.zfree = z_free;
  g->z.opaque = S;
  /* Level 1: a trace is repetitive text, so the fastest level already shrinks it ~10x and keeps
     export near the plain writer's speed; 15 + 16 asks zlib for a gzip header and trailer. */
  int zr = deflateInit2(&g->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  if (zr != Z_OK) {
    profI_free(S, g, sizeof *g);
    profI_error(S, zr == Z_MEM_ERROR ? PROF_ERRMEM : PROF_ERRIO, "trace: gzip: %s",
                zr == Z_MEM_ERROR ? "out of memory" : "cannot start the stream");
    return NULL;
  }
  return g;
}

/* Runs deflate on what is pending with flush, writing every full output buffer to the file. */
static int pump(profX_Gzip *g, int flush) {
  for (;;) {
    g->z.next_out = g->out;
    g->z.avail_out = OUT_SIZE;
    int zr = deflate(&g->z, flush);
    if (zr == Z_STREAM_ERROR) return PROF_ERRIO;
    size_t have = OUT_SIZE - g->z.avail_out;
    if (have > 0 && fwrite(g->out, 1, have, g->f) != have) {
      g->err = errno;
      return PROF_ERRIO;
    }
    if (flush == Z_FINISH ? zr == Z_STREAM_END : g->z.avail_out != 0) return PROF_OK;
  }
}

/* data[0..len) through deflate, on the calling thread. */
static int deflate_data(profX_Gzip *g, const char *data, size_t len) {
  while (len > 0) {
    uInt chunk = len > (1u << 30) ? (1u << 30) : (uInt)len;
    g->z.next_in = (Bytef *)(uintptr_t)data;
    g->z.avail_in = chunk;
    int rc = pump(g, Z_NO_FLUSH);
    if (rc != PROF_OK) return rc;
    data += chunk;
    len -= chunk;
  }
  return PROF_OK;
}

/* The compressor thread: the ring's slots in order until the input ends or a write fails. */
static void *compressor(void *ud) {
  profX_Gzip *g = ud;
  pthread_mutex_lock(&g->lock);
  for (;;) {
    while (g->count == 0 && !g->ending) pthread_cond_wait(&g->filled, &g->lock);
    if (g->count == 0 || g->discard) break;   /* ending: every piece compressed, or none wanted */
    int k = g->head;
    pthread_mutex_unlock(&g->lock);
    int rc = deflate_data(g, (const char *)g->slot[k], g->len[k]);   /* the writer leaves it alone */
    pthread_mutex_lock(&g->lock);
    g->head = (k + 1) % SLOTS;
    g->count--;
    if (rc != PROF_OK) g->failed = rc;
    pthread_cond_signal(&g->freed);
    if (rc != PROF_OK) break;
  }
  pthread_mutex_unlock(&g->lock);
  return NULL;
}

static void start_thread(profX_Gzip *g) {
  if (pthread_mutex_init(&g->lock, NULL) != 0) return;
  if (pthread_cond_init(&g->filled, NULL) != 0) goto no_filled;
  if (pthread_cond_init(&g->freed, NULL) != 0) goto no_freed;
  if (pthread_create(&g->thread, NULL, compressor, g) != 0) goto no_thread;
  g->threaded = 1;
  return;
no_thread:
  pthread_cond_destroy(&g->freed);
no_freed:
  pthread_cond_destroy(&g->filled);
no_filled:
  pthread_mutex_destroy(&g->lock);
}

/* One piece of at most OUT_SIZE bytes into the ring, waiting while every slot is full. */
static int hand_on(profX_Gzip *g, const char *data, size_t len) {
  pthread_mutex_lock(&g->lock);
  while (g->count == SLOTS && !g->failed) pthread_cond_wait(&g->freed, &g->lock);
  int rc = g->failed;
  if (rc == PROF_OK) {
    int k = (g->head + g->count) % SLOTS;
    pthread_mutex_unlock(&g->lock);   /* slot k is free: the thread reads only filled ones */
    memcpy(g->slot[k], data, len);
    g->len[k] = len;
    pthread_mutex_lock(&g->lock);
    g->count++;
    pthread_cond_signal(&g->filled);
  }
  pthread_mutex_unlock(&g->lock);
  return rc;
}

/* Ends the thread's input and joins it: g->z and g->failed are the caller's again. discard: the
   file is thrown away, so the pieces still in the ring are not compressed. */
static void stop_thread(profX_Gzip *g, int discard) {
  if (!g->threaded) return;
  pthread_mutex_lock(&g->lock);
  g->ending = 1;
  g->discard = discard;
  pthread_cond_signal(&g->filled);
  pthread_mutex_unlock(&g->lock);
  pthread_join(g->thread, NULL);
  pthread_cond_destroy(&g->freed);
  pthread_cond_destroy(&g->filled);
  pthread_mutex_destroy(&g->lock);
  g->threaded = 0;
}

int profX_gzip_write(void *ud, const char *data, size_t len) {
  profX_Gzip *g = ud;
  if (!g->threaded) {
    if (g->failed) return g->failed;
    if (g->pieces++ == 1) start_thread(g);   /* once: without a thread, inline from then on */
    if (!g->threaded) return g->failed = deflate_data(g, data, len);
  }
  while (len > 0) {
    size_t n = len < OUT_SIZE ? len : OUT_SIZE;
    int rc = hand_on(g, data, n);
    if (rc != PROF_OK) return rc;
    data += n;
    len -= n;
  }
  return PROF_OK;
}

int profX_gzip_close(profX_Gzip *g, int ok) {
  if (g == NULL) return PROF_OK;
  prof_State *S = g->S;
  stop_thread(g, !ok);
  int rc = g->failed;
  if (ok && rc == PROF_OK) {
    g->z.next_in = Z_NULL;
    g->z.avail_in = 0;
    rc = pump(g, Z_FINISH);
  }
  deflateEnd(&g->z);
  if (rc != PROF_OK)
    profI_error(S, rc, "cannot write: %s", g->err != 0 ? strerror(g->err) : "gzip stream broke");
  profI_free(S, g, sizeof *g);
  return rc;
}
