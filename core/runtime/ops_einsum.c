/* ops_einsum.c — einsum of one or two operands: shapes, checks, records, values, node. */
#include <string.h>

#include "backward.h"

/* Values: the operands are permuted and reshaped into one batched matrix product (sgemm);
   the gradients are einsums of the output's gradient with the other operand. */

/* {====================== einsum ======================} */

#define NLETTERS 52

/* 'A'..'Z' are 0..25 and 'a'..'z' 26..51: PyTorch's order for the implicit output. */
static int letter(char ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return 26 + ch - 'a';
  return -1;
}

typedef struct Einsum {
  const char *eq;              /* as given, for messages */
  int64_t size[NLETTERS];      /* -1 while unseen */
  int count[NLETTERS];         /* occurrences over the input terms */
  int ell_nd;                  /* dims the ellipsis covers (broadcast over operands) */
  int64_t ell[PR_MAX_DIMS];    /* their sizes, right-aligned */
  int has_ell;
} Einsum;

/* Matches one input term (no spaces) against its operand. */
static int ein_term(pr_Runtime *rt, Einsum *e, const char *t, size_t len, const pr_Tensor *x,
                    int which) {
  char sx[96];
  int letters = 0, ell = 0;
  for (size_t i = 0; i < len; i++) {
    if (t[i] == '.') {
      if (ell || i + 2 >= len || t[i + 1] != '.' || t[i + 2] != '.')
        return pr_error(rt, "einsum: operand %d of \"%s\" has a '.' outside a single ellipsis",
                        which, e->eq);
      ell = 1;
      i += 2;
    } else if (letter(t[i]) < 0) {
      return pr_error(rt, "einsum: invalid subscript '%c' in \"%s\" (subscripts are letters)",
                      t[i], e->eq);
    } else {
      letters++;
    }
  }
  int ell_nd = x->ndim - letters;
  if (ell_nd < 0 || (!ell && ell_nd != 0))
    return pr_error(rt, "einsum: %d subscripts of operand %d in \"%s\" do not fit its shape %s",
                    letters, which, e->eq, pr_shape_str(x, sx, sizeof sx));
  if (ell) {
    e->has_ell = 1;
    int n;
    int64_t mine[PR_MAX_DIMS];
    int start = 0;
    for (size_t i = 0; i < len && t[i] != '.'; i++) start++;
    memcpy(mine, x->shape + start, sizeof *mine * (size_t)ell_nd);
    if (pr_broadcast_shapes(rt, "einsum", e->ell_nd, e->ell, ell_nd, mine, &n, e->ell) != 0)
      return pr_error(rt, "einsum: the ellipsis dims of operand %d %s do not broadcast with "
                      "those seen before", which, pr_shape_str(x, sx, sizeof sx));
    e->ell_nd = n;
  }
  int64_t own[NLETTERS];       /* sizes within this operand: a repeat takes a diagonal */
  for (int i = 0; i < NLETTERS; i++) own[i] = -1;
  int axis = 0;
  for (size_t i = 0; i < len; i++) {
    if (t[i] == '.') {
      axis += ell_nd;
      i += 2;
      continue;
    }
    int id = letter(t[i]);
    int64_t d = x->shape[axis++];
    if (own[id] >= 0 && own[id] != d)
      return pr_error(rt, "einsum: subscript '%c' is repeated in operand %d %s with sizes %lld "
                      "and %lld", t[i], which, pr_shape_str(x, sx, sizeof sx),
                      (long long)own[id], (long long)d);
    own[id] = d;
    e->count[id]++;
    if (e->size[id] < 0 || e->size[id] == 1) {
      e->size[id] = d;
    } else if (d != 1 && d != e->size[id]) {
      return pr_error(rt, "einsum: subscript '%c' has size %lld in operand %d %s but %lld "
                      "before", t[i], (long long)d, which, pr_shape_str(x, sx, sizeof sx),
                      (long long)e->size[id]);
    }
  }
  return 0;
}

/* The equation without spaces into eq[256]; its length, or PR_ERR. */
static int ein_strip(pr_Runtime *rt, const char *in, char *eq) {
  size_t n = 0;
  for (const char *s = in; *s != '\0'; s++) {
    if (*s == ' ') continue;
    if (n + 1 >= 256) return pr_error(rt, "einsum: equation too long");
    eq[n++] = *s;
  }
  eq[n] = '\0';
  return (int)n;
}

