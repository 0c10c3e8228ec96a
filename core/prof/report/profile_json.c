/* profile_json.c — the "profrun.profile/1" JSON document for hosts that embed the core without Lua. */
#include <math.h>
#include <string.h>

#include "saturate.h"
#include "record/recorder.h"

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

static void key_int_or_null(profW_Writer *w, const char *key, int64_t v) {
  profW_key(w, key);
  if (v < 0) profW_null(w);
  else profW_int(w, v);
}

static void key_seconds(profW_Writer *w, const char *key, int measured, int64_t ns) {
  profW_key(w, key);
  if (measured) profW_double(w, (double)ns / 1e9);
  else profW_null(w);
}

static void write_modules(prof_State *S, profW_Writer *w, int32_t *order, int32_t *json_id,
                          int32_t n, int timed) {
  int32_t next = 0;
  profW_key(w, "modules");
  profW_begin_array(w);
  for (int32_t i = 0; i < n; i++) {
    int32_t k = order[i];
    json_id[k] = -1;
    prof_ModuleInfo info = {.size = sizeof info};
    prof_module_info(S, k, &info);
    if (info.hidden) continue;
    json_id[k] = next++;
    int32_t parent = info.parent;
    while (parent >= 0 && json_id[parent] < 0) parent = profT_node(S, parent)->parent;
    char path[1024];
    prof_module_path(S, k, path, sizeof path);
    const prof_Counts *f = &info.phase[PROF_PHASE_FORWARD], *b = &info.phase[PROF_PHASE_BACKWARD];
    profW_begin_object(w);
    profW_key(w, "id");
    profW_int(w, json_id[k]);
    profW_key(w, "parent");
    if (parent >= 0) profW_int(w, json_id[parent]);
    else profW_null(w);
    profW_key(w, "name");
    profW_string(w, path);
    profW_key(w, "type");
    profW_string(w, info.type);
    profW_key(w, "depth");
    profW_int(w, info.depth);
    profW_key(w, "params");
    profW_int(w, info.params_counted);
    profW_key(w, "macs");
    profW_int(w, f->macs);
    profW_key(w, "flops");
    profW_int(w, f->flops);
    profW_key(w, "bytes");
    profW_int(w, f->bytes_read + f->bytes_written);
    key_seconds(w, "fwd_latency_s", timed && f->time_ns > 0, f->time_ns);
    key_seconds(w, "bwd_latency_s", timed && b->time_ns > 0, b->time_ns);
    profW_key(w, "calls");
    profW_int(w, f->calls);
    profW_end_object(w);
  }
  profW_end_array(w);
}

int prof_write_profile_json(prof_State *S, const prof_RunInfo *info, prof_WriteFn fn, void *ud) {
  int rc = PROF_OK;
  int32_t n = profT_count(S);
  size_t bytes = sizeof(int32_t) * (size_t)(n > 0 ? n : 1);
  int32_t *order = profI_alloc(S, bytes);
  int32_t *json_id = profI_alloc(S, bytes);
  if (order == NULL || json_id == NULL) {
    rc = profI_error(S, PROF_ERRMEM, "prof_write_profile_json: out of memory");
    goto end;
  }
  prof_module_preorder(S, order, n);
  int timed = info->device == NULL || strcmp(info->device, "meta") != 0;
  int64_t mp = info->mp_size > 0 ? info->mp_size : 1;
  prof_ModuleInfo root = {.size = sizeof root};
  int has_root = prof_module_info(S, S->first_root, &root) == PROF_OK;
  const profT_Acc *fwd_tot = &S->snap.totals[PROF_PHASE_FORWARD];
  const profT_Acc *bwd_tot = &S->snap.totals[PROF_PHASE_BACKWARD];
  int64_t params = has_root ? root.params_counted : 0;
  int64_t macs = has_root ? root.phase[PROF_PHASE_FORWARD].macs : fwd_tot->macs;
  int64_t flops = has_root ? root.phase[PROF_PHASE_FORWARD].flops : fwd_tot->flops;
  int64_t bwd = info->bwd_flops;
  if (bwd < 0 && bwd_tot->calls > 0) bwd = bwd_tot->flops;

  profW_Writer w;
  profW_init(&w, fn, ud, 1);
  profW_begin_object(&w);
  profW_key(&w, "schema");
  profW_string(&w, "profrun.profile/1");
  profW_key(&w, "device");
  profW_string(&w, info->device ? info->device : "cpu");
  profW_key(&w, "conventions");
  profW_string(&w, prof_conventions_name(S->conv));
  key_int_or_null(&w, "world_size", info->world_size);
  key_int_or_null(&w, "dp_size", info->dp_size);
  key_int_or_null(&w, "mp_size", mp);
  key_int_or_null(&w, "batch_size", info->batch_size);
  key_int_or_null(&w, "params", params);
  key_int_or_null(&w, "params_model", prof_sat_mul(params, mp));
  key_int_or_null(&w, "fwd_macs", macs);
  key_int_or_null(&w, "fwd_flops", flops);
  key_int_or_null(&w, "fwd_flops_model", prof_sat_mul(flops, mp));
  key_int_or_null(&w, "bwd_flops", bwd);
  const char *lat_keys[] = {"fwd_latency_s", "bwd_latency_s", "step_latency_s", "iter_latency_s",
                            "samples_per_s"};
  double lat[] = {info->fwd_latency_s, info->bwd_latency_s, info->step_latency_s,
                  info->iter_latency_s, info->samples_per_s};
  for (int i = 0; i < 5; i++) {
    profW_key(&w, lat_keys[i]);
    profW_double(&w, lat[i]);
  }
  /* only when it happened: some count stopped at INT64_MAX, so the numbers are lower bounds */
  if (S->snap.saturated || prof_is_saturated(prof_sat_mul(params, mp)) ||
      prof_is_saturated(prof_sat_mul(flops, mp))) {
    profW_key(&w, "saturated");
    profW_bool(&w, 1);
  }
  write_modules(S, &w, order, json_id, n, timed);
  profW_end_object(&w);
  if (!w.failed && fn(ud, "\n", 1) != 0) w.failed = 1;
  if (w.failed) rc = profI_error(S, PROF_ERRIO, "prof_write_profile_json: the writer failed");
end:
  profI_free(S, order, bytes);
  profI_free(S, json_id, bytes);
  return rc;
}
