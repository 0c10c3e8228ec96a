/* report_session.c — the snapshot as a report document, and the writers' entry points. */
#include <math.h>
#include <string.h>

#include "saturate.h"
#include "record/recorder.h"
#include "report/report_internal.h"

void prof_runinfo_init(prof_RunInfo *info) {
  memset(info, 0, sizeof *info);
  info->size = sizeof *info;
  info->device = "cpu";
  info->world_size = info->dp_size = info->mp_size = 1;
  info->batch_size = -1;
  info->fwd_latency_s = info->bwd_latency_s = info->step_latency_s = NAN;
  info->iter_latency_s = info->samples_per_s = NAN;
  info->bwd_flops = -1;
}

void prof_report_options_init(prof_ReportOptions *opts) {
  memset(opts, 0, sizeof *opts);
  opts->size = sizeof *opts;
  opts->profile_step = 1;
  opts->module_depth = -1;
  opts->top_modules = 1;
  opts->detailed = 1;
  opts->timed = 1;
}

void prof_report_doc_init(prof_ReportDoc *doc) {
  memset(doc, 0, sizeof *doc);
  doc->size = sizeof *doc;
  prof_ReportSummary *p = &doc->summary;
  p->size = sizeof *p;
  p->world_size = p->dp_size = p->mp_size = p->batch_size = PROF_UNKNOWN;
  p->params = p->params_model = p->fwd_macs = p->fwd_flops = p->fwd_flops_model = PROF_UNKNOWN;
  p->bwd_flops = p->gradient_accumulation_steps = PROF_UNKNOWN;
  p->fwd_latency_s = p->bwd_latency_s = p->step_latency_s = p->iter_latency_s = NAN;
  p->samples_per_s = p->peak_flops = p->peak_bytes_per_s = p->ridge_intensity = NAN;
  p->mfu = p->fwd_mfu = p->iter_mfu = p->recompute_fwd_factor = NAN;
}

int prof_write_report(prof_State *S, prof_ReportFormat format, const prof_ReportDoc *doc,
                      const prof_ReportOptions *opts, prof_WriteFn out, void *out_ud) {
  prof_ReportOptions defaults;
  if (opts == NULL) {
    prof_report_options_init(&defaults);
    opts = &defaults;
  }
  if (out == NULL || doc == NULL) return profI_error(S, PROF_ERRARG, "report: no document or write function");
  if (doc->count > 0 && doc->module == NULL)
    return profI_error(S, PROF_ERRARG, "report: %d modules and no reader", (int)doc->count);
  if (format == PROF_REPORT_JSON) return profP_write_json(S, doc, out, out_ud);
  if (format == PROF_REPORT_DEEPSPEED) return profP_write_deepspeed(S, doc, opts, out, out_ud);
  return profI_error(S, PROF_ERRARG, "report: unknown format %d", (int)format);
}

/* {====================== the snapshot as a document ======================} */

/* The reader's state: the first root's tree in pre-order, and which positions it reads from. */
typedef struct Session {
  prof_State *S;
  prof_ModuleId *order;
  int32_t *pos;                /* id -> position */
  int32_t n;
  size_t cap;                  /* what order and pos were made for */
  int timed;
} Session;

static int read_session(void *ud, int32_t index, prof_ReportModule *m) {
  Session *s = ud;
  prof_ModuleInfo info = {.size = sizeof info};
  if (index < 0 || index >= s->n || prof_module_info(s->S, s->order[index], &info) != PROF_OK) return -1;
  const prof_Counts *f = &info.phase[PROF_PHASE_FORWARD], *b = &info.phase[PROF_PHASE_BACKWARD];
  m->name = info.name;
  m->type = info.type;
  m->parent = info.parent >= 0 ? s->pos[info.parent] : -1;
  m->depth = info.depth;
  m->hidden = info.hidden != 0;
  m->params = info.params_counted;
  m->macs = f->macs;
  m->flops = f->flops;
  m->bytes = prof_sat_add(f->bytes_read, f->bytes_written);
  m->calls = f->calls;
  if (s->timed && f->time_ns > 0) m->fwd_latency_s = (double)f->time_ns / 1e9;
  if (s->timed && b->time_ns > 0) m->bwd_latency_s = (double)b->time_ns / 1e9;
  if (b->calls > 0) m->bwd_flops = b->flops;
  return 0;
}

