/* pool.c — the capture's preallocated activity buffers: handed to CUPTI, completed, decoded, reused. */
#include <string.h>

#include "capture.h"

int profK_pool_init(prof_State *S, profK_Pool *p, int32_t n, size_t size) {
  memset(p, 0, sizeof *p);
  atomic_init(&p->refused, 0);
  if (pthread_mutex_init(&p->lock, NULL) != 0)
    return profI_error(S, PROF_ERRMEM, "capture: cannot make the buffer pool's lock");
  p->n = n;
  p->size = size;
  p->buf = profI_alloc(S, sizeof *p->buf * (size_t)n);
  p->free_list = profI_alloc(S, sizeof *p->free_list * (size_t)n);
  p->ready = profI_alloc(S, sizeof *p->ready * (size_t)n);
  if (p->buf == NULL || p->free_list == NULL || p->ready == NULL) goto oom;
  memset(p->buf, 0, sizeof *p->buf * (size_t)n);
  for (int32_t i = 0; i < n; i++) {
    /* CUPTI wants 8-byte aligned buffers; the allocator's blocks are at least that */
    p->buf[i].data = profI_alloc(S, size);
    if (p->buf[i].data == NULL) goto oom;
    p->free_list[p->n_free++] = n - 1 - i;
  }
  return PROF_OK;
oom:
  profK_pool_free(S, p);
  return profI_error(S, PROF_ERRMEM, "capture: out of memory for %d activity buffers of %zu bytes",
                     (int)n, size);
}

void profK_pool_free(prof_State *S, profK_Pool *p) {
  if (p->buf != NULL)
    for (int32_t i = 0; i < p->n; i++) profI_free(S, p->buf[i].data, p->size);
  profI_free(S, p->buf, sizeof *p->buf * (size_t)p->n);
  profI_free(S, p->free_list, sizeof *p->free_list * (size_t)p->n);
  profI_free(S, p->ready, sizeof *p->ready * (size_t)p->n);
  pthread_mutex_destroy(&p->lock);
  memset(p, 0, sizeof *p);
}

int32_t profK_pool_take(profK_Pool *p) {
  int32_t i = -1;
  pthread_mutex_lock(&p->lock);
  if (p->n_free > 0) i = p->free_list[--p->n_free];
  pthread_mutex_unlock(&p->lock);
  if (i < 0) atomic_fetch_add_explicit(&p->refused, 1, memory_order_relaxed);
  return i;
}

static int32_t index_of(const profK_Pool *p, const uint8_t *data) {
  for (int32_t i = 0; i < p->n; i++)
    if (p->buf[i].data == data) return i;
  return -1;
}

void profK_pool_complete(profK_Pool *p, const uint8_t *data, size_t valid, int64_t dropped) {
  int32_t i = index_of(p, data);
  if (i < 0) return;   /* not ours: nothing to decode, nothing to give back */
  pthread_mutex_lock(&p->lock);
  p->buf[i].valid = valid <= p->size ? valid : p->size;
  p->buf[i].dropped = dropped;
  p->ready[(p->ready_head + p->n_ready) % p->n] = i;
  p->n_ready++;
  pthread_mutex_unlock(&p->lock);
}

int32_t profK_pool_next_ready(profK_Pool *p) {
  int32_t i = -1;
  pthread_mutex_lock(&p->lock);
  if (p->n_ready > 0) {
    i = p->ready[p->ready_head];
    p->ready_head = (p->ready_head + 1) % p->n;
    p->n_ready--;
  }
  pthread_mutex_unlock(&p->lock);
  return i;
}

void profK_pool_release(profK_Pool *p, int32_t i) {
  pthread_mutex_lock(&p->lock);
  p->buf[i].valid = 0;
  p->buf[i].dropped = 0;
  p->free_list[p->n_free++] = i;
  pthread_mutex_unlock(&p->lock);
}
