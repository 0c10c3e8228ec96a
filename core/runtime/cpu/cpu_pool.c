/* cpu_pool.c — float32 pooling kernels on the cpu: max, average, adaptive, and their gradients. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "cpu.h"

/* One output position's window along one axis: inputs lo, lo + step, ... below hi; span is the
   window's length counting padding (avg pool's count_include_pad divisor). */
typedef struct Win {
  int64_t lo, hi, step, span;
} Win;

static int64_t prod3(const int64_t *v) { return v[0] * v[1] * v[2]; }

static int is_max(prof_OpKind kind) {
  return kind == PROF_OP_MAX_POOL || kind == PROF_OP_ADAPTIVE_MAX_POOL;
}

/* An average window's divisor: n inputs inside x, spans z·y·x with padding; divisor_override
   replaces both, as in PyTorch, whatever the window holds. */
static int64_t divisor(prof_OpKind kind, const pr_PoolGeom *g, const Win *z, const Win *y,
                       const Win *x, int64_t n) {
  if (kind != PROF_OP_AVG_POOL) return n;
  if (g->divisor_override != 0) return g->divisor_override;
  return g->count_include_pad ? z->span * y->span * x->span : n;
}

/*
** Every axis's windows, computed once per call (out[0] + out[1] + out[2] entries) so the element
** loops only index tables. The rules are PyTorch 1.13's cpu kernels': max pool skips padded taps
** (they are -inf), avg pool clips its window at in + pad for the divisor and at in for the sum,
** adaptive windows span [floor(i·in/out), ceil((i+1)·in/out)).
*/
static Win *windows(pr_Runtime *rt, prof_OpKind kind, const pr_PoolGeom *g, Win **axis) {
  Win *w = malloc(sizeof *w * (size_t)(g->out[0] + g->out[1] + g->out[2] + 1));
  if (w == NULL) {
    pr_error(rt, "%s: out of memory", prof_op_kind_name(kind));
    return NULL;
  }
  Win *t = w;
  for (int a = 0; a < 3; a++) {
    axis[a] = t;
    int64_t in = g->in[a], s = g->stride[a], p = g->pad[a], k = g->k[a], d = g->dil[a];
    for (int64_t o = 0; o < g->out[a]; o++, t++) {
      t->step = 1;
      if (kind == PROF_OP_ADAPTIVE_AVG_POOL || kind == PROF_OP_ADAPTIVE_MAX_POOL) {
        t->lo = o * in / g->out[a];
        t->hi = ((o + 1) * in + g->out[a] - 1) / g->out[a];
      } else if (kind == PROF_OP_MAX_POOL) {
        int64_t lo = o * s - p;
        t->hi = lo + (k - 1) * d + 1 < in ? lo + (k - 1) * d + 1 : in;
        if (lo < 0) lo += (-lo + d - 1) / d * d;
        t->lo = lo;
        t->step = d;
      } else {
        int64_t lo = o * s - p, hi = lo + k < in + p ? lo + k : in + p;
        t->span = hi - lo;
        t->lo = lo > 0 ? lo : 0;
        t->hi = hi < in ? hi : in;
      }
      if (t->hi < t->lo) t->hi = t->lo;
    }
  }
  return w;
}

