/* flops_dense.c — flop formulas of dense algebra: linear, the matmul family and einsum. */
#include <string.h>

#include "flops_internal.h"

/* {====================== linear ======================} */

/*
** exact: rows·in·out MACs, FLOPs 2·MACs + rows·out with a bias (one add per output element).
** deepspeed: numel(x)·weight[0] MACs, 2·MACs, the bias never counted.
*/
int profF_linear(const profF_Ctx *c, prof_Op *op) {
  int bias = (op->flags & PROF_OPF_BIAS) != 0;
  int rc = profF_need_inputs(c, op, 2 + bias, 2 + bias);
  if (rc != PROF_OK) {
    if (op->ninputs == 2 + !bias)
      return profF_fail(c, op, "%d operands %s PROF_OPF_BIAS", (int)op->ninputs,
                        bias ? "without the bias in[2] but with" : "with a bias in[2] but no");
    return rc;
  }
  const prof_Operand *x = &op->in[0], *w = &op->in[1];
  if ((rc = profF_need_ndim(c, op, x, "input", 1, PROF_MAX_DIMS)) != PROF_OK) return rc;
  if ((rc = profF_need_ndim(c, op, w, "weight", 2, 2)) != PROF_OK) return rc;
  int64_t in = x->dim[x->ndim - 1], out = w->dim[0];
  if (w->dim[1] != in)
    return profF_fail(c, op, "input %s does not match weight %s", PROFF_SHAPE(x), PROFF_SHAPE(w));
  if (bias && profF_numel(&op->in[2]) != out)
    return profF_fail(c, op, "bias %s does not match weight %s", PROFF_SHAPE(&op->in[2]),
                      PROFF_SHAPE(w));
  if (PROFF_DS(c)) {
    op->macs = profF_mul(profF_numel(x), out);
    op->flops = profF_mul(2, op->macs);
    return PROF_OK;
  }
  int64_t rows = profF_prod(x->dim, x->ndim - 1);
  op->macs = profF_mul(profF_mul(rows, in), out);
  op->flops = profF_mul(2, op->macs);
  if (bias) op->flops = profF_add(op->flops, profF_mul(rows, out));
  return PROF_OK;
}

/* {====================== matmul, mm, bmm ======================} */

/*
** torch.matmul: a 1-D first operand is a row [1, k] and a 1-D second one a column [k, 1] (the
** added dim is removed afterwards); the batch dims of both broadcast right-aligned. Sets
** *macs = prod(batch)·n·k·p.
*/
static int matmul_macs(const profF_Ctx *c, const prof_Op *op, const prof_Operand *a,
                       const prof_Operand *b, int64_t *macs) {
  int rc;
  if ((rc = profF_need_ndim(c, op, a, "input", 1, PROF_MAX_DIMS)) != PROF_OK) return rc;
  if ((rc = profF_need_ndim(c, op, b, "other", 1, PROF_MAX_DIMS)) != PROF_OK) return rc;
  int64_t n = a->ndim >= 2 ? a->dim[a->ndim - 2] : 1, ka = a->dim[a->ndim - 1];
  int64_t kb = b->ndim >= 2 ? b->dim[b->ndim - 2] : b->dim[0];
  int64_t p = b->ndim >= 2 ? b->dim[b->ndim - 1] : 1;
  if (ka != kb)
    return profF_fail(c, op, "input %s does not match other %s (%lld vs %lld)", PROFF_SHAPE(a),
                      PROFF_SHAPE(b), (long long)ka, (long long)kb);
  /* batch dims: everything before the last two */
  prof_Operand ba, bb, bat;
  memset(&ba, 0, sizeof ba);
  memset(&bb, 0, sizeof bb);
  ba.ndim = a->ndim > 2 ? a->ndim - 2 : 0;
  bb.ndim = b->ndim > 2 ? b->ndim - 2 : 0;
  memcpy(ba.dim, a->dim, sizeof(int64_t) * (size_t)ba.ndim);
  memcpy(bb.dim, b->dim, sizeof(int64_t) * (size_t)bb.ndim);
  if (profF_broadcast(&ba, &bb, &bat) != 0)
    return profF_fail(c, op, "batch dims of input %s and other %s do not broadcast",
                      PROFF_SHAPE(a), PROFF_SHAPE(b));
  *macs = profF_mul(profF_mul(profF_numel(&bat), n), profF_mul(ka, p));
  return PROF_OK;
}

