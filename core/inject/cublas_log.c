/* cublas_log.c — cuBLAS logger lines -> GEMM shapes (m, n, k, batch, type), so a GEMM's FLOPs come from the core's formulas. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "inject.h"

enum { HAVE_M = 1, HAVE_N = 2, HAVE_K = 4 };

/* "Sgemm", "GemmEx", "SgemmStridedBatched", ... after "cublas", before "_v2" / "_64". */
static int classify(const char *func, injC_Gemm *g) {
  if (strncmp(func, "cublas", 6) != 0) return 0;
  const char *f = func + 6;
  char base[64];
  size_t n = strcspn(f, "_");
  if (n >= sizeof base) return 0;
  memcpy(base, f, n);
  base[n] = '\0';
  static const char *const tails[] = {"", "Batched", "StridedBatched", "3m", "3mStridedBatched"};
  if (strncmp(base, "Gemm", 4) == 0 && (strcmp(base + 4, "Ex") == 0 || strcmp(base + 4, "BatchedEx") == 0 ||
                                        strcmp(base + 4, "StridedBatchedEx") == 0)) {
    g->dtype = PROF_F32; /* until Atype says */
    return 1;
  }
  if (strchr("SDHCZ", base[0]) == NULL || strncmp(base + 1, "gemm", 4) != 0) return 0;
  const char *rest = base + 5;
  int known = 0;
  for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) known |= strcmp(rest, tails[i]) == 0;
  if (!known) return 0;
  switch (base[0]) {
  case 'S': g->dtype = PROF_F32; break;
  case 'D': g->dtype = PROF_F64; break;
  case 'H': g->dtype = PROF_F16; break;
  case 'C': g->dtype = PROF_F32; g->complex_ = 1; break;
  default: g->dtype = PROF_F64; g->complex_ = 1; break;
  }
  return 1;
}

/* cudaDataType_t as the logger prints it ("CUDA_R_16F(2)"). */
static void data_type(const char *val, injC_Gemm *g) {
  static const struct { const char *name; int32_t dtype; int complex_; } types[] = {
      {"CUDA_R_16F", PROF_F16, 0}, {"CUDA_R_16BF", PROF_BF16, 0}, {"CUDA_R_32F", PROF_F32, 0},
      {"CUDA_R_64F", PROF_F64, 0}, {"CUDA_R_8I", PROF_I8, 0}, {"CUDA_C_32F", PROF_F32, 1},
      {"CUDA_C_64F", PROF_F64, 1}};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    size_t n = strlen(types[i].name);
    if (strncmp(val, types[i].name, n) == 0 && !isalnum((unsigned char)val[n]) && val[n] != '_') {
      g->dtype = types[i].dtype;
      g->complex_ = types[i].complex_;
    }
  }
}

static int complete(const injC_Parser *p) {
  return p->in_call && p->is_gemm && p->have == (HAVE_M | HAVE_N | HAVE_K);
}

/* A header line: "... function <ret> cublasXxx(<args>) called:". */
static int header(const char *line, size_t len, injC_Parser *p) {
  const char *fn = strstr(line, "function ");
  const char *called = strstr(line, ") called");
  if (fn == NULL || called == NULL || fn > line + len || called > line + len) return 0;
  const char *paren = memchr(fn, '(', (size_t)(line + len - fn));
  if (paren == NULL) return 0;
  const char *b = paren;
  while (b > fn && (isalnum((unsigned char)b[-1]) || b[-1] == '_')) b--;
  size_t n = (size_t)(paren - b);
  memset(&p->cur, 0, sizeof p->cur);
  p->cur.batch = 1;
  p->have = 0;
  p->in_call = 1;
  if (n == 0 || n >= sizeof p->cur.func) {
    p->is_gemm = 0;
    return 1;
  }
  memcpy(p->cur.func, b, n);
  p->cur.func[n] = '\0';
  p->is_gemm = classify(p->cur.func, &p->cur);
  return 1;
}

/* A parameter line: "i!  name: type=T; val=V". */
static void parameter(const char *line, size_t len, injC_Parser *p) {
  const char *s = line;
  while (s < line + len && (*s == 'i' || *s == 'I' || *s == '!' || *s == ' ')) s++;
  size_t n = 0;
  while (s + n < line + len && (isalnum((unsigned char)s[n]) || s[n] == '_')) n++;
  if (n == 0 || s + n >= line + len || s[n] != ':') return;
  const char *val = strstr(s + n, "val=");
  if (val == NULL || val >= line + len) return;
  val += 4;
  char *end;
  long long v = strtoll(val, &end, 10);
  int num = end != val;
  if (n == 1 && num && v >= 0) {
    if (s[0] == 'm') { p->cur.m = v; p->have |= HAVE_M; }
    if (s[0] == 'n') { p->cur.n = v; p->have |= HAVE_N; }
    if (s[0] == 'k') { p->cur.k = v; p->have |= HAVE_K; }
  } else if (n == 10 && strncmp(s, "batchCount", 10) == 0 && num && v >= 0) {
    p->cur.batch = v;
  } else if (n == 5 && strncmp(s, "Atype", 5) == 0) {
    data_type(val, &p->cur);
  }
}

int injC_flush(injC_Parser *p, injC_Gemm *out) {
  int done = complete(p);
  if (done) *out = p->cur;
  p->in_call = 0;
  return done;
}

int injC_feed(injC_Parser *p, const char *msg, injC_Gemm *out, int max) {
  int k = 0;
  if (msg == NULL) return 0;
  while (*msg != '\0') {
    size_t len = strcspn(msg, "\n");
    injC_Gemm g;
    if (strstr(msg, "function ") != NULL && (size_t)(strstr(msg, "function ") - msg) < len) {
      if (injC_flush(p, &g) && k < max) out[k++] = g;
      header(msg, len, p);
    } else if (p->in_call) {
      const char *t = strstr(msg, "Time:");
      if (t != NULL && (size_t)(t - msg) < len) {
        if (injC_flush(p, &g) && k < max) out[k++] = g;
      } else {
        parameter(msg, len, p);
      }
    }
    msg += len;
    if (*msg == '\n') msg++;
  }
  return k;
}

void injC_op(const injC_Gemm *g, prof_Op *op) {
  memset(op, 0, sizeof *op);
  op->size = sizeof *op;
  op->device = PROF_DEVICE_CUDA;
  /* column-major C = op(A) op(B): m x k times k x n; the counts do not depend on the layout */
  if (g->complex_) {
    op->kind = PROF_OP_CUSTOM;
    int64_t mnk = g->m * g->n * g->k * g->batch;
    op->macs = 4 * mnk;  /* (a + bi)(c + di): 4 real multiply-adds */
    op->flops = 8 * mnk;
    return;
  }
  int b = g->batch > 1; /* a batch dim first, as bmm's operands */
  op->kind = b ? PROF_OP_BMM : PROF_OP_MM;
  op->ninputs = 2;
  prof_Operand *x = &op->in[0], *y = &op->in[1], *z = &op->out;
  x->ndim = y->ndim = z->ndim = 2 + b;
  x->dtype = y->dtype = z->dtype = g->dtype;
  x->dim[0] = y->dim[0] = z->dim[0] = g->batch;
  x->dim[b] = g->m;
  x->dim[b + 1] = g->k;
  y->dim[b] = g->k;
  y->dim[b + 1] = g->n;
  z->dim[b] = g->m;
  z->dim[b + 1] = g->n;
}
