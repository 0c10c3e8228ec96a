/* report_deepspeed.c — DeepSpeed's print_model_profile text of a report document, character for character. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "saturate.h"
#include "report/report_internal.h"

/*
** Deliberate differences from DeepSpeed: "params of model" prints params per GPU * mp_size also
** standalone; the aggregated section prints every depth including the innermost, and a
** module_depth beyond the tree prints what exists; unknown latencies (meta device) print "n/a"
** and a zero latency prints "0 FLOPS" instead of dividing by zero; hidden (ignored) modules give
** their rows to their children; fold containers print "(0-23): 24 x ...". A document with the
** device's peaks also gets MFU, the FLOPS printed beside it over the peak: a "fwd MFU" line after
** the fwd FLOPS, an "MFU per GPU" line after the iteration FLOPS, and "N% MFU" after each
** module's FLOPS (DeepSpeed prints none of these).
*/

static const char *const NOTATIONS[] = {
  "Notations:",
  "data parallel size (dp_size), model parallel size(mp_size),",
  "number of parameters (params), number of multiply-accumulate operations(MACs),",
  "number of floating-point operations (flops), floating-point operations per second (FLOPS),",
  "fwd latency (forward propagation latency), bwd latency (backward propagation latency),",
  "step (weights update latency), iter latency (sum of fwd, bwd and step latency)",
  "",
};

static const char *const DETAIL_HEAD[] = {
  "",
  "------------------------------ Detailed Profile per GPU ------------------------------",
  "Each module profile is listed after its name in the following order: ",
  "params, percentage of total params, MACs, percentage of total MACs, fwd latency, "
  "percentage of total fwd latency, fwd FLOPS",
  "",
  "Note: 1. A module can have torch.nn.module or torch.nn.functional to compute logits (e.g. "
  "CrossEntropyLoss). They are not counted as submodules, thus not to be printed out. However "
  "they make up the difference between a parent's MACs (or latency) and the sum of its submodules'.",
  "2. Number of floating-point operations is a theoretical estimation, thus FLOPS computed using that "
  "could be larger than the maximum system throughput.",
  "3. The fwd latency listed in the top module's profile is directly captured at the module forward "
  "function in PyTorch, thus it's less than the fwd latency shown above which is captured in DeepSpeed.",
  "",
};

typedef struct Report {
  prof_State *S;
  const prof_ReportDoc *doc;
  const prof_ReportOptions *opts;
  profP_Tree tree;
  int64_t root_params, root_macs;   /* the percentages' totals; PROF_UNKNOWN without a root */
  double peak;                      /* summary.peak_flops, NAN: no MFU */
} Report;

static double known_int(int64_t v) { return v == PROF_UNKNOWN ? NAN : (double)v; }

/* DeepSpeed's line_fmt '{:<70}  {:<8}'. */
static void line(profP_Out *o, const char *label, const char *value) {
  size_t l = strlen(label), v = strlen(value);
  profP_puts(o, label);
  profP_pad(o, l < 70 ? 70 - l : 0);
  profP_put(o, "  ", 2);
  profP_puts(o, value);
  profP_pad(o, v < 8 ? 8 - v : 0);
  profP_put(o, "\n", 1);
}

static void text_line(profP_Out *o, const char *s) {
  profP_puts(o, s);
  profP_put(o, "\n", 1);
}

/* A share of the peak as a percentage ("n/a" when unknown). */
static const char *mfu_text(double share, char *buf) {
  if (isnan(share)) snprintf(buf, PROFP_NUM, "n/a");
  else snprintf(buf, PROFP_NUM, "%.2f%%", 100 * share);
  return buf;
}

/* {====================== summary ======================} */