/*
** exact: the MACs of torch.matmul's semantics ((8,)@(8,) is 8; (2,1,4,8)@(3,8,5) is 6·4·8·5).
** deepspeed: prod(a.shape)·b.shape[-1] for matmul, mm and bmm alike ((8,)@(8,) gives 64).
*/
int profF_matmul(const profF_Ctx *c, prof_Op *op) {
  int rc = profF_need_inputs(c, op, 2, 2);
  if (rc != PROF_OK) return rc;
  const prof_Operand *a = &op->in[0], *b = &op->in[1];
  if (op->kind == PROF_OP_MM || op->kind == PROF_OP_BMM) {
    int nd = op->kind == PROF_OP_MM ? 2 : 3;
    if ((rc = profF_need_ndim(c, op, a, "input", nd, nd)) != PROF_OK) return rc;
    if ((rc = profF_need_ndim(c, op, b, "mat2", nd, nd)) != PROF_OK) return rc;
    if (nd == 3 && a->dim[0] != b->dim[0])
      return profF_fail(c, op, "batch of input %s does not match mat2 %s", PROFF_SHAPE(a),
                        PROFF_SHAPE(b));
  }
  int64_t macs = 0;
  if ((rc = matmul_macs(c, op, a, b, &macs)) != PROF_OK) return rc;
  if (PROFF_DS(c)) macs = profF_mul(profF_numel(a), b->dim[b->ndim - 1]);
  op->macs = macs;
  op->flops = profF_mul(2, macs);
  return PROF_OK;
}

/* {====================== addmm, baddbmm ======================} */

/*
** exact: the product's MACs, FLOPs 2·MACs + numel(output) (one add per output element; beta and
** alpha scaling ignored). deepspeed: prod(mat1)·mat2[-1] MACs, FLOPs 2·MACs + numel(in[0]).
*/
int profF_addmm(const profF_Ctx *c, prof_Op *op) {
  int rc = profF_need_inputs(c, op, 3, 3);
  if (rc != PROF_OK) return rc;
  int nd = op->kind == PROF_OP_ADDMM ? 2 : 3;
  const prof_Operand *t = &op->in[0], *a = &op->in[1], *b = &op->in[2];
  if ((rc = profF_need_ndim(c, op, a, nd == 2 ? "mat1" : "batch1", nd, nd)) != PROF_OK) return rc;
  if ((rc = profF_need_ndim(c, op, b, nd == 2 ? "mat2" : "batch2", nd, nd)) != PROF_OK) return rc;
  if ((rc = profF_need_ndim(c, op, t, "input", 0, nd)) != PROF_OK) return rc;
  if (nd == 3 && a->dim[0] != b->dim[0])
    return profF_fail(c, op, "batch1 %s does not match batch2 %s", PROFF_SHAPE(a), PROFF_SHAPE(b));
  if (a->dim[nd - 1] != b->dim[nd - 2])
    return profF_fail(c, op, "%s %s does not match %s %s", nd == 2 ? "mat1" : "batch1",
                      PROFF_SHAPE(a), nd == 2 ? "mat2" : "batch2", PROFF_SHAPE(b));
  prof_Operand prod, bc;
  memset(&prod, 0, sizeof prod);
  prod.ndim = nd;
  if (nd == 3) prod.dim[0] = a->dim[0];
  prod.dim[nd - 2] = a->dim[nd - 2];
  prod.dim[nd - 1] = b->dim[nd - 1];
  if (profF_broadcast(t, &prod, &bc) != 0 || !profF_same_shape(&bc, &prod))
    return profF_fail(c, op, "input %s does not broadcast to the product %s", PROFF_SHAPE(t),
                      PROFF_SHAPE(&prod));
  int64_t macs = profF_mul(profF_numel(a), b->dim[nd - 1]);  /* exact too: (b·)n·m·p */
  op->macs = macs;
  op->flops = profF_add(profF_mul(2, macs), PROFF_DS(c) ? profF_numel(t) : profF_numel(&prod));
  return PROF_OK;
}

