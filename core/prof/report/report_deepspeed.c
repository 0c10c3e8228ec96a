/* report_deepspeed.c — DeepSpeed's print_model_profile text from the snapshot, for hosts without Lua. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof_internal.h"

/*
** The same text as scripts/reports/deepspeed.lua renders for a profile without an engine (the
** flops profiler around a forward): summary, aggregated profile per depth, detailed tree.
** spec/host_examples_spec.lua checks the two byte for byte on examples/host_lua's recording.
** Numbers follow DeepSpeed's formatters: Python's round(x, 2) (printf's exact half-even
** rounding read back as a double), then "%g".
*/

#define PRECISION 2

/* One module as the report reads it; durations are NAN when unknown (not timed). */
typedef struct Row {
  const char *name, *type;
  int32_t parent, first_child, next_sibling, last_child;
  int hidden;
  int64_t params, macs, flops;
  double latency;              /* own fwd latency in s, NAN when not measured */
  double duration;             /* DeepSpeed's get_module_duration */
} Row;

typedef struct Out {
  prof_WriteFn fn;
  void *ud;
  int failed;
} Out;

static void put(Out *o, const char *s, size_t len) {
  if (!o->failed && len > 0 && o->fn(o->ud, s, len) != 0) o->failed = 1;
}

static void puts_(Out *o, const char *s) { put(o, s, strlen(s)); }

static void pad(Out *o, size_t n) {
  static const char spaces[] = "                                                                ";
  while (n > 0) {
    size_t k = n < sizeof spaces - 1 ? n : sizeof spaces - 1;
    put(o, spaces, k);
    n -= k;
  }
}

/* Python's round(x, 2) on a float. */
static double py_round(double x) {
  char buf[512];
  if (!isfinite(x)) return x;
  snprintf(buf, sizeof buf, "%.*f", PRECISION, x);
  double r = strtod(buf, NULL);
  if (r == 0 && buf[0] == '-') r = -0.0;
  return r;
}

/* DeepSpeed's number_to_string(num) + suffix into buf; "n/a" for NAN. */
static const char *number(double num, const char *suffix, char *buf, size_t size) {
  if (isnan(num)) return snprintf(buf, size, "n/a"), buf;
  double mag;
  const char *unit;
  if (num >= 1e12) mag = 1e12, unit = "T";
  else if (num >= 1e9) mag = 1e9, unit = "G";
  else if (num >= 1e6) mag = 1e6, unit = "M";
  else if (num >= 1e3) mag = 1e3, unit = "K";
  else if (num >= 1 || num == 0) mag = 1, unit = "";
  else if (num >= 1e-3) mag = 1e-3, unit = "m";
  else mag = 1e-6, unit = "u";
  snprintf(buf, size, "%g %s%s", py_round(num / mag), unit, suffix);
  return buf;
}

/* params_to_string: "B" for billions, no trailing space. */
static const char *params_str(int64_t params, char *buf, size_t size) {
  number((double)params, "", buf, size);
  for (char *p = buf; *p; p++)
    if (*p == 'G') *p = 'B';
  size_t n = strlen(buf);
  while (n > 0 && buf[n - 1] == ' ') buf[--n] = '\0';
  return buf;
}

/* DeepSpeed's percentage: round(100 * x / total, 2) as %g; "0" when total is 0 or unknown. */
static const char *pct(double x, double total, char *buf, size_t size) {
  if (isnan(x)) snprintf(buf, size, "n/a");
  else if (isnan(total) || total == 0) snprintf(buf, size, "0");
  else snprintf(buf, size, "%g", py_round(100 * x / total));
  return buf;
}

static const char *pct_int(int64_t x, int64_t total, char *buf, size_t size) {
  /* 100 * x in integers, as Lua computes it, unless that would wrap (a saturated count) */
  double scaled = (x > INT64_MAX / 100 || x < -(INT64_MAX / 100)) ? 100.0 * (double)x
                                                                  : (double)(100 * x);
  if (total == 0) return snprintf(buf, size, "0"), buf;
  snprintf(buf, size, "%g", py_round(scaled / (double)total));
  return buf;
}

/* work / latency as FLOPS: "n/a" when unknown, "0 FLOPS" at zero latency. */
static const char *rate(double work, double latency, char *buf, size_t size) {
  if (isnan(work) || isnan(latency)) return snprintf(buf, size, "n/a"), buf;
  if (latency == 0) return number(0, "FLOPS", buf, size);
  return number(work / latency, "FLOPS", buf, size);
}