static void summary(Report *R, profP_Out *o, const prof_ReportModule *root) {
  const prof_ReportSummary *p = &R->doc->summary;
  char a[PROFP_NUM], b[PROFP_NUM], lbl[256];
  text_line(o, "");
  text_line(o, "-------------------------- DeepSpeed Flops Profiler --------------------------");
  snprintf(lbl, sizeof lbl, "Profile Summary at step %s:", profP_pystr_int(R->opts->profile_step, a));
  text_line(o, lbl);
  for (size_t i = 0; i < sizeof NOTATIONS / sizeof *NOTATIONS; i++) text_line(o, NOTATIONS[i]);
  int64_t mp = p->mp_size != PROF_UNKNOWN ? p->mp_size : 1;
  if (p->saturated)
    text_line(o, "Warning: some counts passed 2^63 - 1 and stopped there (saturated); they are lower bounds");
  int64_t gas = p->gradient_accumulation_steps != PROF_UNKNOWN ? p->gradient_accumulation_steps : 1;
  if (p->engine) {
    line(o, "world size: ", profP_pystr_int(p->world_size != PROF_UNKNOWN ? p->world_size : 1, a));
    line(o, "data parallel size: ", profP_pystr_int(p->dp_size != PROF_UNKNOWN ? p->dp_size : 1, a));
    line(o, "model parallel size: ", profP_pystr_int(mp, a));
    line(o, "batch size per GPU: ", profP_pystr_int(p->batch_size, a));
    /* under gradient accumulation the counts and fwd/bwd latencies are one micro-batch's, the
       iteration the whole optimizer step's (profrun's line: DeepSpeed prints none) */
    if (gas > 1) line(o, "gradient accumulation steps (micro-batches per iter): ", profP_pystr_int(gas, a));
  }
  int64_t params = p->params != PROF_UNKNOWN ? p->params : root ? root->params : PROF_UNKNOWN;
  int64_t params_model = p->params_model != PROF_UNKNOWN ? p->params_model
                         : params != PROF_UNKNOWN        ? prof_sat_mul(params, mp)
                                                         : PROF_UNKNOWN;
  int64_t flops = p->fwd_flops != PROF_UNKNOWN ? p->fwd_flops : root ? root->flops : PROF_UNKNOWN;
  int64_t flops_model = p->fwd_flops_model != PROF_UNKNOWN ? p->fwd_flops_model
                        : flops != PROF_UNKNOWN            ? prof_sat_mul(flops, mp)
                                                           : PROF_UNKNOWN;
  int64_t macs = p->fwd_macs != PROF_UNKNOWN ? p->fwd_macs : root ? root->macs : PROF_UNKNOWN;
  line(o, "params per GPU: ", profP_params(params, a));
  line(o, "params of model = params per GPU * mp_size: ", profP_params(params_model, a));
  line(o, "fwd MACs per GPU: ", profP_number(known_int(macs), "MACs", a));
  line(o, "fwd flops per GPU: ", profP_number(known_int(flops), "", a));
  line(o, "fwd flops of model = fwd flops per GPU * mp_size: ", profP_number(known_int(flops_model), "", a));
  double fwd = p->fwd_latency_s;
  if (isnan(fwd) && root) fwd = R->tree.duration[0];
  line(o, "fwd latency: ", profP_number(fwd, "s", a));
  line(o, "fwd FLOPS per GPU = fwd flops per GPU / fwd latency: ", profP_rate(known_int(flops), fwd, a));
  if (!isnan(R->peak)) {
    snprintf(lbl, sizeof lbl, "peak FLOPS per GPU%s%s%s: ", p->peaks_machine ? " (" : "",
             p->peaks_machine ? p->peaks_machine : "", p->peaks_machine ? ")" : "");
    line(o, lbl, profP_number(R->peak, "FLOPS", a));
    line(o, "fwd MFU per GPU = fwd FLOPS per GPU / peak FLOPS: ", mfu_text(p->fwd_mfu, a));
  }
  if (!p->engine) return;
  double factor = 2 + (isnan(p->recompute_fwd_factor) ? 0.0 : p->recompute_fwd_factor);
  double bwd = p->bwd_latency_s, step = p->step_latency_s;
  double fwd_bwd = (!isnan(fwd) && !isnan(bwd)) ? fwd + bwd : NAN;
  double iter = p->iter_latency_s;
  if (isnan(iter) && !isnan(fwd_bwd) && !isnan(step)) iter = (double)gas * fwd_bwd + step;
  double work = known_int(flops);
  char fb[64], fb1[64];
  snprintf(fb, sizeof fb, "%g", factor);
  snprintf(fb1, sizeof fb1, "%g", factor + 1);
  line(o, "bwd latency: ", profP_number(bwd, "s", a));
  snprintf(lbl, sizeof lbl, "bwd FLOPS per GPU = %s * fwd flops per GPU / bwd latency: ", fb);
  line(o, lbl, profP_rate(factor * work, bwd, a));
  snprintf(lbl, sizeof lbl, "fwd+bwd FLOPS per GPU = %s * fwd flops per GPU / (fwd+bwd latency): ", fb1);
  line(o, lbl, profP_rate((factor + 1) * work, fwd_bwd, a));
  if (p->bwd_flops != PROF_UNKNOWN) {
    /* profrun ran the backward op by op: its measured counts beside DeepSpeed's 2x estimate */
    line(o, "bwd flops per GPU (measured): ", profP_number((double)p->bwd_flops, "", a));
    line(o, "bwd FLOPS per GPU (measured) = bwd flops per GPU / bwd latency: ",
         profP_rate((double)p->bwd_flops, bwd, a));
  }
  line(o, "step latency: ", profP_number(step, "s", a));
  line(o, "iter latency: ", profP_number(iter, "s", a));
  /* the iteration ran gas micro-batches: its work is gas times the one profiled */
  char per_iter[96] = "";
  if (gas > 1) snprintf(per_iter, sizeof per_iter, " * %s micro-batches", profP_pystr_int(gas, b));
  snprintf(lbl, sizeof lbl, "FLOPS per GPU = %s * fwd flops per GPU%s / iter latency: ", fb1, per_iter);
  line(o, lbl, profP_rate((factor + 1) * work * (double)gas, iter, a));
  if (!isnan(R->peak)) line(o, "MFU per GPU = FLOPS per GPU / peak FLOPS: ", mfu_text(p->iter_mfu, a));
  line(o, "samples/second: ", profP_pystr_float(profP_round2(p->samples_per_s), a));
}