/* The output shape of equation over the operands, as torch.einsum computes it. */
static int ein_shape(pr_Runtime *rt, Einsum *e, int nops, const pr_Tensor *const *ops, int *ndim,
                     int64_t *shape) {
  char eq[256];
  int len = ein_strip(rt, e->eq, eq);
  if (len < 0) return PR_ERR;
  size_t n = (size_t)len;
  for (int i = 0; i < NLETTERS; i++) e->size[i] = -1, e->count[i] = 0;
  const char *arrow = strstr(eq, "->");
  size_t lhs = arrow != NULL ? (size_t)(arrow - eq) : n;
  int terms = 1;
  for (size_t i = 0; i < lhs; i++) terms += eq[i] == ',';
  if (terms != nops)
    return pr_error(rt, "einsum: \"%s\" has %d operand terms but %d tensors were given", e->eq,
                    terms, nops);
  size_t start = 0;
  for (int k = 0; k < nops; k++) {
    size_t end = start;
    while (end < lhs && eq[end] != ',') end++;
    if (ein_term(rt, e, eq + start, end - start, ops[k], k) != 0) return PR_ERR;
    start = end + 1;
  }
  int nd = 0;
  if (arrow == NULL) {
    /* implicit: the ellipsis dims, then every subscript seen once, in alphabetical order */
    for (int i = 0; i < e->ell_nd; i++) shape[nd++] = e->ell[i];
    for (int id = 0; id < NLETTERS; id++)
      if (e->count[id] == 1) {
        if (nd == PR_MAX_DIMS) goto too_many;
        shape[nd++] = e->size[id];
      }
    *ndim = nd;
    return 0;
  }
  int seen[NLETTERS] = {0}, ell_done = 0;
  for (const char *o = arrow + 2; *o != '\0'; o++) {
    if (o[0] == '.' && o[1] == '.' && o[2] == '.' && !ell_done) {
      ell_done = 1;
      if (nd + e->ell_nd > PR_MAX_DIMS) goto too_many;
      for (int i = 0; i < e->ell_nd; i++) shape[nd++] = e->ell[i];
      o += 2;
      continue;
    }
    int id = letter(*o);
    if (id < 0)
      return pr_error(rt, "einsum: invalid output subscript '%c' in \"%s\"", *o, e->eq);
    if (e->count[id] == 0)
      return pr_error(rt, "einsum: output subscript '%c' of \"%s\" is in no input", *o, e->eq);
    if (seen[id])
      return pr_error(rt, "einsum: output subscript '%c' appears more than once in \"%s\"", *o,
                      e->eq);
    seen[id] = 1;
    if (nd == PR_MAX_DIMS) goto too_many;
    shape[nd++] = e->size[id];
  }
  *ndim = nd;
  return 0;
too_many:
  return pr_error(rt, "einsum: the output of \"%s\" has more than %d dims", e->eq, PR_MAX_DIMS);
}

/* {====================== einsum's values ======================} */

/*
** An equation as id lists: letters are their ids, the ellipsis dims ELL0 + k right-aligned over
** the broadcast ellipsis. The computation and the gradients work on these.
*/
#define ELL0 NLETTERS
#define NIDS (NLETTERS + PR_MAX_DIMS)

typedef pr_EinTerm Term;      /* backward.h: ops_einsum_backward.c reads terms too */

/* A term in one int64 (4 bits of count, 6 per id) for a node's arguments. */
static int64_t term_pack(const Term *t) {
  int64_t v = t->n;
  for (int i = 0; i < t->n; i++) v |= (int64_t)t->id[i] << (4 + 6 * i);
  return v;
}

Term pr_ein_term_unpack(int64_t v) {
  Term t;
  t.n = (int)(v & 15);
  for (int i = 0; i < t.n; i++) t.id[i] = (int)((v >> (4 + 6 * i)) & 63);
  return t;
}

int pr_ein_term_has(const Term *t, int id) {
  for (int i = 0; i < t->n; i++)
    if (t->id[i] == id) return 1;
  return 0;
}

/* One term of a validated equation: s[0..len) against an operand of ndim dims. */
static Term ein_term_ids(const char *s, size_t len, int ndim, int ell_nd) {
  Term t = {0, {0}};
  int letters = 0;
  for (size_t i = 0; i < len; i++) letters += letter(s[i]) >= 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '.') {
      int own = ndim < 0 ? ell_nd : ndim - letters;   /* ndim < 0: the output */
      for (int k = 0; k < own; k++) t.id[t.n++] = ELL0 + ell_nd - own + k;
      i += 2;
    } else {
      t.id[t.n++] = letter(s[i]);
    }
  }
  return t;
}