int pr_cpu_pool(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, const pr_PoolGeom *g,
                pr_Tensor *out, pr_Tensor *indices) {
  const char *name = prof_op_kind_name(kind);
  if (x->dtype != PROF_F32)
    return pr_error(rt, "%s: cpu kernels compute float32, got %s", name, prof_dtype_name(x->dtype));
  Win *ax[3];
  Win *w = windows(rt, kind, g, ax);
  pr_Tensor *xc = w ? pr_contiguous_data(rt, x) : NULL;
  if (xc == NULL) {
    free(w);
    return PR_ERR;
  }
  int64_t isp = prod3(g->in);
  const float *xp = pr_f32(xc);
  float *yp = pr_f32(out);
  int64_t *ip = indices != NULL ? (int64_t *)indices->storage->data + indices->offset : NULL;
  int max = is_max(kind);
  for (int64_t pl = 0; pl < g->planes; pl++) {
    const float *xs = xp + pl * isp;
    for (int64_t oz = 0; oz < g->out[0]; oz++)
      for (int64_t oy = 0; oy < g->out[1]; oy++)
        for (int64_t ox = 0; ox < g->out[2]; ox++) {
          const Win *z = &ax[0][oz], *y = &ax[1][oy], *wx = &ax[2][ox];
          if (max) {
            /* ties keep the first maximum and a NaN wins, as PyTorch's kernels do */
            float m = -INFINITY;
            int64_t at = -1;
            for (int64_t iz = z->lo; iz < z->hi; iz += z->step)
              for (int64_t iy = y->lo; iy < y->hi; iy += y->step)
                for (int64_t ix = wx->lo; ix < wx->hi; ix += wx->step) {
                  int64_t i = (iz * g->in[1] + iy) * g->in[2] + ix;
                  float v = xs[i];
                  if (at < 0 || v > m || isnan(v)) {
                    m = v;
                    at = i;
                  }
                }
            *yp++ = m;
            if (ip != NULL) *ip++ = at;
            continue;
          }
          double sum = 0;
          for (int64_t iz = z->lo; iz < z->hi; iz++)
            for (int64_t iy = y->lo; iy < y->hi; iy++) {
              const float *row = xs + (iz * g->in[1] + iy) * g->in[2];
              for (int64_t ix = wx->lo; ix < wx->hi; ix++) sum += row[ix];
            }
          int64_t n = (z->hi - z->lo) * (y->hi - y->lo) * (wx->hi - wx->lo);
          int64_t div = divisor(kind, g, z, y, wx, n);
          *yp++ = n > 0 ? (float)(sum / (double)div) : 0.0f;
        }
  }
  pr_tensor_release(xc);
  free(w);
  return 0;
}

int pr_cpu_pool_backward(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *gy,
                         const pr_Tensor *indices, const pr_PoolGeom *g, pr_Tensor *gx) {
  Win *ax[3];
  Win *w = is_max(kind) ? NULL : windows(rt, kind, g, ax);
  if (!is_max(kind) && w == NULL) return PR_ERR;
  pr_Tensor *gc = pr_contiguous_data(rt, gy);
  if (gc == NULL) {
    free(w);
    return PR_ERR;
  }
  int64_t isp = prod3(g->in), osp = prod3(g->out);
  const float *gp = pr_f32(gc);
  float *xp = pr_f32(gx);
  memset(xp, 0, sizeof *xp * (size_t)(g->planes * isp));
  if (is_max(kind)) {
    /* the gradient goes to the saved argmax of each window */
    const int64_t *ip = (const int64_t *)indices->storage->data + indices->offset;
    for (int64_t pl = 0; pl < g->planes; pl++)
      for (int64_t o = 0; o < osp; o++) {
        int64_t at = ip[pl * osp + o];
        if (at >= 0) xp[pl * isp + at] += gp[pl * osp + o];
      }
  } else {
    for (int64_t pl = 0; pl < g->planes; pl++) {
      float *xs = xp + pl * isp;
      for (int64_t oz = 0; oz < g->out[0]; oz++)
        for (int64_t oy = 0; oy < g->out[1]; oy++)
          for (int64_t ox = 0; ox < g->out[2]; ox++) {
            const Win *z = &ax[0][oz], *y = &ax[1][oy], *wx = &ax[2][ox];
            int64_t n = (z->hi - z->lo) * (y->hi - y->lo) * (wx->hi - wx->lo);
            int64_t div = divisor(kind, g, z, y, wx, n);
            float v = *gp++;
            if (n == 0) continue;
            v /= (float)div;
            for (int64_t iz = z->lo; iz < z->hi; iz++)
              for (int64_t iy = y->lo; iy < y->hi; iy++) {
                float *row = xs + (iz * g->in[1] + iy) * g->in[2];
                for (int64_t ix = wx->lo; ix < wx->hi; ix++) row[ix] += v;
              }
          }
    }
  }
  pr_tensor_release(gc);
  free(w);
  return 0;
}