/* {====================== aggregated profile ======================} */

/* One entry: a type at a depth, summed; entries of a depth chain in first-encounter order. */
typedef struct Agg {
  size_t type;                 /* offset of its name in the names text */
  uint64_t hash;
  int32_t depth, next, order;
  double params, macs, latency;
} Agg;

typedef struct Aggregate {
  prof_State *S;
  Agg *e;
  int32_t n, cap;
  int32_t *slots;              /* open addressing over (depth, type): entry index, -1 empty */
  size_t nslots;
  profP_Text names;
  int32_t *head, *tail;        /* per depth */
} Aggregate;

static uint64_t fnv(const char *s, int32_t depth) {
  uint64_t h = 1469598103934665603ull ^ (uint64_t)(uint32_t)depth;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* The entry of (depth, type), made on first sight. -1 when out of memory. */
static int32_t agg_entry(Aggregate *A, int32_t depth, const char *type) {
  uint64_t h = fnv(type, depth);
  size_t mask = A->nslots - 1;
  for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
    int32_t k = A->slots[i];
    if (k < 0) break;
    if (A->e[k].hash == h && A->e[k].depth == depth && strcmp(A->names.data + A->e[k].type, type) == 0)
      return k;
  }
  if (A->n == A->cap || (size_t)(A->n + 1) * 2 > A->nslots) {
    /* grow both: entries double, slots stay at least twice the entries */
    int32_t cap = A->cap * 2;
    Agg *e = profI_realloc(A->S, A->e, (size_t)A->cap * sizeof *e, (size_t)cap * sizeof *e);
    if (e == NULL) return -1;
    A->e = e;
    A->cap = cap;
    size_t ns = A->nslots;
    while ((size_t)(A->n + 1) * 2 > ns) ns *= 2;
    if (ns != A->nslots) {
      int32_t *slots = profI_alloc(A->S, ns * sizeof *slots);
      if (slots == NULL) return -1;
      for (size_t i = 0; i < ns; i++) slots[i] = -1;
      for (int32_t k = 0; k < A->n; k++) {
        size_t j = (size_t)A->e[k].hash & (ns - 1);
        while (slots[j] >= 0) j = (j + 1) & (ns - 1);
        slots[j] = k;
      }
      profI_free(A->S, A->slots, A->nslots * sizeof *A->slots);
      A->slots = slots;
      A->nslots = ns;
    }
    mask = A->nslots - 1;
  }
  size_t off = A->names.len;
  if (profP_text_write(&A->names, type, strlen(type) + 1) != 0) return -1;
  int32_t k = A->n++;
  A->e[k] = (Agg){off, h, depth, -1, 0, NAN, NAN, NAN};
  size_t i = (size_t)h & mask;
  while (A->slots[i] >= 0) i = (i + 1) & mask;
  A->slots[i] = k;
  if (A->tail[depth] >= 0) A->e[A->tail[depth]].next = k;
  else A->head[depth] = k;
  A->tail[depth] = k;
  return k;
}