/* The id lists of a validated equation; the implicit output as ein_shape orders it. */
static void ein_terms(const Einsum *e, const char *eq, int nops, const pr_Tensor *const *ops,
                      Term *in, Term *out) {
  const char *arrow = strstr(eq, "->");
  size_t lhs = arrow != NULL ? (size_t)(arrow - eq) : strlen(eq), start = 0;
  for (int k = 0; k < nops; k++) {
    size_t end = start;
    while (end < lhs && eq[end] != ',') end++;
    in[k] = ein_term_ids(eq + start, end - start, ops[k]->ndim, e->ell_nd);
    start = end + 1;
  }
  if (arrow != NULL) {
    *out = ein_term_ids(arrow + 2, strlen(arrow + 2), -1, e->ell_nd);
    return;
  }
  out->n = 0;
  for (int k = 0; k < e->ell_nd; k++) out->id[out->n++] = ELL0 + k;
  for (int id = 0; id < NLETTERS; id++)
    if (e->count[id] == 1) out->id[out->n++] = id;
}

/* x viewed with one dim per distinct id of t, in first-seen order (a repeated id: its diagonal,
   whose stride is the sum of the repeats'). */
pr_Tensor *pr_ein_distinct(pr_Runtime *rt, const pr_Tensor *x, const Term *t, Term *u) {
  int64_t shape[PR_MAX_DIMS], stride[PR_MAX_DIMS];
  u->n = 0;
  for (int i = 0; i < t->n; i++) {
    int j = 0;
    while (j < u->n && u->id[j] != t->id[i]) j++;
    if (j == u->n) {
      u->id[u->n++] = t->id[i];
      shape[j] = x->shape[i];
      stride[j] = 0;
    }
    stride[j] += x->stride[i];
  }
  return pr_tensor_view(rt, x, u->n, shape, stride, x->offset);
}

/* Sums x over the dims of u whose ids keep (NULL: none) lacks, removing them from u. */
static pr_Tensor *sum_out(pr_Runtime *rt, pr_Tensor *x, Term *u, const Term *keep1,
                          const Term *keep2) {
  int dims[PR_MAX_DIMS], nd = 0;
  Term left = {0, {0}};
  for (int i = 0; i < u->n; i++) {
    if (pr_ein_term_has(keep1, u->id[i]) || (keep2 != NULL && pr_ein_term_has(keep2, u->id[i])))
      left.id[left.n++] = u->id[i];
    else
      dims[nd++] = i;
  }
  if (nd == 0) return x;
  pr_Tensor *s = pr_reduce(rt, PROF_OP_SUM, x, nd, dims, 0, 0);
  pr_tensor_release(x);
  *u = left;
  return s;
}

/* x (dims u) permuted into the order of ids. */
static pr_Tensor *arrange(pr_Runtime *rt, pr_Tensor *x, const Term *u, const int *ids, int n) {
  int perm[PR_MAX_DIMS];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < u->n; j++)
      if (u->id[j] == ids[i]) perm[i] = j;
  pr_Tensor *p = x ? pr_permute(rt, x, n, perm) : NULL;
  pr_tensor_release(x);
  return p;
}

/* x reshaped to [lead..., prod(a), prod(b)] with a, b runs of its trailing dims. */
static pr_Tensor *as_matrix(pr_Runtime *rt, pr_Tensor *x, int lead, int na, int nb) {
  int64_t shape[PR_MAX_DIMS + 2], m = 1, k = 1;
  if (x == NULL) return NULL;
  for (int i = 0; i < lead; i++) shape[i] = x->shape[i];
  for (int i = 0; i < na; i++) m *= x->shape[lead + i];
  for (int i = 0; i < nb; i++) k *= x->shape[lead + na + i];
  shape[lead] = m;
  shape[lead + 1] = k;
  pr_Tensor *r = pr_reshape(rt, x, lead + 2, shape, 0);
  pr_tensor_release(x);
  return r;
}

