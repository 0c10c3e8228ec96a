/* profile_json.c — the "profrun.profile/1" JSON document of a report document, written as its modules are read. */
#include <math.h>
#include <string.h>

#include "report/report_internal.h"

static void key_int(profW_Writer *w, const char *key, int64_t v) {
  profW_key(w, key);
  if (v == PROF_UNKNOWN) profW_null(w);
  else profW_int(w, v);
}

static void key_str(profW_Writer *w, const char *key, const char *s) {
  profW_key(w, key);
  if (s == NULL) profW_null(w);
  else profW_string(w, s);
}

static void key_num(profW_Writer *w, const char *key, double v) {
  profW_key(w, key);
  profW_double(w, v);            /* NAN: null */
}

/* The summary's keys present only when known. */
static void optional_summary(profW_Writer *w, const prof_ReportSummary *p) {
  if (p->gradient_accumulation_steps != PROF_UNKNOWN)
    key_int(w, "gradient_accumulation_steps", p->gradient_accumulation_steps);
  if (!isnan(p->peak_flops)) key_num(w, "peak_flops", p->peak_flops);
  if (!isnan(p->peak_bytes_per_s)) key_num(w, "peak_bytes_per_s", p->peak_bytes_per_s);
  if (!isnan(p->ridge_intensity)) key_num(w, "ridge_intensity", p->ridge_intensity);
  if (p->peaks_machine != NULL) key_str(w, "peaks_machine", p->peaks_machine);
  if (!isnan(p->mfu)) key_num(w, "mfu", p->mfu);
  if (!isnan(p->fwd_mfu)) key_num(w, "fwd_mfu", p->fwd_mfu);
  if (!isnan(p->iter_mfu)) key_num(w, "iter_mfu", p->iter_mfu);
  if (p->saturated) {
    profW_key(w, "saturated");
    profW_bool(w, 1);
  }
}

static void module_object(profW_Writer *w, const prof_ReportModule *m, int32_t id, int32_t parent,
                          const char *path) {
  profW_begin_object(w);
  key_int(w, "id", id);
  key_int(w, "parent", parent < 0 ? PROF_UNKNOWN : parent);
  key_str(w, "name", path);
  key_str(w, "type", m->type);
  key_int(w, "depth", m->depth < 0 ? PROF_UNKNOWN : m->depth);
  key_int(w, "params", m->params);
  key_int(w, "macs", m->macs);
  key_int(w, "flops", m->flops);
  if (m->bytes != PROF_UNKNOWN) key_int(w, "bytes", m->bytes);
  key_num(w, "fwd_latency_s", m->fwd_latency_s);
  key_num(w, "bwd_latency_s", m->bwd_latency_s);
  key_int(w, "calls", m->calls);
  /* present only when known: the measured backward and the roofline verdict */
  if (m->bwd_flops != PROF_UNKNOWN) key_int(w, "bwd_flops", m->bwd_flops);
  if (m->exact_flops != PROF_UNKNOWN) key_int(w, "exact_flops", m->exact_flops);
  if (!isnan(m->intensity)) key_num(w, "intensity", m->intensity);
  if (!isnan(m->achieved_flops)) key_num(w, "achieved_flops", m->achieved_flops);
  if (!isnan(m->achieved_bytes_per_s)) key_num(w, "achieved_bytes_per_s", m->achieved_bytes_per_s);
  if (!isnan(m->mfu)) key_num(w, "mfu", m->mfu);
  if (m->bound != NULL) key_str(w, "bound", m->bound);
  if (m->bound_expected >= 0) {
    profW_key(w, "bound_expected");
    profW_bool(w, m->bound_expected);
  }
  profW_end_object(w);
}

/*
** The modules in one pass. A hidden module is left out and its children take the nearest shown
** ancestor as parent; a module's path is its parent's and its name ("" for the root), kept on a
** stack of the open chain (in pre-order a module's parent is on it).
*/
typedef struct Walk {
  prof_State *S;
  int32_t *json_id;            /* per module: its id in the document, -1 when hidden */
  int32_t *shown_up;           /* per module: its nearest shown ancestor, -1 for none */
  int32_t *chain;              /* the open chain's modules */
  size_t *chain_len;           /* and the length of each one's path in path */
  int32_t depth;
  profP_Text path;
} Walk;