static double field_of(const Agg *a, int field) {
  return field == 0 ? a->params : field == 1 ? a->macs : a->latency;
}

/* Whether a goes before b in Python's sorted(reverse=True), which is stable: ties (and unknown
   values, last) keep their first-encounter order. */
static int before(const Agg *a, const Agg *b, int field) {
  double u = field_of(a, field), v = field_of(b, field);
  if (!isnan(u) && !isnan(v) && u != v) return u > v;
  if (isnan(u) != isnan(v)) return !isnan(u);
  return a->order < b->order;
}

/* A merge sort of level[0..n) by field, tmp as long: n log n for a depth of many types. */
static void sort_level(Agg *level, Agg *tmp, int32_t n, int field) {
  for (int32_t w = 1; w < n; w *= 2) {
    for (int32_t lo = 0; lo < n; lo += 2 * w) {
      int32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int32_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) tmp[k++] = before(&level[j], &level[i], field) ? level[j++] : level[i++];
      while (i < mid) tmp[k++] = level[i++];
      while (j < hi) tmp[k++] = level[j++];
    }
    memcpy(level, tmp, (size_t)n * sizeof *level);
  }
}

static void dict(Aggregate *A, profP_Out *o, Agg *level, Agg *tmp, int32_t count, int field,
                 int64_t k) {
  char val[PROFP_NUM];
  sort_level(level, tmp, count, field);
  profP_put(o, "{", 1);
  for (int32_t i = 0; i < count && i < k; i++) {
    const Agg *e = &level[i];
    if (i > 0) profP_put(o, ", ", 2);
    profP_pyrepr(o, A->names.data + e->type);
    profP_put(o, ": ", 2);
    const char *s = field == 0   ? profP_params_sum(e->params, val)
                    : field == 1 ? profP_number(e->macs, "MACs", val)
                                 : profP_number(e->latency, "s", val);
    profP_pyrepr(o, s);
  }
  profP_put(o, "}\n", 2);
}