/*
** The value of a two-operand einsum through one matmul: letters only in one operand and not in
** the output are summed first; the rest become batch dims (both operands and the output, size-1
** broadcast by the matmul), rows (a's), the contraction (both, not the output) and columns (b's).
** One operand: its sums and a permutation. rt is quiet; the result has the output's dims.
*/
static pr_Tensor *ein_compute(pr_Runtime *rt, int nops, const Term *in, const Term *out,
                              const pr_Tensor *a, const pr_Tensor *b) {
  Term u[2];
  pr_Tensor *x[2] = {pr_ein_distinct(rt, a, &in[0], &u[0]), b ? pr_ein_distinct(rt, b, &in[1], &u[1]) : NULL};
  if (x[0] == NULL || (b && x[1] == NULL)) goto fail;
  x[0] = sum_out(rt, x[0], &u[0], out, b ? &u[1] : NULL);
  if (b) x[1] = sum_out(rt, x[1], &u[1], out, &u[0]);
  if (x[0] == NULL || (b && x[1] == NULL)) goto fail;
  if (nops == 1) return arrange(rt, x[0], &u[0], out->id, out->n);
  int bat[PR_MAX_DIMS], con[PR_MAX_DIMS], ak[PR_MAX_DIMS], bk[PR_MAX_DIMS];
  int nbat = 0, ncon = 0, nak = 0, nbk = 0;
  for (int i = 0; i < out->n; i++)
    if (pr_ein_term_has(&u[0], out->id[i]) && pr_ein_term_has(&u[1], out->id[i])) bat[nbat++] = out->id[i];
  for (int i = 0; i < u[0].n; i++) {
    int id = u[0].id[i];
    if (!pr_ein_term_has(&u[1], id)) ak[nak++] = id;
    else if (!pr_ein_term_has(out, id)) con[ncon++] = id;
  }
  for (int i = 0; i < u[1].n; i++)
    if (!pr_ein_term_has(&u[0], u[1].id[i])) bk[nbk++] = u[1].id[i];
  if (nbat + 2 > PR_MAX_DIMS) {
    pr_error(rt, "einsum: more than %d batch dims", PR_MAX_DIMS - 2);
    goto fail;
  }
  /* a contracted letter of size 1 on one side is broadcast to the other's size */
  for (int k = 0; k < 2; k++) {
    int64_t shape[PR_MAX_DIMS];
    int grow = 0;
    for (int i = 0; i < u[k].n; i++) {
      shape[i] = x[k]->shape[i];
      for (int j = 0; j < u[1 - k].n; j++)
        if (u[1 - k].id[j] == u[k].id[i] && !pr_ein_term_has(out, u[k].id[i]) && shape[i] == 1 &&
            x[1 - k]->shape[j] != 1)
          shape[i] = x[1 - k]->shape[j], grow = 1;
    }
    if (grow) {
      pr_Tensor *e = pr_expand(rt, x[k], u[k].n, shape);
      pr_tensor_release(x[k]);
      if ((x[k] = e) == NULL) goto fail;
    }
  }
  int ida[PR_MAX_DIMS], idb[PR_MAX_DIMS], idr[PR_MAX_DIMS];
  memcpy(ida, bat, sizeof(int) * (size_t)nbat);
  memcpy(ida + nbat, ak, sizeof(int) * (size_t)nak);
  memcpy(ida + nbat + nak, con, sizeof(int) * (size_t)ncon);
  memcpy(idb, bat, sizeof(int) * (size_t)nbat);
  memcpy(idb + nbat, con, sizeof(int) * (size_t)ncon);
  memcpy(idb + nbat + ncon, bk, sizeof(int) * (size_t)nbk);
  int64_t rshape[PR_MAX_DIMS];
  int nr = 0;
  for (int i = 0; i < nbat; i++) rshape[nr] = -2, idr[nr++] = bat[i];
  for (int i = 0; i < nak; i++)
    for (int j = 0; j < u[0].n; j++)
      if (u[0].id[j] == ak[i]) rshape[nr] = x[0]->shape[j], idr[nr++] = ak[i];
  for (int i = 0; i < nbk; i++)
    for (int j = 0; j < u[1].n; j++)
      if (u[1].id[j] == bk[i]) rshape[nr] = x[1]->shape[j], idr[nr++] = bk[i];
  pr_Tensor *ma = as_matrix(rt, arrange(rt, x[0], &u[0], ida, u[0].n), nbat, nak, ncon);
  pr_Tensor *mb = as_matrix(rt, arrange(rt, x[1], &u[1], idb, u[1].n), nbat, ncon, nbk);
  x[0] = x[1] = NULL;
  pr_Tensor *p = ma && mb ? pr_matmul(rt, ma, mb) : NULL;
  pr_tensor_release(ma);
  pr_tensor_release(mb);
  if (p == NULL) return NULL;
  for (int i = 0; i < nbat; i++) rshape[i] = p->shape[i];   /* broadcast batch sizes */
  pr_Tensor *r = pr_reshape(rt, p, nr, rshape, 0);
  pr_tensor_release(p);
  Term ur = {nr, {0}};
  memcpy(ur.id, idr, sizeof(int) * (size_t)nr);
  return r ? arrange(rt, r, &ur, out->id, out->n) : NULL;
fail:
  pr_tensor_release(x[0]);
  pr_tensor_release(x[1]);
  return NULL;
}

