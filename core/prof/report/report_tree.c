/* report_tree.c — a report document read once into the shown tree the text walks: children lists, depths, durations. */
#include <math.h>
#include <string.h>

#include "report/report_internal.h"

void prof_report_module_init(prof_ReportModule *m) {
  memset(m, 0, sizeof *m);
  m->size = sizeof *m;
  m->name = m->type = "";
  m->parent = -1;
  m->depth = -1;
  m->params = m->macs = m->flops = m->bytes = m->calls = PROF_UNKNOWN;
  m->bwd_flops = m->exact_flops = PROF_UNKNOWN;
  m->fwd_latency_s = m->bwd_latency_s = NAN;
  m->intensity = m->achieved_flops = m->achieved_bytes_per_s = m->mfu = NAN;
  m->bound_expected = -1;
}

int profP_read(prof_State *S, const prof_ReportDoc *doc, int32_t index, prof_ReportModule *m) {
  prof_report_module_init(m);
  if (doc->module(doc->ud, index, m) != 0)
    return profI_error(S, PROF_ERRARG, "report: the document's reader failed at module %d", (int)index);
  if (m->name == NULL) m->name = "";
  /* a module names an earlier one as its parent (pre-order); -1 starts a tree */
  if (m->parent < -1 || m->parent >= index || (index == 0 && m->parent != -1))
    return profI_error(S, PROF_ERRARG,
                       "report: module %d names %d as its parent (modules come in pre-order, "
                       "each after its parent, module 0 the root)",
                       (int)index, (int)m->parent);
  return PROF_OK;
}

void profP_tree_free(profP_Tree *t) {
  size_t n = (size_t)(t->cap > 0 ? t->cap : 1);
  prof_State *S = t->S;
  if (S == NULL) return;
  profI_free(S, t->first, n * sizeof *t->first);
  profI_free(S, t->next, n * sizeof *t->next);
  profI_free(S, t->depth, n * sizeof *t->depth);
  profI_free(S, t->flags, n * sizeof *t->flags);
  profI_free(S, t->duration, n * sizeof *t->duration);
  memset(t, 0, sizeof *t);
}

int profP_tree_build(prof_State *S, const prof_ReportDoc *doc, profP_Tree *t) {
  memset(t, 0, sizeof *t);
  t->S = S;
  t->doc = doc;
  int32_t n = doc->count > 0 ? doc->count : 0;
  size_t cap = (size_t)(n > 0 ? n : 1);
  int rc = PROF_OK;
  /* what only the build needs: raw parents, nearest shown ancestors, the last shown child, the
     children's summed durations and whether a module has children */
  int32_t *parent = profI_alloc(S, cap * sizeof *parent);
  int32_t *shown_up = profI_alloc(S, cap * sizeof *shown_up);
  int32_t *last = profI_alloc(S, cap * sizeof *last);
  double *kids = profI_alloc(S, cap * sizeof *kids);
  t->n = t->cap = n;
  t->first = profI_alloc(S, cap * sizeof *t->first);
  t->next = profI_alloc(S, cap * sizeof *t->next);
  t->depth = profI_alloc(S, cap * sizeof *t->depth);
  t->flags = profI_alloc(S, cap * sizeof *t->flags);
  t->duration = profI_alloc(S, cap * sizeof *t->duration);
  if (!parent || !shown_up || !last || !kids || !t->first || !t->next || !t->depth || !t->flags ||
      !t->duration) {
    rc = profI_error(S, PROF_ERRMEM, "report: out of memory for a tree of %d modules", (int)n);
    goto end;
  }
  for (int32_t i = 0; i < n; i++) {
    prof_ReportModule m;
    if ((rc = profP_read(S, doc, i, &m)) != PROF_OK) goto end;
    if (i > 0 && m.parent < 0) {      /* another tree starts: only module 0's is written */
      t->n = n = i;
      break;
    }
    int32_t p = m.parent;
    parent[i] = p;
    t->first[i] = t->next[i] = last[i] = -1;
    /* the root is shown whatever it says: the report is about its tree */
    t->flags[i] = (uint8_t)((i > 0 && m.hidden ? PROFP_HIDDEN : 0) | (m.fold ? PROFP_FOLD : 0));
    t->duration[i] = m.fwd_latency_s;
    kids[i] = -INFINITY;               /* no child yet (NAN: children, none timed) */
    int32_t up = p < 0 ? -1 : (t->flags[p] & PROFP_HIDDEN) ? shown_up[p] : p;
    shown_up[i] = up;
    if (t->flags[i] & PROFP_HIDDEN) continue;
    t->depth[i] = up < 0 ? 0 : t->depth[up] + 1;
    if (t->depth[i] + 1 > t->levels) t->levels = t->depth[i] + 1;
    if (up >= 0) {
      if (last[up] >= 0) t->next[last[up]] = i;
      else t->first[up] = i;
      last[up] = i;
    }
  }
  /* get_module_duration, from the leaves up: a module's own latency, or, when that is unknown
     or 0 (a container never called), its own plus the sum over its children */
  for (int32_t i = n - 1; i >= 0; i--) {
    double v = t->duration[i];
    int has_kids = kids[i] != -INFINITY;
    if ((isnan(v) || v == 0) && has_kids && !isnan(kids[i])) v = profP_add(v, kids[i]);
    t->duration[i] = v;
    int32_t p = parent[i];
    if (p >= 0) kids[p] = kids[p] == -INFINITY ? v : profP_add(kids[p], v);
  }
end:
  if (parent) profI_free(S, parent, cap * sizeof *parent);
  if (shown_up) profI_free(S, shown_up, cap * sizeof *shown_up);
  if (last) profI_free(S, last, cap * sizeof *last);
  if (kids) profI_free(S, kids, cap * sizeof *kids);
  if (rc != PROF_OK) profP_tree_free(t);
  return rc;
}