/* DeepSpeed's line_fmt '{:<70}  {:<8}'. */
static void line(Out *o, const char *label, const char *value) {
  size_t l = strlen(label), v = strlen(value);
  puts_(o, label);
  pad(o, l < 70 ? 70 - l : 0);
  put(o, "  ", 2);
  puts_(o, value);
  pad(o, v < 8 ? 8 - v : 0);
  put(o, "\n", 1);
}

/* nil-aware sum: NAN is "unknown" and does not poison a known value. */
static double add(double a, double b) {
  if (isnan(a)) return b;
  if (isnan(b)) return a;
  return a + b;
}

/* Python's repr of a str, for the aggregated dicts. */
static void pyrepr(Out *o, const char *s) {
  char q = (strchr(s, '\'') && !strchr(s, '"')) ? '"' : '\'';
  put(o, &q, 1);
  for (const char *p = s; *p; p++) {
    char buf[8];
    unsigned char c = (unsigned char)*p;
    if (c == '\\' || c == (unsigned char)q) snprintf(buf, sizeof buf, "\\%c", c);
    else if (c == '\n') snprintf(buf, sizeof buf, "\\n");
    else if (c == '\r') snprintf(buf, sizeof buf, "\\r");
    else if (c == '\t') snprintf(buf, sizeof buf, "\\t");
    else if (c < 0x20 || c == 0x7f) snprintf(buf, sizeof buf, "\\x%02x", c);
    else buf[0] = (char)c, buf[1] = '\0';
    puts_(o, buf);
  }
  put(o, &q, 1);
}

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

void prof_report_options_init(prof_ReportOptions *opts) {
  memset(opts, 0, sizeof *opts);
  opts->size = sizeof *opts;
  opts->profile_step = 1;
  opts->module_depth = -1;
  opts->top_modules = 1;
  opts->detailed = 1;
  opts->timed = 1;
}

typedef struct Report {
  Out *o;
  Row *rows;
  int32_t n;
} Report;

/* The shown children of k in order: a hidden child gives way to its own shown children. The
   walk calls fn for each; the explicit stack keeps deep trees off the C stack. */
static int32_t next_shown(const Report *R, int32_t *stack, int32_t *top) {
  while (*top > 0) {
    int32_t c = stack[--*top];
    if (c < 0) continue;
    if (R->rows[c].next_sibling >= 0) stack[(*top)++] = R->rows[c].next_sibling;
    if (!R->rows[c].hidden) return c;
    if (R->rows[c].first_child >= 0) stack[(*top)++] = R->rows[c].first_child;
  }
  return -1;
}

static void summary(Report *R, const prof_ReportOptions *opts, int saturated) {
  Out *o = R->o;
  char buf[128], val[128];
  const Row *root = &R->rows[0];
  puts_(o, "\n-------------------------- DeepSpeed Flops Profiler --------------------------\n");
  snprintf(buf, sizeof buf, "Profile Summary at step %lld:\n", (long long)opts->profile_step);
  puts_(o, buf);
  for (size_t i = 0; i < sizeof NOTATIONS / sizeof *NOTATIONS; i++) {
    puts_(o, NOTATIONS[i]);
    put(o, "\n", 1);
  }
  if (saturated)
    puts_(o, "Warning: some counts passed 2^63 - 1 and stopped there (saturated); they are lower bounds\n");
  line(o, "params per GPU: ", params_str(root->params, val, sizeof val));
  line(o, "params of model = params per GPU * mp_size: ", params_str(root->params, val, sizeof val));
  line(o, "fwd MACs per GPU: ", number((double)root->macs, "MACs", val, sizeof val));
  line(o, "fwd flops per GPU: ", number((double)root->flops, "", val, sizeof val));
  line(o, "fwd flops of model = fwd flops per GPU * mp_size: ",
       number((double)root->flops, "", val, sizeof val));
  double fwd = isnan(root->latency) ? root->duration : root->latency;
  line(o, "fwd latency: ", number(fwd, "s", val, sizeof val));
  line(o, "fwd FLOPS per GPU = fwd flops per GPU / fwd latency: ",
       rate((double)root->flops, fwd, val, sizeof val));
}

/* One aggregated entry: a type at a depth, summed. */
typedef struct Agg {
  const char *type;
  int32_t depth;
  int32_t next;                /* the next entry at the same depth, -1 at the end */
  double params, macs, latency;   /* params and macs summed as doubles: read back exactly below 2^53 */
} Agg;

static int by_field(const Agg *a, const Agg *b, int field) {
  double x = field == 0 ? a->params : field == 1 ? a->macs : a->latency;
  double y = field == 0 ? b->params : field == 1 ? b->macs : b->latency;
  if (!isnan(x) && !isnan(y) && x != y) return x > y;
  if (isnan(x) != isnan(y)) return !isnan(x);
  return 0;
}