static int aggregated(Report *R, profP_Out *o) {
  prof_State *S = R->S;
  const profP_Tree *t = &R->tree;
  char buf[PROFP_NUM * 2], a[PROFP_NUM];
  int rc = PROF_OK;
  Aggregate A = {S, NULL, 0, 64, NULL, 128, {S, NULL, 0, 0}, NULL, NULL};
  size_t nlev = (size_t)(t->levels > 0 ? t->levels : 1);
  Agg *level = NULL, *tmp = NULL;
  A.e = profI_alloc(S, (size_t)A.cap * sizeof *A.e);
  A.slots = profI_alloc(S, A.nslots * sizeof *A.slots);
  A.head = profI_alloc(S, nlev * sizeof *A.head);
  A.tail = profI_alloc(S, nlev * sizeof *A.tail);
  if (!A.e || !A.slots || !A.head || !A.tail) goto oom;
  for (size_t i = 0; i < A.nslots; i++) A.slots[i] = -1;
  for (size_t d = 0; d < nlev; d++) A.head[d] = A.tail[d] = -1;
  text_line(o, "");
  text_line(o, "----------------------------- Aggregated Profile per GPU -----------------------------");
  snprintf(buf, sizeof buf, "Top %s modules in terms of params, MACs or fwd latency at different "
           "model depths:", profP_pystr_int(R->opts->top_modules, a));
  text_line(o, buf);
  /* DeepSpeed's walk_module over the shown tree: its pre-order is the document's, less the
     hidden modules */
  for (int32_t i = 0; i < t->n; i++) {
    if (t->flags[i] & PROFP_HIDDEN) continue;
    prof_ReportModule m;
    if ((rc = profP_read(S, R->doc, i, &m)) != PROF_OK) goto end;
    int32_t k = agg_entry(&A, t->depth[i], m.type ? m.type : "");
    if (k < 0) goto oom;
    Agg *e = &A.e[k];
    e->params = profP_add(e->params, known_int(m.params));
    e->macs = profP_add(e->macs, known_int(m.macs));
    e->latency = profP_add(e->latency, t->duration[i]);
  }
  int64_t want = R->opts->module_depth;
  if (want < 0 || want > t->levels) want = t->levels;
  int64_t k = R->opts->top_modules < 0 ? 0 : R->opts->top_modules;
  level = profI_alloc(S, (size_t)(A.n > 0 ? A.n : 1) * sizeof *level);
  tmp = profI_alloc(S, (size_t)(A.n > 0 ? A.n : 1) * sizeof *tmp);
  if (level == NULL || tmp == NULL) goto oom;
  for (int32_t d = 0; d < want; d++) {
    int32_t count = 0;
    for (int32_t e = A.head[d]; e >= 0; e = A.e[e].next) {
      level[count] = A.e[e];
      level[count].order = count;
      count++;
    }
    snprintf(buf, sizeof buf, "depth %d:", (int)d);
    text_line(o, buf);
    static const char *const label[3] = {"    params      - ", "    MACs        - ",
                                         "    fwd latency - "};
    for (int f = 0; f < 3; f++) {
      profP_puts(o, label[f]);
      dict(&A, o, level, tmp, count, f, k);
    }
  }
  goto end;
oom:
  rc = profI_error(S, PROF_ERRMEM, "DeepSpeed report: out of memory for the aggregated profile");
end:
  if (level) profI_free(S, level, (size_t)(A.n > 0 ? A.n : 1) * sizeof *level);
  if (tmp) profI_free(S, tmp, (size_t)(A.n > 0 ? A.n : 1) * sizeof *tmp);
  if (A.e) profI_free(S, A.e, (size_t)A.cap * sizeof *A.e);
  if (A.slots) profI_free(S, A.slots, A.nslots * sizeof *A.slots);
  if (A.head) profI_free(S, A.head, nlev * sizeof *A.head);
  if (A.tail) profI_free(S, A.tail, nlev * sizeof *A.tail);
  profP_text_free(&A.names);
  return rc;
}

/* {====================== detailed tree ======================} */

/* One module's text in the tree: DeepSpeed's flops_repr, then profrun's items. */
static void flops_repr(const Report *R, int32_t i, const prof_ReportModule *m, profP_Out *o) {
  char a[PROFP_NUM], b[PROFP_NUM];
  double duration = R->tree.duration[i], total = R->tree.duration[0];
  profP_puts(o, profP_params(m->params, a));
  profP_puts(o, " = ");
  profP_puts(o, profP_pct_int(m->params, R->root_params, b));
  profP_puts(o, "% Params, ");
  profP_puts(o, profP_number(known_int(m->macs), "MACs", a));
  profP_puts(o, " = ");
  profP_puts(o, profP_pct_int(m->macs, R->root_macs, b));
  profP_puts(o, "% MACs, ");
  if (isnan(duration)) {
    profP_puts(o, "n/a latency, n/a FLOPS");
  } else {
    profP_puts(o, profP_number(duration, "s", a));
    profP_puts(o, " = ");
    profP_puts(o, profP_pct(duration, total, b));
    profP_puts(o, "% latency, ");
    if (m->flops == PROF_UNKNOWN) profP_puts(o, "n/a");
    else if (duration == 0) profP_puts(o, profP_number(0, "FLOPS", a));
    else profP_puts(o, profP_number(profP_round2((double)m->flops / duration), "FLOPS", a));
  }
  if (!isnan(R->peak)) {
    int ok = !isnan(duration) && duration > 0 && m->flops != PROF_UNKNOWN;
    profP_puts(o, ", ");
    profP_puts(o, ok ? mfu_text((double)m->flops / duration / R->peak, a) : "n/a");
    profP_puts(o, " MFU");
  }
  if (R->opts->detailed_backward) {
    profP_puts(o, ", ");
    if (m->bwd_flops == PROF_UNKNOWN && isnan(m->bwd_latency_s)) {
      profP_puts(o, "bwd n/a");
    } else {
      double bf = known_int(m->bwd_flops);
      profP_number(isnan(bf) ? 0 : bf, "", a);
      size_t n = strlen(a);
      if (n > 0 && a[n - 1] == ' ') a[n - 1] = '\0';
      profP_puts(o, "bwd ");
      profP_puts(o, a);
      profP_puts(o, " flops, ");
      profP_puts(o, profP_number(m->bwd_latency_s, "s", b));
      profP_puts(o, ", ");
      profP_puts(o, profP_rate(bf, m->bwd_latency_s, a));
    }
  }
  if (m->extra_repr != NULL && m->extra_repr[0] != '\0') {
    profP_puts(o, ", ");
    profP_puts(o, m->extra_repr);
  }
}