/* {====================== einsum ======================} */

/* Index ids: 'A'..'Z' 0..25, 'a'..'z' 26..51, ellipsis dims 52.. counted from the right. */
#define EIN_LETTERS 52
#define EIN_IDS (EIN_LETTERS + PROF_MAX_DIMS)

typedef struct Einsum {
  int64_t size[EIN_IDS];       /* -1 while unseen */
  int count[EIN_IDS];          /* occurrences over all input terms (for the implicit output) */
  uint64_t in_set, out_set;    /* bit i: index id i */
} Einsum;

static int letter_id(char ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return 26 + ch - 'a';
  return -1;
}

/* Records one input term against its operand; numpy's rule: a size 1 broadcasts. */
static int ein_term(const profF_Ctx *c, const prof_Op *op, Einsum *e, const char *t, size_t len,
                    const prof_Operand *o, int which) {
  int letters = 0, ell = -1;
  for (size_t i = 0; i < len; i++) {
    if (t[i] == '.') {
      if (ell >= 0 || i + 2 >= len || t[i + 1] != '.' || t[i + 2] != '.')
        return profF_fail(c, op, "malformed ellipsis in \"%s\"", op->equation);
      ell = letters;
      i += 2;
    } else if (letter_id(t[i]) >= 0) {
      letters++;
    } else {
      return profF_fail(c, op, "invalid character '%c' in \"%s\"", t[i], op->equation);
    }
  }
  int ell_nd = o->ndim - letters;
  if (ell_nd < 0 || (ell < 0 && ell_nd != 0))
    return profF_fail(c, op, "operand %d %s does not fit \"%s\"", which, PROFF_SHAPE(o),
                      op->equation);
  int axis = 0;
  for (size_t i = 0; i < len; i++) {
    int ids[PROF_MAX_DIMS], nids = 0;
    if (t[i] == '.') {
      for (int k = 0; k < ell_nd; k++) ids[nids++] = EIN_LETTERS + (ell_nd - 1 - k);
      i += 2;
    } else {
      ids[nids++] = letter_id(t[i]);
    }
    for (int k = 0; k < nids; k++, axis++) {
      int id = ids[k];
      int64_t d = o->dim[axis];
      e->count[id]++;
      e->in_set |= (uint64_t)1 << id;
      if (e->size[id] < 0 || e->size[id] == 1)
        e->size[id] = d;
      else if (d != 1 && d != e->size[id])
        return profF_fail(c, op, "operand %d %s does not fit \"%s\" (size %lld vs %lld)", which,
                          PROFF_SHAPE(o), op->equation, (long long)d, (long long)e->size[id]);
    }
  }
  return PROF_OK;
}