/* "ab,bc->ac" of explicit terms; ellipsis ids take letters no term uses. */
void pr_ein_render(int nin, const Term *in, const Term *out, char *buf) {
  int used[NIDS] = {0}, map[NIDS];
  for (int k = 0; k <= nin; k++) {
    const Term *t = k < nin ? &in[k] : out;
    for (int i = 0; i < t->n; i++) used[t->id[i]] = 1;
  }
  for (int id = 0, next = 0; id < NIDS; id++) {
    if (id < NLETTERS) {
      map[id] = id;
      continue;
    }
    while (next < NLETTERS && used[next]) next++;
    map[id] = next < NLETTERS ? next++ : 0;
  }
  size_t n = 0;
  for (int k = 0; k <= nin; k++) {
    const Term *t = k < nin ? &in[k] : out;
    if (k == nin) buf[n++] = '-', buf[n++] = '>';
    else if (k > 0) buf[n++] = ',';
    for (int i = 0; i < t->n; i++) {
      int c = map[t->id[i]];
      buf[n++] = (char)(c < 26 ? 'A' + c : 'a' + c - 26);
    }
  }
  buf[n] = '\0';
}

/* The cpu values into out (recorded) and the gradient node; e is the validated equation. */
static pr_Tensor *einsum_result(pr_Runtime *rt, prof_Op *op, const Einsum *e, const pr_Tensor *a,
                                const pr_Tensor *b, pr_Tensor *out) {
  if (out == NULL) return NULL;
  int nops = b != NULL ? 2 : 1;
  const pr_Tensor *ops[2] = {a, b};
  char eq[256];
  Term in[2] = {{0, {0}}, {0, {0}}}, o;
  ein_strip(rt, e->eq, eq);
  ein_terms(e, eq, nops, ops, in, &o);
  int rc = 0;
  if (pr_holds_values(out)) {
    pr_Runtime quiet = *rt;   /* the decomposition's ops are the kernel's, not the model's */
    quiet.rec = NULL;
    quiet.grad_enabled = 0;
    pr_Tensor *r = out->dtype == PROF_F32 ? ein_compute(&quiet, nops, in, &o, a, b) : NULL;
    rc = r != NULL ? PR_K(out)->copy_into(rt, out, r) : PR_ERR;
    pr_tensor_release(r);
    if (rc != 0) {
      if (out->dtype != PROF_F32) pr_error(rt, "einsum: %s kernels compute float32", out->be->name);
      else if (rt->err[0] == '\0' || quiet.err[0] != '\0') pr_error(rt, "%s", quiet.err);
    }
  }
  if ((out = pr_op_end(rt, op, out, rc)) == NULL) return NULL;
  if (!pr_needs_grad(rt, a, b, NULL)) return out;
  const pr_Tensor *inputs[2] = {a, b};
  pr_Node *n = pr_node_attach(rt, out, PR_BW_EINSUM, "einsum", nops, inputs);
  if (n == NULL) {
    pr_tensor_release(out);
    return NULL;
  }
  n->args.i[0] = nops;
  n->args.i[1] = term_pack(&in[0]);
  n->args.i[2] = term_pack(&in[1]);
  n->args.i[3] = term_pack(&o);
  pr_node_save(n, 0, (pr_Tensor *)a);
  if (b != NULL) pr_node_save(n, 1, (pr_Tensor *)b);
  return out;
}

pr_Tensor *pr_einsum(pr_Runtime *rt, const char *equation, const pr_Tensor *a,
                     const pr_Tensor *b) {
  if (pr_check_same(rt, "einsum", a, b, NULL) != 0) return NULL;
  if (pr_check_float(rt, "einsum", "input", a) != 0) return NULL;
  Einsum e;
  memset(&e, 0, sizeof e);
  e.eq = equation;
  const pr_Tensor *ops[2] = {a, b};
  int ndim = 0;
  int64_t shape[PR_MAX_DIMS];
  if (ein_shape(rt, &e, b != NULL ? 2 : 1, ops, &ndim, shape) != 0) return NULL;
  prof_Op op;
  pr_op_begin(&op, PROF_OP_EINSUM, a, b, NULL);
  op.equation = equation;
  return einsum_result(rt, &op, &e, a, b, pr_op_alloc(rt, &op, ndim, shape, a->dtype, a->device));
}