/* An open module of the walk: its indentation and the next shown child to print. */
typedef struct Frame {
  int32_t m, ind, kid;
} Frame;

static int oom_tree(prof_State *S) {
  return profI_error(S, PROF_ERRMEM, "DeepSpeed report: out of memory for the tree");
}

static int emit_tree(Report *R, int32_t top, int each, profP_Out *o);

/*
** Prints module i from its type on (its head is printed): one line for a leaf whose text is one
** line, else the opening line and the text's lines; *open says whether its children and closing
** parenthesis follow. text is scratch.
*/
static int open_module(Report *R, int32_t i, int32_t ind, int each, profP_Out *o, profP_Text *text,
                       int *open) {
  prof_ReportModule m;
  int rc = profP_read(R->S, R->doc, i, &m);
  if (rc != PROF_OK) return rc;
  text->len = 0;
  profP_Out to_text = {profP_text_write, text, 0};
  flops_repr(R, i, &m, &to_text);
  if (to_text.failed) return oom_tree(R->S);
  const char *s = text->data ? text->data : "";
  profP_puts(o, m.type ? m.type : "");
  *open = R->tree.first[i] >= 0 || strchr(s, '\n') != NULL;
  if (!*open) {
    profP_puts(o, each ? "(each: " : "(");
    profP_puts(o, s);
    profP_put(o, ")\n", 2);
    return PROF_OK;
  }
  profP_puts(o, each ? "(each:\n" : "(\n");
  for (const char *l = s;;) {
    const char *e = strchr(l, '\n');
    profP_pad(o, (size_t)ind + 2);
    profP_put(o, l, e ? (size_t)(e - l) : strlen(l));
    profP_put(o, "\n", 1);
    if (e == NULL) break;
    l = e + 1;
  }
  return PROF_OK;
}

/* The last child *end of the run of identical children starting at c (compared by their texts
   at no indentation) and the run's length *count; c alone when the parent does not fold. */
static int run_end(Report *R, int32_t parent, int32_t c, int32_t *end, int32_t *count) {
  *end = c;
  *count = 1;
  if (!(R->tree.flags[parent] & PROFP_FOLD) || R->tree.next[c] < 0) return PROF_OK;
  profP_Text first = {R->S, NULL, 0, 0}, other = {R->S, NULL, 0, 0};
  profP_Out to_first = {profP_text_write, &first, 0};
  int rc = emit_tree(R, c, 0, &to_first);
  if (rc == PROF_OK && to_first.failed) rc = oom_tree(R->S);
  for (int32_t k = R->tree.next[c]; rc == PROF_OK && k >= 0; k = R->tree.next[k]) {
    other.len = 0;
    profP_Out to_other = {profP_text_write, &other, 0};
    if ((rc = emit_tree(R, k, 0, &to_other)) != PROF_OK) break;
    if (to_other.failed) {
      rc = oom_tree(R->S);
      break;
    }
    if (other.len != first.len || memcmp(other.data, first.data, first.len) != 0) break;
    *end = k;
    (*count)++;
  }
  profP_text_free(&first);
  profP_text_free(&other);
  return rc;
}