/*
** Parses the equation against the operands into the index sizes and the input and output index
** sets, as numpy's einsum_path does (spaces ignored; implicit output: the letters seen once,
** plus the ellipsis dims).
*/
static int ein_parse(const profF_Ctx *c, const prof_Op *op, Einsum *e) {
  char eq[256];
  size_t n = 0;
  for (const char *s = op->equation; *s != '\0'; s++) {
    if (*s == ' ') continue;
    if (n + 1 >= sizeof eq) return profF_fail(c, op, "equation too long");
    eq[n++] = *s;
  }
  eq[n] = '\0';
  for (int i = 0; i < EIN_IDS; i++) e->size[i] = -1, e->count[i] = 0;
  e->in_set = e->out_set = 0;
  const char *arrow = strstr(eq, "->");
  size_t lhs_len = arrow != NULL ? (size_t)(arrow - eq) : n;
  int term = 0;
  size_t start = 0;
  for (size_t i = 0; i <= lhs_len; i++) {
    if (i < lhs_len && eq[i] != ',') continue;
    if (term >= op->ninputs)
      return profF_fail(c, op, "\"%s\" has more terms than the %d operands", op->equation,
                        (int)op->ninputs);
    int rc = ein_term(c, op, e, eq + start, i - start, &op->in[term], term);
    if (rc != PROF_OK) return rc;
    term++;
    start = i + 1;
  }
  if (term != op->ninputs)
    return profF_fail(c, op, "\"%s\" has %d terms for %d operands", op->equation, term,
                      (int)op->ninputs);
  uint64_t ell_bits = e->in_set & ~(((uint64_t)1 << EIN_LETTERS) - 1);
  if (arrow == NULL) {
    for (int id = 0; id < EIN_LETTERS; id++)
      if (e->count[id] == 1) e->out_set |= (uint64_t)1 << id;
    e->out_set |= ell_bits;
    return PROF_OK;
  }
  const char *o = arrow + 2;
  for (size_t i = 0; o[i] != '\0'; i++) {
    if (o[i] == '.' && o[i + 1] == '.' && o[i + 2] == '.') {
      e->out_set |= ell_bits;
      i += 2;
      continue;
    }
    int id = letter_id(o[i]);
    if (id < 0) return profF_fail(c, op, "invalid character '%c' in \"%s\"", o[i], op->equation);
    uint64_t bit = (uint64_t)1 << id;
    if (!(e->in_set & bit))
      return profF_fail(c, op, "output index '%c' of \"%s\" is not in any input", o[i],
                        op->equation);
    if (e->out_set & bit)
      return profF_fail(c, op, "output index '%c' repeated in \"%s\"", o[i], op->equation);
    e->out_set |= bit;
  }
  return PROF_OK;
}

/* Product of the sizes of the indices in set. */
static int64_t ein_size(const Einsum *e, uint64_t set) {
  int64_t p = 1;
  for (int id = 0; id < EIN_IDS; id++)
    if (set & ((uint64_t)1 << id)) p = profF_mul(p, e->size[id]);
  return p;
}

/*
** deepspeed: 0 MACs; FLOPs = numpy's "Optimized FLOP count": one contraction of all the operands
** costing P·(max(1, n-1) + (1 if an index is summed away)) with P the product of every index
** size, plus 1 (numpy adds 1 to the path cost), printed "%.3e" and read back: 4 significant
** digits. exact, two operands: MACs = P when an index is summed away (FLOPs 2·MACs), else 0 MACs
** and P multiplies; one operand: P - numel(out) adds when summing, else nothing (a view).
*/
int profF_einsum(const profF_Ctx *c, prof_Op *op) {
  int rc = profF_need_inputs(c, op, 1, 2);
  if (rc != PROF_OK) return rc;
  if (op->equation == NULL) return profF_fail(c, op, "no equation");
  Einsum e;
  memset(&e, 0, sizeof e);
  if ((rc = ein_parse(c, op, &e)) != PROF_OK) return rc;
  int64_t all = ein_size(&e, e.in_set);
  int summed = (e.in_set & ~e.out_set) != 0;
  if (PROFF_DS(c)) {
    int64_t factor = (op->ninputs > 2 ? op->ninputs - 1 : 1) + (summed ? 1 : 0);
    op->macs = 0;
    op->flops = profF_sig4(profF_add(profF_mul(all, factor), 1));
    return PROF_OK;
  }
  if (op->ninputs == 1) {
    op->macs = 0;
    op->flops = summed ? profF_sub(all, ein_size(&e, e.out_set)) : 0;
  } else if (summed) {
    op->macs = all;
    op->flops = profF_mul(2, all);
  } else {
    op->macs = 0;
    op->flops = all;
  }
  return PROF_OK;
}