/* The snapshot's document: its modules, the first root's tree, and its totals in the summary. */
static int session_doc(prof_State *S, const prof_RunInfo *info, int timed, Session *s,
                       prof_ReportDoc *doc) {
  prof_report_doc_init(doc);
  memset(s, 0, sizeof *s);
  s->S = S;
  s->timed = timed;
  int32_t n = prof_module_count(S);
  size_t cap = s->cap = (size_t)(n > 0 ? n : 1);
  s->order = profI_alloc(S, cap * sizeof *s->order);
  s->pos = profI_alloc(S, cap * sizeof *s->pos);
  if (s->order == NULL || s->pos == NULL)
    return profI_error(S, PROF_ERRMEM, "report: out of memory for %d modules", (int)n);
  prof_module_preorder(S, s->order, n);
  for (int32_t i = 0; i < n; i++) s->pos[s->order[i]] = i;
  s->n = n;
  doc->count = n;
  doc->module = read_session;
  doc->ud = s;
  prof_ReportSummary *p = &doc->summary;
  p->device = info->device ? info->device : "cpu";
  p->conventions = prof_conventions_name(S->conv);
  int64_t mp = info->mp_size > 0 ? info->mp_size : 1;
  p->world_size = info->world_size >= 0 ? info->world_size : PROF_UNKNOWN;
  p->dp_size = info->dp_size >= 0 ? info->dp_size : PROF_UNKNOWN;
  p->mp_size = mp;
  p->batch_size = info->batch_size >= 0 ? info->batch_size : PROF_UNKNOWN;
  prof_ModuleInfo root = {.size = sizeof root};
  int has_root = n > 0 && prof_module_info(S, s->order[0], &root) == PROF_OK;
  const profT_Acc *fwd = &S->snap.totals[PROF_PHASE_FORWARD], *bwd = &S->snap.totals[PROF_PHASE_BACKWARD];
  p->params = has_root ? root.params_counted : 0;
  p->fwd_macs = has_root ? root.phase[PROF_PHASE_FORWARD].macs : fwd->macs;
  p->fwd_flops = has_root ? root.phase[PROF_PHASE_FORWARD].flops : fwd->flops;
  p->params_model = prof_sat_mul(p->params, mp);
  p->fwd_flops_model = prof_sat_mul(p->fwd_flops, mp);
  p->bwd_flops = info->bwd_flops >= 0 ? info->bwd_flops : bwd->calls > 0 ? bwd->flops : PROF_UNKNOWN;
  p->fwd_latency_s = info->fwd_latency_s;
  p->bwd_latency_s = info->bwd_latency_s;
  p->step_latency_s = info->step_latency_s;
  p->iter_latency_s = info->iter_latency_s;
  p->samples_per_s = info->samples_per_s;
  /* only when it happened: some count stopped at INT64_MAX, so the numbers are lower bounds */
  p->saturated = S->snap.saturated || prof_is_saturated(p->params_model) ||
                 prof_is_saturated(p->fwd_flops_model);
  return PROF_OK;
}

static void session_free(Session *s) {
  size_t cap = s->cap;
  if (s->order) profI_free(s->S, s->order, cap * sizeof *s->order);
  if (s->pos) profI_free(s->S, s->pos, cap * sizeof *s->pos);
}

int prof_write_profile_json(prof_State *S, const prof_RunInfo *info, prof_WriteFn fn, void *ud) {
  prof_RunInfo defaults;
  if (info == NULL) {
    prof_runinfo_init(&defaults);
    info = &defaults;
  }
  if (fn == NULL) return profI_error(S, PROF_ERRARG, "prof_write_profile_json: no write function");
  int timed = info->device == NULL || strcmp(info->device, "meta") != 0;
  Session s;
  prof_ReportDoc doc;
  int rc = session_doc(S, info, timed, &s, &doc);
  if (rc == PROF_OK) rc = profP_write_json(S, &doc, fn, ud);
  session_free(&s);
  return rc;
}

int prof_write_deepspeed_report(prof_State *S, const prof_ReportOptions *opts, prof_WriteFn fn,
                                void *ud) {
  prof_ReportOptions defaults;
  if (opts == NULL) {
    prof_report_options_init(&defaults);
    opts = &defaults;
  }
  if (fn == NULL) return profI_error(S, PROF_ERRARG, "DeepSpeed report: no write function");
  if (prof_module_count(S) == 0) return profI_error(S, PROF_ERRSTATE, "DeepSpeed report: no module registered");
  prof_RunInfo info;
  prof_runinfo_init(&info);
  Session s;
  prof_ReportDoc doc;
  int rc = session_doc(S, &info, opts->timed, &s, &doc);
  /* the text of a flops profile without an engine: the summary's counts are the root's */
  doc.summary.params = doc.summary.params_model = doc.summary.fwd_macs = PROF_UNKNOWN;
  doc.summary.fwd_flops = doc.summary.fwd_flops_model = doc.summary.bwd_flops = PROF_UNKNOWN;
  doc.summary.saturated = prof_counts_saturated(S);
  if (rc == PROF_OK) rc = profP_write_deepspeed(S, &doc, opts, fn, ud);
  session_free(&s);
  return rc;
}