/* The name of module i written to o. */
static int put_name(Report *R, int32_t i, profP_Out *o) {
  prof_ReportModule m;
  int rc = profP_read(R->S, R->doc, i, &m);
  if (rc == PROF_OK) profP_puts(o, m.name);
  return rc;
}

/*
** PyTorch's Module.__repr__ of the shown subtree of top, at no indentation and with no head:
** iterative (an explicit stack of open modules, as deep as the shown tree), lines written once
** at their final indentation. each: top stands for a run of identical modules.
*/
static int emit_tree(Report *R, int32_t top, int each, profP_Out *o) {
  prof_State *S = R->S;
  size_t cap = (size_t)(R->tree.levels > 0 ? R->tree.levels : 1) + 1;
  Frame *stack = profI_alloc(S, cap * sizeof *stack);
  profP_Text text = {S, NULL, 0, 0};
  size_t sp = 0;
  int open = 0, rc = stack ? open_module(R, top, 0, each, o, &text, &open) : oom_tree(S);
  if (rc == PROF_OK && open) stack[sp++] = (Frame){top, 0, R->tree.first[top]};
  while (rc == PROF_OK && sp > 0) {
    Frame *f = &stack[sp - 1];
    if (f->kid < 0) {
      profP_pad(o, (size_t)f->ind);
      profP_put(o, ")\n", 2);
      sp--;
      continue;
    }
    int32_t c = f->kid, j, count;
    if ((rc = run_end(R, f->m, c, &j, &count)) != PROF_OK) break;
    f->kid = R->tree.next[j];
    int32_t ind = f->ind + 2;
    profP_pad(o, (size_t)ind);
    profP_put(o, "(", 1);
    if ((rc = put_name(R, c, o)) != PROF_OK) break;
    if (j != c) {
      char n[32];
      profP_put(o, "-", 1);
      if ((rc = put_name(R, j, o)) != PROF_OK) break;
      snprintf(n, sizeof n, "): %d x ", (int)count);
      profP_puts(o, n);
    } else {
      profP_put(o, "): ", 3);
    }
    if ((rc = open_module(R, c, ind, j != c, o, &text, &open)) == PROF_OK && open)
      stack[sp++] = (Frame){c, ind, R->tree.first[c]};
  }
  if (stack) profI_free(S, stack, cap * sizeof *stack);
  profP_text_free(&text);
  return rc;
}

/* {====================== the report ======================} */

int profP_write_deepspeed(prof_State *S, const prof_ReportDoc *doc, const prof_ReportOptions *opts,
                          prof_WriteFn fn, void *ud) {
  profP_Out o = {fn, ud, 0};
  Report R = {S, doc, opts, {0}, PROF_UNKNOWN, PROF_UNKNOWN, doc->summary.peak_flops};
  prof_ReportModule root;
  int rc = profP_tree_build(S, doc, &R.tree);
  if (rc != PROF_OK) return rc;
  int has_root = R.tree.n > 0;
  if (has_root) {
    if ((rc = profP_read(S, doc, 0, &root)) != PROF_OK) goto end;
    R.root_params = root.params;
    R.root_macs = root.macs;
  }
  summary(&R, &o, has_root ? &root : NULL);
  if ((rc = aggregated(&R, &o)) != PROF_OK) goto end;
  if (opts->detailed && has_root) {
    int with_peak = !isnan(R.peak), with_bwd = opts->detailed_backward;
    for (size_t i = 0; i < sizeof DETAIL_HEAD / sizeof *DETAIL_HEAD; i++) {
      profP_puts(&o, DETAIL_HEAD[i]);
      if (i == 3 && with_peak) profP_puts(&o, ", fwd MFU (fwd FLOPS / peak FLOPS)");
      if (i == 3 && with_bwd) profP_puts(&o, ", bwd flops, bwd latency, bwd FLOPS (measured)");
      profP_put(&o, "\n", 1);
    }
    if ((rc = emit_tree(&R, 0, 0, &o)) != PROF_OK) goto end;
  }
  text_line(&o, "------------------------------------------------------------------------------");
  if (o.failed) rc = profI_error(S, PROF_ERRIO, "DeepSpeed report: the write function failed");
end:
  profP_tree_free(&R.tree);
  return rc;
}