static int write_modules(prof_State *S, const prof_ReportDoc *doc, profW_Writer *w, Walk *k) {
  int32_t n = doc->count, next_id = 0;
  for (int32_t i = 0; i < n; i++) {
    prof_ReportModule m;
    int rc = profP_read(S, doc, i, &m);
    if (rc != PROF_OK) return rc;
    if (i > 0 && m.parent < 0) break;          /* another tree: only module 0's is written */
    int32_t p = m.parent;
    while (k->depth > 0 && k->chain[k->depth - 1] != p) k->depth--;
    size_t base = k->depth > 0 ? k->chain_len[k->depth - 1] : 0;
    k->path.len = base;
    const char *sep = base > 0 ? "." : "";
    if (p >= 0 && (profP_text_write(&k->path, sep, strlen(sep)) != 0 ||
                   profP_text_write(&k->path, m.name, strlen(m.name)) != 0))
      return profI_error(S, PROF_ERRMEM, "profile JSON: out of memory for module %d's path", (int)i);
    if (k->path.data == NULL && profP_text_write(&k->path, "", 0) != 0)
      return profI_error(S, PROF_ERRMEM, "profile JSON: out of memory");
    k->path.data[k->path.len] = '\0';
    k->chain[k->depth] = i;
    k->chain_len[k->depth++] = k->path.len;
    int32_t up = p < 0 ? -1 : k->json_id[p] >= 0 ? p : k->shown_up[p];
    k->shown_up[i] = up;
    k->json_id[i] = -1;
    if (i > 0 && m.hidden) continue;
    k->json_id[i] = next_id++;
    module_object(w, &m, k->json_id[i], up < 0 ? -1 : k->json_id[up],
                  m.path != NULL ? m.path : k->path.data);
  }
  return PROF_OK;
}

int profP_write_json(prof_State *S, const prof_ReportDoc *doc, prof_WriteFn fn, void *ud) {
  const prof_ReportSummary *p = &doc->summary;
  int32_t n = doc->count > 0 ? doc->count : 0;
  size_t cap = (size_t)(n > 0 ? n : 1);
  Walk k = {S, NULL, NULL, NULL, NULL, 0, {S, NULL, 0, 0}};
  k.json_id = profI_alloc(S, cap * sizeof *k.json_id);
  k.shown_up = profI_alloc(S, cap * sizeof *k.shown_up);
  k.chain = profI_alloc(S, cap * sizeof *k.chain);
  k.chain_len = profI_alloc(S, cap * sizeof *k.chain_len);
  int rc = PROF_OK;
  if (!k.json_id || !k.shown_up || !k.chain || !k.chain_len) {
    rc = profI_error(S, PROF_ERRMEM, "profile JSON: out of memory for %d modules", (int)n);
    goto end;
  }
  profW_Writer w;
  profW_init(&w, fn, ud, 1);
  profW_begin_object(&w);
  key_str(&w, "schema", "profrun.profile/1");
  key_str(&w, "device", p->device);
  key_str(&w, "conventions", p->conventions);
  key_int(&w, "world_size", p->world_size);
  key_int(&w, "dp_size", p->dp_size);
  key_int(&w, "mp_size", p->mp_size);
  key_int(&w, "batch_size", p->batch_size);
  key_int(&w, "params", p->params);
  key_int(&w, "params_model", p->params_model);
  key_int(&w, "fwd_macs", p->fwd_macs);
  key_int(&w, "fwd_flops", p->fwd_flops);
  key_int(&w, "fwd_flops_model", p->fwd_flops_model);
  key_int(&w, "bwd_flops", p->bwd_flops);
  key_num(&w, "fwd_latency_s", p->fwd_latency_s);
  key_num(&w, "bwd_latency_s", p->bwd_latency_s);
  key_num(&w, "step_latency_s", p->step_latency_s);
  key_num(&w, "iter_latency_s", p->iter_latency_s);
  key_num(&w, "samples_per_s", p->samples_per_s);
  optional_summary(&w, p);
  profW_key(&w, "modules");
  profW_begin_array(&w);
  if ((rc = write_modules(S, doc, &w, &k)) != PROF_OK) goto end;
  profW_end_array(&w);
  profW_end_object(&w);
  if (!w.failed && fn(ud, "\n", 1) != 0) w.failed = 1;
  if (w.failed) rc = profI_error(S, PROF_ERRIO, "profile JSON: the write function failed");
end:
  if (k.json_id) profI_free(S, k.json_id, cap * sizeof *k.json_id);
  if (k.shown_up) profI_free(S, k.shown_up, cap * sizeof *k.shown_up);
  if (k.chain) profI_free(S, k.chain, cap * sizeof *k.chain);
  if (k.chain_len) profI_free(S, k.chain_len, cap * sizeof *k.chain_len);
  profP_text_free(&k.path);
  return rc;
}
