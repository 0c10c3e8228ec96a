/* trace_gzip.c — a gzip stream sink: a trace is compressed as it is written, never held whole. */
#include <errno.h>
#include <string.h>
#include <zlib.h>

#include "trace_internal.h"

#define OUT_SIZE (64 * 1024)

struct profX_Gzip {
  prof_State *S;
  FILE *f;
  z_stream z;
  int failed;
  int err;                       /* errno of a failed write; 0 when zlib itself failed */
  unsigned char out[OUT_SIZE];
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
    if (zr == Z_STREAM_ERROR) return g->failed = PROF_ERRIO;
    size_t have = OUT_SIZE - g->z.avail_out;
    if (have > 0 && fwrite(g->out, 1, have, g->f) != have) {
      g->err = errno;
      return g->failed = PROF_ERRIO;
    }
    if (flush == Z_FINISH ? zr == Z_STREAM_END : g->z.avail_out != 0) return PROF_OK;
  }
}

int profX_gzip_write(void *ud, const char *data, size_t len) {
  profX_Gzip *g = ud;
  if (g->failed) return g->failed;
  while (len > 0) {
    uInt chunk = len > (1u << 30) ? (1u << 30) : (uInt)len;
    g->z.next_in = (Bytef *)(uintptr_t)data;
    g->z.avail_in = chunk;
    if (pump(g, Z_NO_FLUSH) != PROF_OK) return g->failed;
    data += chunk;
    len -= chunk;
  }
  return PROF_OK;
}

int profX_gzip_close(profX_Gzip *g, int ok) {
  if (g == NULL) return PROF_OK;
  prof_State *S = g->S;
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