static void dict(Out *o, Agg *level, int32_t count, int field, int64_t k, int32_t *order) {
  char val[128];
  for (int32_t i = 0; i < count; i++) order[i] = i;
  /* stable insertion sort (Python's sorted(reverse=True) keeps ties in order) */
  for (int32_t i = 1; i < count; i++) {
    int32_t v = order[i], j = i;
    while (j > 0 && by_field(&level[v], &level[order[j - 1]], field)) order[j] = order[j - 1], j--;
    order[j] = v;
  }
  put(o, "{", 1);
  for (int32_t i = 0; i < count && i < k; i++) {
    const Agg *e = &level[order[i]];
    if (i > 0) put(o, ", ", 2);
    pyrepr(o, e->type);
    put(o, ": ", 2);
    const char *s = field == 0   ? params_str((int64_t)e->params, val, sizeof val)
                    : field == 1 ? number(e->macs, "MACs", val, sizeof val)
                                 : number(e->latency, "s", val, sizeof val);
    pyrepr(o, s);
  }
  put(o, "}\n", 2);
}

static int aggregated(prof_State *S, Report *R, const prof_ReportOptions *opts) {
  Out *o = R->o;
  char buf[160];
  int rc = PROF_OK;
  int32_t n = R->n, na = 0, maxdepth = 0;
  Agg *agg = profI_alloc(S, (size_t)n * sizeof *agg);
  int32_t *depth = profI_alloc(S, (size_t)n * sizeof *depth);
  /* the walk's entries and, above them, the scratch that lists one module's shown children:
     n of each at most */
  int32_t *stack = profI_alloc(S, (size_t)(2 * n + 2) * sizeof *stack);
  int32_t *order = profI_alloc(S, (size_t)n * sizeof *order);
  int32_t *head = profI_alloc(S, (size_t)n * sizeof *head);   /* per depth: first and last entry */
  int32_t *tail = profI_alloc(S, (size_t)n * sizeof *tail);
  if (!agg || !depth || !stack || !order || !head || !tail) {
    rc = profI_error(S, PROF_ERRMEM, "out of memory writing the DeepSpeed report");
    goto end;
  }
  puts_(o, "\n----------------------------- Aggregated Profile per GPU -----------------------------\n");
  snprintf(buf, sizeof buf, "Top %lld modules in terms of params, MACs or fwd latency at different "
           "model depths:\n", (long long)opts->top_modules);
  puts_(o, buf);
  /* walk the shown tree in pre-order (DeepSpeed's walk_module): entries per (depth, type) in
     first-encounter order */
  for (int32_t d = 0; d < n; d++) head[d] = tail[d] = -1;
  int32_t top = 0;
  stack[top++] = 0;
  depth[0] = 0;
  for (int32_t k; top > 0;) {
    k = stack[--top];
    int32_t d = depth[k];
    if (d + 1 > maxdepth) maxdepth = d + 1;
    /* entries of one depth form a list in first-encounter order: a lookup reads only its depth's */
    int32_t e = head[d];
    while (e >= 0 && strcmp(agg[e].type, R->rows[k].type) != 0) e = agg[e].next;
    if (e < 0) {
      e = na++;
      agg[e] = (Agg){R->rows[k].type, d, -1, NAN, NAN, NAN};
      if (tail[d] >= 0) agg[tail[d]].next = e;
      else head[d] = e;
      tail[d] = e;
    }
    agg[e].params = add(agg[e].params, (double)R->rows[k].params);
    agg[e].macs = add(agg[e].macs, (double)R->rows[k].macs);
    agg[e].latency = add(agg[e].latency, R->rows[k].duration);
    /* the shown children, pushed in reverse so the first is walked first */
    int32_t first = top, ctop = 0;
    int32_t *kids = order, nk = 0;
    if (R->rows[k].first_child >= 0) {
      int32_t *cs = stack + first;   /* scratch above the walk's own entries */
      cs[ctop++] = R->rows[k].first_child;
      for (int32_t c; (c = next_shown(R, cs, &ctop)) >= 0;) kids[nk++] = c;
    }
    for (int32_t i = nk - 1; i >= 0; i--) {
      depth[kids[i]] = d + 1;
      stack[top++] = kids[i];
    }
  }
  int64_t want = opts->module_depth;
  if (want < 0 || want > maxdepth) want = maxdepth;
  int64_t k = opts->top_modules < 0 ? 0 : opts->top_modules;
  Agg *level = profI_alloc(S, (size_t)(na > 0 ? na : 1) * sizeof *level);
  if (level == NULL) {
    rc = profI_error(S, PROF_ERRMEM, "out of memory writing the DeepSpeed report");
    goto end;
  }
  for (int32_t d = 0; d < want; d++) {
    int32_t count = 0;
    for (int32_t e = head[d]; e >= 0; e = agg[e].next) level[count++] = agg[e];
    snprintf(buf, sizeof buf, "depth %d:\n", d);
    puts_(o, buf);
    const char *label[3] = {"    params      - ", "    MACs        - ", "    fwd latency - "};
    for (int f = 0; f < 3; f++) {
      puts_(o, label[f]);
      dict(o, level, count, f, k, order);
    }
  }
  profI_free(S, level, (size_t)(na > 0 ? na : 1) * sizeof *level);
end:
  profI_free(S, agg, (size_t)n * sizeof *agg);
  profI_free(S, depth, (size_t)n * sizeof *depth);
  profI_free(S, stack, (size_t)(2 * n + 2) * sizeof *stack);
  profI_free(S, order, (size_t)n * sizeof *order);
  profI_free(S, head, (size_t)n * sizeof *head);
  profI_free(S, tail, (size_t)n * sizeof *tail);
  return rc;
}

/* One module's text in the tree: DeepSpeed's flops_repr. */
static void flops_repr(Out *o, const Row *m, const Row *root) {
  char a[128], b[64];
  params_str(m->params, a, sizeof a);
  puts_(o, a);
  puts_(o, " = ");
  puts_(o, pct_int(m->params, root->params, b, sizeof b));
  puts_(o, "% Params, ");
  puts_(o, number((double)m->macs, "MACs", a, sizeof a));
  puts_(o, " = ");
  puts_(o, pct_int(m->macs, root->macs, b, sizeof b));
  puts_(o, "% MACs, ");
  if (isnan(m->duration)) {
    puts_(o, "n/a latency, n/a FLOPS");
    return;
  }
  puts_(o, number(m->duration, "s", a, sizeof a));
  puts_(o, " = ");
  puts_(o, pct(m->duration, root->duration, b, sizeof b));
  puts_(o, "% latency, ");
  if (m->duration == 0) puts_(o, number(0, "FLOPS", a, sizeof a));
  else puts_(o, number(py_round((double)m->flops / m->duration), "FLOPS", a, sizeof a));
}

/* PyTorch's Module.__repr__ over the shown tree (no folding of repeated children: C hosts have no
   ModuleList), iteratively: an entry is a module to open or (negative) a closing parenthesis. */
static int detailed(prof_State *S, Report *R) {
  Out *o = R->o;
  int32_t n = R->n;
  int32_t *stack = profI_alloc(S, (size_t)(2 * n + 2) * sizeof *stack);
  int32_t *ind = profI_alloc(S, (size_t)n * sizeof *ind);
  int32_t *scratch = profI_alloc(S, (size_t)(n + 1) * sizeof *scratch);
  int32_t *kids = profI_alloc(S, (size_t)(n + 1) * sizeof *kids);
  int rc = PROF_OK;
  if (!stack || !ind || !scratch || !kids) {
    rc = profI_error(S, PROF_ERRMEM, "out of memory writing the DeepSpeed report");
    goto end;
  }
  for (size_t i = 0; i < sizeof DETAIL_HEAD / sizeof *DETAIL_HEAD; i++) {
    puts_(o, DETAIL_HEAD[i]);
    put(o, "\n", 1);
  }
  int32_t top = 0;
  stack[top++] = 0;
  ind[0] = 0;
  for (int first = 1; top > 0; first = 0) {
    int32_t e = stack[--top];
    if (e < 0) {                      /* close module -e - 1 */
      pad(o, (size_t)ind[-e - 1]);
      put(o, ")\n", 2);
      continue;
    }
    const Row *m = &R->rows[e];
    if (!first) {
      pad(o, (size_t)ind[e]);
      put(o, "(", 1);
      puts_(o, m->name);
      put(o, "): ", 3);
    }
    int32_t nk = 0, ctop = 0;
    if (m->first_child >= 0) {
      scratch[ctop++] = m->first_child;
      for (int32_t c; (c = next_shown(R, scratch, &ctop)) >= 0;) kids[nk++] = c;
    }
    puts_(o, m->type);
    put(o, "(", 1);
    if (nk == 0) {
      flops_repr(o, m, &R->rows[0]);
      put(o, ")\n", 2);
      continue;
    }
    put(o, "\n", 1);
    pad(o, (size_t)ind[e] + 2);
    flops_repr(o, m, &R->rows[0]);
    put(o, "\n", 1);
    stack[top++] = -e - 1;
    for (int32_t i = nk - 1; i >= 0; i--) {
      ind[kids[i]] = ind[e] + 2;
      stack[top++] = kids[i];
    }
  }
end:
  profI_free(S, stack, (size_t)(2 * n + 2) * sizeof *stack);
  profI_free(S, ind, (size_t)n * sizeof *ind);
  profI_free(S, scratch, (size_t)(n + 1) * sizeof *scratch);
  profI_free(S, kids, (size_t)(n + 1) * sizeof *kids);
  return rc;
}

/* Rows in pre-order (index 0 the first root; only its tree is reported, as the Lua report does),
   with children linked and durations computed from the leaves up. */
static int load_rows(prof_State *S, const prof_ReportOptions *opts, Row *rows, int32_t *pos,
                     int32_t n) {
  int32_t *order = pos + n;   /* second half of pos: pre-order ids */
  prof_module_preorder(S, order, n);
  for (int32_t i = 0; i < n; i++) pos[order[i]] = i;
  for (int32_t i = 0; i < n; i++) {
    prof_ModuleInfo info = {.size = sizeof info};
    if (prof_module_info(S, order[i], &info) != PROF_OK) return PROF_ERRARG;
    const prof_Counts *f = &info.phase[PROF_PHASE_FORWARD];
    Row *r = &rows[i];
    *r = (Row){info.name, info.type, info.parent >= 0 ? pos[info.parent] : -1, -1, -1, -1,
               info.hidden, info.params_counted, f->macs, f->flops,
               opts->timed && f->time_ns > 0 ? (double)f->time_ns / 1e9 : NAN, NAN};
    if (r->parent >= 0) {
      Row *p = &rows[r->parent];
      if (p->last_child >= 0) rows[p->last_child].next_sibling = i;
      else p->first_child = i;
      p->last_child = i;
    }
  }
  /* get_module_duration: own latency, or when that is unknown or 0 the sum over every child */
  for (int32_t i = n - 1; i >= 0; i--) {
    Row *r = &rows[i];
    double v = r->latency;
    if ((isnan(v) || v == 0) && r->first_child >= 0) {
      double sum = NAN;
      for (int32_t c = r->first_child; c >= 0; c = rows[c].next_sibling) sum = add(sum, rows[c].duration);
      if (!isnan(sum)) v = add(v, sum);
    }
    r->duration = v;
  }
  return PROF_OK;
}

int prof_write_deepspeed_report(prof_State *S, const prof_ReportOptions *opts, prof_WriteFn fn,
                                void *ud) {
  prof_ReportOptions defaults;
  if (opts == NULL) {
    prof_report_options_init(&defaults);
    opts = &defaults;
  }
  if (fn == NULL) return profI_error(S, PROF_ERRARG, "DeepSpeed report: no write function");
  int32_t n = prof_module_count(S);
  /* the whole tree of a root: only the first root's modules come first in pre-order */
  Out o = {fn, ud, 0};
  Report R = {&o, NULL, 0};
  Row *rows = NULL;
  int32_t *pos = NULL;
  int rc = PROF_OK;
  if (n > 0) {
    rows = profI_alloc(S, (size_t)n * sizeof *rows);
    pos = profI_alloc(S, 2 * (size_t)n * sizeof *pos);
    if (rows == NULL || pos == NULL) {
      rc = profI_error(S, PROF_ERRMEM, "out of memory writing the DeepSpeed report (%d modules)", (int)n);
      goto end;
    }
    if ((rc = load_rows(S, opts, rows, pos, n)) != PROF_OK) {
      rc = profI_error(S, rc, "DeepSpeed report: the snapshot changed while it was read");
      goto end;
    }
  } else {
    rc = profI_error(S, PROF_ERRSTATE, "DeepSpeed report: no module registered");
    goto end;
  }
  R.rows = rows;
  R.n = n;
  summary(&R, opts, prof_counts_saturated(S));
  if ((rc = aggregated(S, &R, opts)) != PROF_OK) goto end;
  if (opts->detailed && (rc = detailed(S, &R)) != PROF_OK) goto end;
  puts_(&o, "------------------------------------------------------------------------------\n");
  if (o.failed) rc = profI_error(S, PROF_ERRIO, "DeepSpeed report: the write function failed");
end:
  if (rows) profI_free(S, rows, (size_t)n * sizeof *rows);
  if (pos) profI_free(S, pos, 2 * (size_t)n * sizeof *pos);
  return rc;
}
