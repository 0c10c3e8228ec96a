/* test_config.c — the config loader: defaults, keys, DeepSpeed files, errors, overrides, OOM. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L  /* mkstemp, fdopen for the temporary files */
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_internal.h"
#include "prof.h"
#include "t.h"

#define FIX "spec/fixtures/configs/"
#define N(a) ((int32_t)(sizeof(a) / sizeof((a)[0])))

/* {====================== a counting, failing allocator ======================} */

/*
** Counts every live block and byte as the library reports them (osize on free), so a leak or a
** size mismatch shows as a non-zero balance; fail_at = k refuses the k-th allocation request.
*/
typedef struct Heap {
  long requests;
  long fail_at;
  long long live_bytes;
  long live_blocks;
} Heap;

static void *heap_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  Heap *h = ud;
  void *p;
  if (nsize == 0) {
    if (ptr != NULL) {
      h->live_bytes -= (long long)osize;
      h->live_blocks--;
      free(ptr);
    }
    return NULL;
  }
  if (h->fail_at > 0 && ++h->requests == h->fail_at) return NULL;
  p = realloc(ptr, nsize);
  if (p == NULL) return NULL;
  h->live_bytes += (long long)nsize - (ptr != NULL ? (long long)osize : 0);
  if (ptr == NULL) h->live_blocks++;
  return p;
}

/* Loads path with overrides into a fresh state; returns the code, *msg gets a copy of the error. */
static int load(const char *path, const char *const *ov, int32_t n, prof_Config **cfg,
                prof_State **S) {
  *S = prof_new(NULL, NULL);
  return prof_config_load(*S, path, ov, n, cfg);
}

static void done(prof_State *S, prof_Config *cfg) {
  prof_config_free(S, cfg);
  prof_close(S);
}

/* Expects load(path, ov) to fail with code and exactly message msg. */
static void expect_error(const char *path, const char *const *ov, int32_t n, int code,
                         const char *msg) {
  prof_State *S;
  prof_Config *cfg = (prof_Config *)&cfg;  /* must come back NULL */
  T_EQ_INT(load(path, ov, n, &cfg, &S), code);
  T_CHECK(cfg == NULL);
  T_EQ_STR(prof_errmsg(S), msg);
  done(S, cfg);
}

static void expect_set_error(const char *override, const char *msg) {
  const char *ov[1] = { override };
  char want[600];
  snprintf(want, sizeof want, "--set %s: %s", override, msg);
  expect_error(NULL, ov, 1, PROF_ERRCONFIG, want);
}

static void expect_keys(char **got, int32_t n, const char *const *want, int32_t nwant) {
  T_EQ_INT(n, nwant);
  for (int32_t i = 0; i < n && i < nwant; i++) T_EQ_STR(got[i], want[i]);
}

static void expect_defaults_flops(const prof_FlopsConfig *f) {
  T_EQ_INT(f->enabled, 0);
  T_NEAR(f->recompute_fwd_factor, 0.0, 0.0);
  T_EQ_INT(f->profile_step, 1);
  T_EQ_INT(f->module_depth, -1);
  T_EQ_INT(f->top_modules, 1);
  T_EQ_INT(f->detailed, 1);
  T_CHECK(f->output_file == NULL);
  T_EQ_INT(f->conventions, PROF_CONV_EXACT);
  T_CHECK(f->format == NULL);
  T_CHECK(f->ignore_modules == NULL);
  T_EQ_INT(f->n_ignore_modules, 0);
  T_CHECK(f->rules == NULL);
  T_EQ_INT(f->n_rules, 0);
}

/* The member key of JSON object v, or NULL. */
static const prof_JsonValue *member(const prof_JsonValue *v, const char *key) {
  if (v == NULL || v->type != PROF_JSON_OBJECT) return NULL;
  for (int32_t i = 0; i < v->n_items; i++)
    if (strcmp(v->items[i].key, key) == 0) return &v->items[i];
  return NULL;
}

/* The value at dotted path inside cfg->deepspeed, or NULL. */
static const prof_JsonValue *ds_at(const prof_Config *cfg, const char *path) {
  char buf[128], *seg, *save = NULL;
  const prof_JsonValue *v = cfg->deepspeed;
  snprintf(buf, sizeof buf, "%s", path);
  for (seg = strtok_r(buf, ".", &save); seg != NULL && v != NULL; seg = strtok_r(NULL, ".", &save))
    v = member(v, seg);
  return v;
}

static void expect_ds_string(const prof_Config *cfg, const char *path, const char *want) {
  const prof_JsonValue *v = ds_at(cfg, path);
  T_CHECK(v != NULL && v->type == PROF_JSON_STRING);
  if (v != NULL && v->type == PROF_JSON_STRING) T_EQ_STR(v->string, want);
}

static void expect_ds_number(const prof_Config *cfg, const char *path, double want) {
  const prof_JsonValue *v = ds_at(cfg, path);
  T_CHECK(v != NULL && v->type == PROF_JSON_NUMBER);
  if (v != NULL) T_NEAR(v->number, want, 0.0);
}

/* The names of cfg->deepspeed's members, in order, against want. */
static void expect_ds_keys(const prof_Config *cfg, const char *const *want, int32_t n) {
  int32_t got = cfg->deepspeed != NULL ? cfg->deepspeed->n_items : 0;
  T_EQ_INT(got, n);
  for (int32_t i = 0; i < got && i < n; i++) T_EQ_STR(cfg->deepspeed->items[i].key, want[i]);
}

/* {====================== valid files ======================} */

static void test_defaults(void) {
  prof_State *S;
  prof_Config *cfg;
  T_EQ_INT(load(NULL, NULL, 0, &cfg, &S), PROF_OK);
  if (cfg == NULL) return;
  expect_defaults_flops(&cfg->flops_profiler);
  T_EQ_INT(cfg->train_batch_size, 0);
  T_EQ_INT(cfg->train_micro_batch_size_per_gpu, 0);
  T_EQ_INT(cfg->gradient_accumulation_steps, 0);
  T_EQ_INT(cfg->wall_clock_breakdown, 0);
  T_CHECK(cfg->device == NULL);
  T_EQ_INT(cfg->model_parallel_size, 1);
  T_CHECK(cfg->report_script == NULL);
  T_EQ_INT(cfg->n_unused_keys, 0);
  T_CHECK(cfg->unused_keys == NULL);
  T_EQ_INT(cfg->n_forced_keys, 0);
  T_CHECK(cfg->forced_keys == NULL);
  T_CHECK(cfg->deepspeed == NULL);
  T_EQ_INT(cfg->size, sizeof *cfg);
  done(S, cfg);
}

static void test_minimal(void) {
  prof_State *S;
  prof_Config *cfg;
  T_EQ_INT(load(FIX "minimal.json", NULL, 0, &cfg, &S), PROF_OK);
  if (cfg == NULL) return;
  T_EQ_INT(cfg->train_micro_batch_size_per_gpu, 8);
  T_EQ_INT(cfg->train_batch_size, 0);
  T_EQ_INT(cfg->gradient_accumulation_steps, 0);
  expect_defaults_flops(&cfg->flops_profiler);
  T_EQ_INT(cfg->n_unused_keys, 0);
  done(S, cfg);
}

static void check_full(const prof_Config *cfg) {
  const prof_FlopsConfig *f = &cfg->flops_profiler;
  static const char *const ignore[] = { "Dropout", "encoder.layer.*" };
  T_EQ_INT(cfg->train_batch_size, 64);
  T_EQ_INT(cfg->train_micro_batch_size_per_gpu, 8);
  T_EQ_INT(cfg->gradient_accumulation_steps, 2);
  T_EQ_INT(cfg->wall_clock_breakdown, 1);
  T_EQ_STR(cfg->device, "meta");
  T_EQ_INT(f->enabled, 1);
  T_NEAR(f->recompute_fwd_factor, 0.5, 0.0);
  T_EQ_INT(f->profile_step, 3);  /* written 3.0: an integral number is an integer */
  T_EQ_INT(f->module_depth, 2);
  T_EQ_INT(f->top_modules, 5);
  T_EQ_INT(f->detailed, 0);
  T_EQ_STR(f->output_file, "out/profile.json");
  T_EQ_INT(f->conventions, PROF_CONV_DEEPSPEED);
  T_EQ_STR(f->format, "reports/table.lua");
  expect_keys(f->ignore_modules, f->n_ignore_modules, ignore, 2);
  T_EQ_INT(f->n_rules, 1);
  if (f->n_rules == 1) T_EQ_STR(f->rules[0], "rules/flash_attn.lua");
  T_EQ_INT(cfg->model_parallel_size, 4);
  T_EQ_STR(cfg->report_script, "reports/summary.lua");
  T_EQ_INT(cfg->n_unused_keys, 0);
}

static void test_full(void) {
  prof_State *S;
  prof_Config *cfg;
  T_EQ_INT(load(FIX "full.json", NULL, 0, &cfg, &S), PROF_OK);
  if (cfg == NULL) return;
  check_full(cfg);
  T_EQ_INT(cfg->n_forced_keys, 0);
  done(S, cfg);
}

static void test_flops_json(void) {
  prof_State *S;
  prof_Config *cfg;
  T_EQ_INT(load("configs/flops.json", NULL, 0, &cfg, &S), PROF_OK);
  if (cfg == NULL) return;
  T_EQ_INT(cfg->flops_profiler.enabled, 1);
  T_EQ_INT(cfg->flops_profiler.detailed, 1);
  T_EQ_INT(cfg->flops_profiler.top_modules, 3);
  T_EQ_INT(cfg->flops_profiler.module_depth, -1);
  T_EQ_INT(cfg->flops_profiler.profile_step, 1);
  T_EQ_INT(cfg->flops_profiler.conventions, PROF_CONV_DEEPSPEED);
  T_CHECK(cfg->flops_profiler.output_file == NULL);
  T_EQ_INT(cfg->train_micro_batch_size_per_gpu, 1);
  T_EQ_INT(cfg->gradient_accumulation_steps, 1);
  done(S, cfg);
}

static void test_deepspeed_zero3(void) {
  static const char *const unused[] = {
    "steps_per_print", "scheduler", "gradient_clipping", "prescale_gradients",
    "fp16", "zero_optimization", "aio", "activation_checkpointing", "tensorboard",
    "comms_logger"
  };
  static const char *const handed[] = {
    "steps_per_print", "optimizer", "scheduler", "gradient_clipping", "prescale_gradients",
    "fp16", "zero_optimization", "aio", "activation_checkpointing", "tensorboard", "comms_logger"
  };
  prof_State *S;
  prof_Config *cfg;
  T_EQ_INT(load(FIX "ds_zero3_fp16.json", NULL, 0, &cfg, &S), PROF_OK);
  if (cfg == NULL) return;
  T_EQ_INT(cfg->train_batch_size, 256);
  T_EQ_INT(cfg->train_micro_batch_size_per_gpu, 8);
  T_EQ_INT(cfg->gradient_accumulation_steps, 4);
  T_EQ_INT(cfg->wall_clock_breakdown, 0);
  T_EQ_INT(cfg->flops_profiler.enabled, 1);
  T_NEAR(cfg->flops_profiler.recompute_fwd_factor, 1.0, 0.0);
  T_EQ_INT(cfg->flops_profiler.module_depth, -1);
  T_EQ_INT(cfg->flops_profiler.top_modules, 1);
  T_EQ_INT(cfg->flops_profiler.detailed, 1);
  T_CHECK(cfg->flops_profiler.output_file == NULL);
  T_CHECK(cfg->device == NULL);
  /* DeepSpeed's sections reach the engine as the file gave them: its policy is in Lua */
  expect_ds_keys(cfg, handed, N(handed));
  expect_ds_string(cfg, "optimizer.type", "AdamW");
  expect_ds_number(cfg, "optimizer.params.lr", 3e-4);
  {
    const prof_JsonValue *betas = ds_at(cfg, "optimizer.params.betas");
    T_CHECK(betas != NULL && betas->type == PROF_JSON_ARRAY && betas->n_items == 2);
    if (betas != NULL && betas->n_items == 2) T_NEAR(betas->items[1].number, 0.95, 0.0);
  }
  expect_ds_number(cfg, "zero_optimization.offload_param.buffer_size", 1e8);
  expect_ds_string(cfg, "zero_optimization.offload_param.nvme_path", "/local_nvme");
  T_CHECK(ds_at(cfg, "fp16.enabled") != NULL && ds_at(cfg, "fp16.enabled")->type == PROF_JSON_TRUE);
  T_CHECK(ds_at(cfg, "activation_checkpointing.number_checkpoints") != NULL &&
          ds_at(cfg, "activation_checkpointing.number_checkpoints")->type == PROF_JSON_NULL);
  expect_keys(cfg->unused_keys, cfg->n_unused_keys, unused, N(unused));
  done(S, cfg);
}

static void test_deepspeed_bf16(void) {
  static const char *const unused[] = {
    "scheduler", "bf16", "data_types", "zero_optimization",
    "communication_data_type", "gradient_clipping", "zero_allow_untested_optimizer",
    "checkpoint", "dataloader_drop_last", "wandb", "csv_monitor", "elasticity", "compile"
  };
  prof_State *S;
  prof_Config *cfg;
  T_EQ_INT(load(FIX "ds_bf16_zero2.json", NULL, 0, &cfg, &S), PROF_OK);
  if (cfg == NULL) return;
  T_EQ_INT(cfg->train_micro_batch_size_per_gpu, 16);
  T_EQ_INT(cfg->gradient_accumulation_steps, 1);
  T_EQ_INT(cfg->train_batch_size, 0);
  T_EQ_INT(cfg->flops_profiler.enabled, 0);
  expect_ds_string(cfg, "optimizer.type", "Adam");
  expect_ds_number(cfg, "optimizer.params.lr", 1e-4);
  T_CHECK(ds_at(cfg, "optimizer.params.torch_adam") != NULL &&
          ds_at(cfg, "optimizer.params.torch_adam")->type == PROF_JSON_TRUE);
  expect_ds_string(cfg, "checkpoint.tag_validation", "Warn");
  T_CHECK(ds_at(cfg, "checkpoint.parallel_write.pipeline_stage") != NULL);
  expect_ds_number(cfg, "elasticity.version", 0.2);   /* unchecked section: passed on */
  T_CHECK(ds_at(cfg, "compile.deepcompile") != NULL &&
          ds_at(cfg, "compile.deepcompile")->type == PROF_JSON_FALSE);
  expect_keys(cfg->unused_keys, cfg->n_unused_keys, unused, N(unused));
  done(S, cfg);
}

/* {====================== the optimizer section ======================} */

/*
** The optimizer section is DeepSpeed's: the core checks its own keys and hands it on as written;
** type names, params and their combinations are lua/prof/deepspeed/optimizer.lua's
** (spec/ds_optimizer_spec.lua).
*/
static void test_optimizer_fixture(void) {
  prof_State *S;
  prof_Config *cfg;
  T_EQ_INT(load(FIX "optimizer_adam.json", NULL, 0, &cfg, &S), PROF_OK);
  if (cfg == NULL) return;
  expect_ds_string(cfg, "optimizer.type", "Adam");
  expect_ds_number(cfg, "optimizer.params.lr", 0.01);
  expect_ds_number(cfg, "optimizer.params.eps", 1e-6);
  expect_ds_number(cfg, "optimizer.params.weight_decay", 0.1);
  T_CHECK(ds_at(cfg, "optimizer.params.adam_w_mode") == NULL);  /* absent: the engine's default */
  T_EQ_INT(cfg->n_unused_keys, 0);   /* given to the engine: not listed as unused */
  done(S, cfg);
}

/* Loads the defaults with overrides; returns the config (NULL on failure, S still to close). */
static prof_Config *with(prof_State **S, const char *const *ov, int32_t n) {
  prof_Config *cfg = NULL;
  T_EQ_INT(load(NULL, ov, n, &cfg, S), PROF_OK);
  if (cfg == NULL) T_FAIL_("%s", prof_errmsg(*S));
  return cfg;
}

static void test_optimizer_types(void) {
  prof_State *S;
  prof_Config *cfg;
  {
    /* any type reaches the engine, which decides what it builds */
    const char *ov[] = { "optimizer.type=sgd", "optimizer.params.lr=0.5" };
    if ((cfg = with(&S, ov, N(ov))) != NULL) {
      expect_ds_string(cfg, "optimizer.type", "sgd");
      expect_ds_number(cfg, "optimizer.params.lr", 0.5);
    }
    done(S, cfg);
  }
  {
    /* No type: DeepSpeed builds nothing and never reads params, so neither does profrun. */
    const char *ov[] = { "optimizer={\"params\": {\"momentum\": \"x\"}, \"type\": null}" };
    if ((cfg = with(&S, ov, N(ov))) != NULL) {
      static const char *const unused[] = { "optimizer" };
      T_CHECK(cfg->deepspeed == NULL);
      expect_keys(cfg->unused_keys, cfg->n_unused_keys, unused, N(unused));
    }
    done(S, cfg);
  }
  {
    /* null drops the section (e.g. a file's) */
    const char *ov[] = { "optimizer.type=SGD", "optimizer=null" };
    if ((cfg = with(&S, ov, N(ov))) != NULL) {
      T_CHECK(cfg->deepspeed == NULL);
      T_EQ_INT(cfg->n_unused_keys, 0);
    }
    done(S, cfg);
  }
}

/* What the core still checks in the optimizer section: its keys, its shape, legacy_fusion. */
static void test_optimizer_errors(void) {
  static const char *const cases[][2] = {
    { "optimizer=[]", "optimizer: expected an object, got an array" },
    { "optimizer.typ=Adam", "unknown key \"optimizer.typ\" (did you mean \"type\"?)" },
    { "optimizer.parms={}", "unknown key \"optimizer.parms\" (did you mean \"params\"?)" },
    { "optimizer.legacy_fusion=1",
      "optimizer.legacy_fusion: expected true or false, got number 1" },
    { "optimizer={\"type\": \"Adam\", \"params\": {\"lr\": 1, \"lr\": 2}}",
      "duplicate key \"optimizer.params.lr\"" },
  };
  for (int32_t i = 0; i < N(cases); i++) expect_set_error(cases[i][0], cases[i][1]);
}

static void test_nulls(void) {
  prof_State *S;
  prof_Config *cfg;
  T_EQ_INT(load(FIX "nulls.json", NULL, 0, &cfg, &S), PROF_OK);
  if (cfg == NULL) return;
  T_EQ_INT(cfg->train_batch_size, 0);
  T_CHECK(cfg->device == NULL);
  T_CHECK(cfg->report_script == NULL);
  expect_defaults_flops(&cfg->flops_profiler);
  done(S, cfg);
}

/* A file bigger than the first 4 KiB read buffer, so the buffer has to grow. */
static int write_temp(char *name, const char *head, size_t pad, const char *tail, size_t ntail) {
  FILE *f;
  strcpy(name, "/tmp/profrun_test_config_XXXXXX");
  int fd = mkstemp(name);
  if (fd < 0 || (f = fdopen(fd, "wb")) == NULL) return 0;
  fputs(head, f);
  for (size_t i = 0; i < pad; i++) fputc(i % 64 == 63 ? '\n' : ' ', f);
  fwrite(tail, 1, ntail, f);
  fclose(f);
  return 1;
}

/* Loads text (ntail bytes) from a temporary file and expects "FILE:" + where_what as the error. */
static void expect_text_error(const char *text, size_t ntail, const char *where_what) {
  char name[64], want[600];
  if (!write_temp(name, "", 0, text, ntail)) return;
  snprintf(want, sizeof want, "%s:%s", name, where_what);
  expect_error(name, NULL, 0, PROF_ERRCONFIG, want);
  remove(name);
}

static void test_large_file(void) {
  char name[64];
  prof_State *S;
  prof_Config *cfg;
  if (!write_temp(name, "{\"device\": \"cpu\",", 20000, "\"flops_profiler\": {}}", 21)) {
    T_CHECK(!"cannot write a temporary file");
    return;
  }
  T_EQ_INT(load(name, NULL, 0, &cfg, &S), PROF_OK);
  if (cfg != NULL) T_EQ_STR(cfg->device, "cpu");
  done(S, cfg);
  remove(name);
}

/* {====================== file errors ======================} */

static void test_missing_file(void) {
  expect_error(FIX "no_such.json", NULL, 0, PROF_ERRIO,
               FIX "no_such.json: cannot open: No such file or directory");
  expect_error(FIX, NULL, 0, PROF_ERRIO, FIX ": cannot read: Is a directory");
}

/*
** Line and column are where cJSON stopped, 1-based, columns in bytes; worked out by hand from
** each fixture and cJSON 1.7.15's parser.
*/
static void test_malformed(void) {
  char name[64], want[200];
  /* Line 5 is `    "top_modules": 3`: after "enabled": true the object wants ',' or '}' and
     finds the '"' that opens "top_modules", after 4 spaces: column 5. */
  expect_error(FIX "malformed_missing_comma.json", NULL, 0, PROF_ERRCONFIG,
               FIX "malformed_missing_comma.json:5:5: invalid JSON near '\"top_modules\": 3'");
  /* Line 4 is `    "detailed": false,`: 4 spaces, `"detailed":` (columns 5-15), a space, `false`
     (17-21) and the comma at column 22 that no key follows (cJSON stops past the '}' of line 5).
     Python's json: "Illegal trailing comma before end of object: line 4 column 22". */
  expect_error(FIX "malformed_trailing_comma.json", NULL, 0, PROF_ERRCONFIG,
               FIX "malformed_trailing_comma.json:4:22: invalid JSON: trailing comma before '}' "
               "(JSON allows none)");
  /* In an array cJSON stops at the ']' itself: `{"a": [1, 2,]}` has its comma at column 12. */
  expect_text_error("{\"a\": [1, 2,]}", 14,
                    "1:12: invalid JSON: trailing comma before ']' (JSON allows none)");
  /* In an object cJSON stops just past the '}', which may be the next bracket: in
     `{"f": {"a": 3,}}` the comma is at column 14, and in `[{"a": 1,}]` at column 9 (Python's json
     points at the bracket after it: "line 1 column 15 (char 14)", "line 1 column 10 (char 9)"). */
  expect_text_error("{\"f\": {\"a\": 3,}}", 16,
                    "1:14: invalid JSON: trailing comma before '}' (JSON allows none)");
  expect_text_error("[{\"a\": 1,}]", 11,
                    "1:9: invalid JSON: trailing comma before '}' (JSON allows none)");
  /* A comma followed by another value is fine; a missing value after ':' is not a comma case. */
  expect_text_error("{\"a\": ,}", 8,
                    "1:7: invalid JSON near ',}'");
  /* Three lines, each ending in '\n': the text ends at line 4, column 1. */
  expect_error(FIX "malformed_truncated.json", NULL, 0, PROF_ERRCONFIG,
               FIX "malformed_truncated.json:4:1: invalid JSON at the end of the file");
  /* An empty file ends at 1:1. */
  expect_text_error("", 0,
                    "1:1: invalid JSON at the end of the file");
  /* "{}" then a NUL byte at offset 2 of line 1: column 3. */
  expect_text_error("{}\0{}", 5,
                    "1:3: invalid JSON: a NUL byte");
  /* Trailing text after the object: line 2 starts with "x" at column 1. */
  if (write_temp(name, "{}\n", 0, "x = 1\n", 6)) {
    snprintf(want, sizeof want, "%s:2:1: invalid JSON near 'x = 1'", name);
    expect_error(name, NULL, 0, PROF_ERRCONFIG, want);
    remove(name);
  }
  /* "\u0000" would become a NUL byte that cuts the C string: refused where it stands, in a value
     (`{"flops_profiler": {"output_file": "a` is 37 bytes: the backslash is column 38) and in a
     key (`{"flops_profiler": {"top_modules` is 32 bytes: column 33). An escaped backslash before
     "u0000" is text, not a NUL. */
  expect_text_error("{\"flops_profiler\": {\"output_file\": \"a\\u0000b.json\"}}", 52,
                    "1:38: a NUL character (\\u0000) in a string: no key or path may hold one");
  expect_text_error("{\"flops_profiler\": {\"top_modules\\u0000x\": 3}}", 45,
                    "1:33: a NUL character (\\u0000) in a string: no key or path may hold one");
  {
    static const char *const ov[] = { "flops_profiler.output_file=\"a\\\\u0000b.json\"" };
    prof_State *S;
    prof_Config *cfg;
    T_EQ_INT(load(NULL, ov, 1, &cfg, &S), PROF_OK);
    if (cfg != NULL) T_EQ_STR(cfg->flops_profiler.output_file, "a\\u0000b.json");
    done(S, cfg);
  }
  expect_set_error("flops_profiler.output_file=\"a\\u0000b\"",
                   "a NUL character (\\u0000) in a string: no key or path may hold one");
  expect_error(FIX "not_object.json", NULL, 0, PROF_ERRCONFIG,
               FIX "not_object.json: the top level must be a JSON object, got an array");
}

/* {====================== key errors ======================} */

static void test_unknown_keys(void) {
  expect_error(FIX "unknown_key.json", NULL, 0, PROF_ERRCONFIG,
               FIX "unknown_key.json: unknown key \"flops_profiler.modul_depth\" "
               "(did you mean \"module_depth\"?)");
  /* DeepSpeed's own keys are candidates at the top level. */
  expect_error(FIX "unknown_top.json", NULL, 0, PROF_ERRCONFIG,
               FIX "unknown_top.json: unknown key \"optimiser\" (did you mean \"optimizer\"?)");
  /* Nearest is log_level at distance 9 > max(2, 13 / 3): no suggestion. */
  expect_error(FIX "unknown_far.json", NULL, 0, PROF_ERRCONFIG,
               FIX "unknown_far.json: unknown key \"colour_scheme\"");
  expect_error(FIX "duplicate.json", NULL, 0, PROF_ERRCONFIG,
               FIX "duplicate.json:4:3: duplicate key \"flops_profiler\"");
}

static void test_wrong_types(void) {
  expect_error(FIX "wrong_type.json", NULL, 0, PROF_ERRCONFIG,
               FIX "wrong_type.json: flops_profiler.module_depth: expected an integer, "
               "got string \"x\"");
  expect_error(FIX "fraction.json", NULL, 0, PROF_ERRCONFIG,
               FIX "fraction.json: flops_profiler.top_modules: expected a positive integer, "
               "got number 1.5");
  expect_error(FIX "bad_array.json", NULL, 0, PROF_ERRCONFIG,
               FIX "bad_array.json: flops_profiler.ignore_modules[1]: expected a string, "
               "got number 3");
  expect_error(FIX "bad_section.json", NULL, 0, PROF_ERRCONFIG,
               FIX "bad_section.json: parallel: expected an object, got number 4");
}

/* Every interpreted key's type and range, through --set so each message names the override. */
static void test_key_checks(void) {
  static const char *const cases[][2] = {
    { "train_batch_size=0", "train_batch_size: expected a positive integer, got number 0" },
    { "train_micro_batch_size_per_gpu=-3",
      "train_micro_batch_size_per_gpu: expected a positive integer, got number -3" },
    { "gradient_accumulation_steps=\"4\"",
      "gradient_accumulation_steps: expected a positive integer, got string \"4\"" },
    { "train_batch_size=1e19", "train_batch_size: expected a positive integer, got number 1e+19" },
    { "wall_clock_breakdown=1", "wall_clock_breakdown: expected true or false, got number 1" },
    { "device=gpu", "device: expected one of \"meta\", \"cpu\", \"cuda\", got string \"gpu\"" },
    { "device=CPU", "device: expected one of \"meta\", \"cpu\", \"cuda\", got string \"CPU\"" },
    { "flops_profiler.enabled=yes",
      "flops_profiler.enabled: expected true or false, got string \"yes\"" },
    { "flops_profiler.recompute_fwd_factor=-0.5",
      "flops_profiler.recompute_fwd_factor: expected a number >= 0, got number -0.5" },
    { "flops_profiler.recompute_fwd_factor=fast",
      "flops_profiler.recompute_fwd_factor: expected a number, got string \"fast\"" },
    { "flops_profiler.profile_step=-1",
      "flops_profiler.profile_step: expected an integer >= 0, got number -1" },
    { "flops_profiler.module_depth=-2",
      "flops_profiler.module_depth: expected an integer >= -1, got number -2" },
    { "flops_profiler.module_depth=0.5",
      "flops_profiler.module_depth: expected an integer, got number 0.5" },
    { "flops_profiler.top_modules=0",
      "flops_profiler.top_modules: expected a positive integer, got number 0" },
    { "flops_profiler.top_modules=x",
      "flops_profiler.top_modules: expected a positive integer, got string \"x\"" },
    { "flops_profiler.top_modules=1e400",
      "flops_profiler.top_modules: expected a positive integer, got number inf" },
    { "flops_profiler.detailed=null", "flops_profiler.detailed: expected true or false, got null" },
    { "flops_profiler.output_file=3",
      "flops_profiler.output_file: expected a string or null, got number 3" },
    { "flops_profiler.conventions=fvcore",
      "flops_profiler.conventions: expected one of \"exact\", \"deepspeed\", "
      "got string \"fvcore\"" },
    { "flops_profiler.format=[]",
      "flops_profiler.format: expected a string or null, got an array" },
    { "flops_profiler.ignore_modules=Dropout",
      "flops_profiler.ignore_modules: expected an array of strings, got string \"Dropout\"" },
    { "flops_profiler.rules=[\"a.lua\",{}]",
      "flops_profiler.rules[1]: expected a string, got an object" },
    { "parallel.model_parallel_size=2.5",
      "parallel.model_parallel_size: expected a positive integer, got number 2.5" },
    { "report.script=true", "report.script: expected a string or null, got true" },
    { "flops_profiler=true", "flops_profiler: expected an object, got true" },
    { "report={\"script\": \"a.lua\", \"scrpit\": 1}",
      "unknown key \"report.scrpit\" (did you mean \"script\"?)" },
    { "flops_profiler.modul_depth=2",
      "unknown key \"flops_profiler.modul_depth\" (did you mean \"module_depth\"?)" },
    { "flops_profiler.Enabled=true",
      "unknown key \"flops_profiler.Enabled\" (did you mean \"enabled\"?)" },
    { "Device=cpu", "unknown key \"Device\" (did you mean \"device\"?)" },
    /* mp_size is 12 edits from model_parallel_size, farther than max(2, 7 / 3) */
    { "parallel.mp_size=2", "unknown key \"parallel.mp_size\"" },
    /* long strings are cut at 32 bytes in messages */
    { "device=abcdefghijklmnopqrstuvwxyz0123456789",
      "device: expected one of \"meta\", \"cpu\", \"cuda\", got string "
      "\"abcdefghijklmnopqrstuvwxyz012345...\"" },
  };
  for (int32_t i = 0; i < N(cases); i++) expect_set_error(cases[i][0], cases[i][1]);
}

/* {====================== overrides ======================} */

static void test_override_typing(void) {
  static const char *const ov[] = {
    "flops_profiler.top_modules=3", "device=cpu", "flops_profiler.output_file=out.json",
    "flops_profiler.recompute_fwd_factor=1", "flops_profiler.format=\"json\"",
    "flops_profiler.ignore_modules=[\"Dropout\", \"Linear\"]", "flops_profiler.enabled=true",
    "flops_profiler.rules=[]", "parallel.model_parallel_size=8", "report.script=r.lua",
    "train_batch_size=32.0"
  };
  static const char *const forced[] = {
    "flops_profiler.top_modules", "device", "flops_profiler.output_file",
    "flops_profiler.recompute_fwd_factor", "flops_profiler.format",
    "flops_profiler.ignore_modules", "flops_profiler.enabled", "flops_profiler.rules",
    "parallel.model_parallel_size", "report.script", "train_batch_size"
  };
  static const char *const ignore[] = { "Dropout", "Linear" };
  prof_State *S;
  prof_Config *cfg;
  T_EQ_INT(load(NULL, ov, N(ov), &cfg, &S), PROF_OK);
  if (cfg == NULL) return;
  T_EQ_INT(cfg->flops_profiler.top_modules, 3);
  T_EQ_STR(cfg->device, "cpu");
  T_EQ_STR(cfg->flops_profiler.output_file, "out.json");
  T_NEAR(cfg->flops_profiler.recompute_fwd_factor, 1.0, 0.0);
  T_EQ_STR(cfg->flops_profiler.format, "json");
  expect_keys(cfg->flops_profiler.ignore_modules, cfg->flops_profiler.n_ignore_modules, ignore, 2);
  T_EQ_INT(cfg->flops_profiler.enabled, 1);
  T_EQ_INT(cfg->flops_profiler.n_rules, 0);
  T_EQ_INT(cfg->model_parallel_size, 8);
  T_EQ_STR(cfg->report_script, "r.lua");
  T_EQ_INT(cfg->train_batch_size, 32);
  expect_keys(cfg->forced_keys, cfg->n_forced_keys, forced, N(forced));
  T_EQ_INT(cfg->n_unused_keys, 0);
  done(S, cfg);
}

static void test_override_precedence(void) {
  /* later --set wins; a repeated key is listed once; null clears a file's string */
  static const char *const ov[] = {
    "flops_profiler.top_modules=2", "device=cuda", "flops_profiler.top_modules=9",
    "flops_profiler.output_file=null"
  };
  static const char *const forced[] = {
    "flops_profiler.top_modules", "device", "flops_profiler.output_file"
  };
  prof_State *S;
  prof_Config *cfg;
  T_EQ_INT(load(FIX "full.json", ov, N(ov), &cfg, &S), PROF_OK);
  if (cfg == NULL) return;
  T_EQ_INT(cfg->flops_profiler.top_modules, 9);
  T_EQ_STR(cfg->device, "cuda");
  T_CHECK(cfg->flops_profiler.output_file == NULL);
  T_EQ_INT(cfg->flops_profiler.module_depth, 2);  /* untouched file value */
  T_EQ_STR(cfg->report_script, "reports/summary.lua");
  expect_keys(cfg->forced_keys, cfg->n_forced_keys, forced, N(forced));
  done(S, cfg);
}

static void test_override_vs_file_errors(void) {
  /* the override replaces the bad file value before validation */
  const char *fix[] = { "flops_profiler.module_depth=1" };
  const char *other[] = { "flops_profiler.top_modules=2" };
  const char *section[] = { "flops_profiler={\"module_depth\": 0}" };
  prof_State *S;
  prof_Config *cfg;
  T_EQ_INT(load(FIX "wrong_type.json", fix, 1, &cfg, &S), PROF_OK);
  if (cfg != NULL) T_EQ_INT(cfg->flops_profiler.module_depth, 1);
  done(S, cfg);
  T_EQ_INT(load(FIX "wrong_type.json", section, 1, &cfg, &S), PROF_OK);
  if (cfg != NULL) T_EQ_INT(cfg->flops_profiler.module_depth, 0);
  done(S, cfg);
  /* an unrelated override leaves the blame with the file */
  expect_error(FIX "wrong_type.json", other, 1, PROF_ERRCONFIG,
               FIX "wrong_type.json: flops_profiler.module_depth: expected an integer, "
               "got string \"x\"");
}

static void test_override_deepspeed_key(void) {
  const char *ov[] = { "optimizer.params.lr=0.1", "zero_optimization.stage=3" };
  static const char *const unused[] = { "optimizer", "zero_optimization" };  /* no type */
  static const char *const forced[] = { "optimizer.params.lr", "zero_optimization.stage" };
  prof_State *S;
  prof_Config *cfg;
  T_EQ_INT(load(NULL, ov, 2, &cfg, &S), PROF_OK);
  if (cfg == NULL) return;
  expect_keys(cfg->unused_keys, cfg->n_unused_keys, unused, 2);
  expect_keys(cfg->forced_keys, cfg->n_forced_keys, forced, 2);
  done(S, cfg);
}

static void test_override_malformed(void) {
  const char *nested[] = { "device.kind=1" };
  expect_set_error("flops_profiler.top_modules",
                   "expected KEY=VALUE, e.g. flops_profiler.top_modules=3");
  expect_set_error("=3", "expected KEY=VALUE, e.g. flops_profiler.top_modules=3");
  expect_set_error("a..b=1", "empty key name in \"a..b\"");
  expect_set_error(".a=1", "empty key name in \".a\"");
  expect_set_error("a.=1", "empty key name in \"a.\"");
  /* an empty value is the empty string, which device refuses */
  expect_set_error("device=",
                   "device: expected one of \"meta\", \"cpu\", \"cuda\", got string \"\"");
  /* the file's device is a string, so it cannot hold a key */
  expect_error(FIX "full.json", nested, 1, PROF_ERRCONFIG,
               "--set device.kind=1: device: expected an object, got string \"meta\"");
}

static void test_bad_arguments(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_Config *cfg = NULL;
  const char *nul[] = { "device=cpu", NULL };
  T_EQ_INT(prof_config_load(S, NULL, NULL, 0, NULL), PROF_ERRARG);
  T_EQ_INT(prof_config_load(S, NULL, NULL, -1, &cfg), PROF_ERRARG);
  T_EQ_INT(prof_config_load(S, NULL, NULL, 1, &cfg), PROF_ERRARG);
  T_EQ_INT(prof_config_load(S, NULL, nul, 2, &cfg), PROF_ERRARG);
  T_CHECK(cfg == NULL);
  prof_config_free(S, NULL);  /* NULL-safe */
  prof_close(S);
}

/* {====================== key tables ======================} */

static void test_key_tables(void) {
  T_EQ_INT(profC_edit_distance("kitten", "sitting"), 3);
  T_EQ_INT(profC_edit_distance("", "abc"), 3);
  T_EQ_INT(profC_edit_distance("abc", ""), 3);
  T_EQ_INT(profC_edit_distance("ABC", "abc"), 0);
  T_EQ_INT(profC_edit_distance("modul_depth", "module_depth"), 1);
  T_EQ_INT(profC_edit_distance("top_module", "top_modules"), 1);
  T_EQ_INT(profC_edit_distance("optimiser", "optimizer"), 1);
  T_EQ_INT(profC_edit_distance("mp_size", "model_parallel_size"), 12);
  T_EQ_STR(profC_closest("", "devise"), "device");
  T_EQ_STR(profC_closest("", "zero_optimisation"), "zero_optimization");
  T_EQ_STR(profC_closest("flops_profiler", "OUTPUT_FILE"), "output_file");
  T_EQ_STR(profC_closest("parallel", "model_paralel_size"), "model_parallel_size");
  T_CHECK(profC_closest("report", "xyz") == NULL);  /* script: 6 edits */
  T_EQ_INT(profC_classify("", "flops_profiler"), PROFC_KNOWN);
  T_EQ_INT(profC_classify("", "profiler"), PROFC_KNOWN);
  T_EQ_INT(profC_classify("", "zero_optimization"), PROFC_DEEPSPEED);
  T_EQ_INT(profC_classify("", "seq_parallel_communication_data_type"), PROFC_DEEPSPEED);
  T_EQ_INT(profC_classify("", "Zero_optimization"), PROFC_UNKNOWN);
  T_EQ_INT(profC_classify("flops_profiler", "zero_optimization"), PROFC_UNKNOWN);
  T_EQ_INT(profC_classify("flops_profiler", "recompute_fwd_factor"), PROFC_KNOWN);
  T_EQ_INT(profC_classify("profiler.schedule", "skip_first"), PROFC_KNOWN);
  T_EQ_INT(profC_classify("profiler", "skip_first"), PROFC_UNKNOWN);
  T_EQ_INT(profC_classify("", "profile_step"), PROFC_UNKNOWN);
  /* the optimizer section is DeepSpeed's now: the engine's Lua policy reads it */
  T_EQ_INT(profC_classify("", "optimizer"), PROFC_DEEPSPEED);
  T_EQ_INT(profC_classify("", "scheduler"), PROFC_DEEPSPEED);
  T_EQ_INT(profC_classify("optimizer", "legacy_fusion"), PROFC_DEEPSPEED);
  T_EQ_INT(profC_classify("optimizer", "momentum"), PROFC_UNKNOWN);
  T_EQ_INT(profC_classify("optimizer.params", "anything"), PROFC_UNCHECKED);
  T_EQ_INT(profC_classify("fp16", "enabeld"), PROFC_UNKNOWN);
  T_EQ_INT(profC_classify("zero_optimization.offload_param", "max_in_cpu"), PROFC_DEEPSPEED);
  T_EQ_INT(profC_classify("elasticity", "anything"), PROFC_UNCHECKED);
  T_EQ_STR(profC_closest("fp16", "enabeld"), "enabled");
  T_EQ_STR(profC_closest("zero_optimization", "stag"), "stage");
  T_EQ_STR(profC_closest("optimizer", "parms"), "params");
  T_CHECK(profC_closest("elasticity", "enabeld") == NULL);   /* unchecked: no candidates */
}

/* {====================== out of memory ======================} */

/*
** Fails the k-th allocation for k = 1, 2, ... until the load succeeds: every failure must be
** PROF_ERRMEM (or the expected config error) with *out NULL and every byte given back.
*/
static void oom_sweep(const char *path, const char *const *ov, int32_t n, int want_rc,
                      const char *want_msg, long *steps) {
  Heap h = { 0, 0, 0, 0 };
  prof_State *S = prof_new(heap_alloc, &h);
  long long base_bytes = h.live_bytes;
  long base_blocks = h.live_blocks;
  int rc = -1;
  long k;
  for (k = 1; k < 10000; k++) {
    prof_Config *cfg = (prof_Config *)&h;
    h.requests = 0;
    h.fail_at = k;
    rc = prof_config_load(S, path, ov, n, &cfg);
    if (rc == PROF_ERRMEM) {
      T_CHECK(cfg == NULL);
      T_EQ_STR(prof_errmsg(S), "out of memory while loading the config");
    } else {
      T_EQ_INT(rc, want_rc);
      if (rc == PROF_OK) prof_config_free(S, cfg);
      else T_EQ_STR(prof_errmsg(S), want_msg);
    }
    T_EQ_INT(h.live_bytes, base_bytes);
    T_EQ_INT(h.live_blocks, base_blocks);
    if (h.requests < k) break;  /* nothing failed: the whole load went through */
    if (rc != PROF_ERRMEM) {
      T_CHECK(!"a failed allocation was not reported");
      break;
    }
  }
  *steps = k;
  h.fail_at = 0;
  prof_close(S);
  T_EQ_INT(h.live_bytes, 0);
}

static void test_model_parallel_rank(void) {
  prof_State *S;
  prof_Config *cfg;
  const char *ov[] = {"parallel.model_parallel_size=4", "parallel.model_parallel_rank=3"};
  T_EQ_INT(load(NULL, ov, 2, &cfg, &S), PROF_OK);
  T_EQ_INT(cfg->model_parallel_size, 4);
  T_EQ_INT(cfg->model_parallel_rank, 3);
  done(S, cfg);
  T_EQ_INT(load(NULL, NULL, 0, &cfg, &S), PROF_OK);
  T_EQ_INT(cfg->model_parallel_rank, 0);   /* default: the first partition */
  done(S, cfg);
  const char *bad[] = {"parallel.model_parallel_size=2", "parallel.model_parallel_rank=2"};
  expect_error(NULL, bad, 2, PROF_ERRCONFIG,
               "--set parallel.model_parallel_rank=2: parallel.model_parallel_rank: 2 is not below "
               "model_parallel_size 2");
}

static void test_oom(void) {
  static const char *const ov[] = {
    "flops_profiler.top_modules=7", "device=cpu", "flops_profiler.top_modules=8",
    "optimizer.params.lr=0.1", "flops_profiler.rules=[\"a.lua\", \"b.lua\"]"
  };
  static const char *const late[] = { "report.script=3" };
  static const char *const sgd[] = {
    "optimizer.type=SGD", "optimizer.params={\"lr\": 0.1, \"momentum\": 0.9}"
  };
  static const char *const bad[] = { "fp16.enabeld=true" };
  char name[64];
  long steps;
  oom_sweep(FIX "full.json", ov, N(ov), PROF_OK, NULL, &steps);
  /* cfg + file buffer + 6 strings + 2 arrays of 2 + 1 array of 1 + (2 + 1) + 3 forced + list */
  T_CHECK(steps > 15);
  oom_sweep(FIX "ds_zero3_fp16.json", NULL, 0, PROF_OK, NULL, &steps);
  T_CHECK(steps > 40);  /* cfg, buffer, 10 unused keys and their list, DeepSpeed's values */
  oom_sweep(FIX "optimizer_adam.json", sgd, N(sgd), PROF_OK, NULL, &steps);
  T_CHECK(steps > 8);   /* cfg, buffer, override key copies, the optimizer's values, forced keys */
  oom_sweep(FIX "optimizer_adam.json", bad, N(bad), PROF_ERRCONFIG,
            "--set fp16.enabeld=true: unknown key \"fp16.enabeld\" (did you mean \"enabled\"?)",
            &steps);
  T_CHECK(steps > 2);
  oom_sweep(NULL, ov, N(ov), PROF_OK, NULL, &steps);
  T_CHECK(steps > 8);
  oom_sweep(FIX "full.json", late, 1, PROF_ERRCONFIG,
            "--set report.script=3: report.script: expected a string or null, got number 3",
            &steps);
  T_CHECK(steps > 5);
  if (write_temp(name, "{\"device\": \"meta\",", 20000, "\"flops_profiler\": {}}", 21)) {
    oom_sweep(name, NULL, 0, PROF_OK, NULL, &steps);
    T_CHECK(steps > 4);  /* the buffer grew 4 -> 8 -> 16 -> 32 KiB */
    remove(name);
  }
}

/* Hugging Face's "auto" for the schema's typed keys keeps their defaults and is listed, in
   schema order (the file has them in another); a string row still refuses it. */
static void test_auto(void) {
  static const char *const want[] = {
    "train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"
  };
  static const char *const ov[] = { "flops_profiler.top_modules=\"auto\"" };
  prof_State *S;
  prof_Config *cfg = NULL;
  long steps;
  T_EQ_INT(load(FIX "hf_auto_zero2.json", NULL, 0, &cfg, &S), PROF_OK);
  if (cfg != NULL) {
    expect_keys(cfg->auto_keys, cfg->n_auto_keys, want, N(want));
    T_EQ_INT(cfg->train_batch_size, 0);           /* not set: DeepSpeed's None */
    T_EQ_INT(cfg->train_micro_batch_size_per_gpu, 0);
    T_EQ_INT(cfg->gradient_accumulation_steps, 0);
  } else {
    T_FAIL_("%s", prof_errmsg(S));
  }
  done(S, cfg);
  if ((cfg = with(&S, ov, N(ov))) != NULL) {
    T_EQ_INT(cfg->flops_profiler.top_modules, 1);  /* the row's default, not the file's */
    T_EQ_INT(cfg->n_auto_keys, 1);
    if (cfg->n_auto_keys == 1) T_EQ_STR(cfg->auto_keys[0], "flops_profiler.top_modules");
  }
  done(S, cfg);
  expect_set_error("device=auto", "device: expected one of \"meta\", \"cpu\", \"cuda\", got "
                   "string \"auto\"");
  expect_set_error("flops_profiler.conventions=auto", "flops_profiler.conventions: expected one "
                   "of \"exact\", \"deepspeed\", got string \"auto\"");
  oom_sweep(FIX "hf_auto_zero2.json", NULL, 0, PROF_OK, NULL, &steps);
  T_CHECK(steps > 10);  /* cfg, buffer, 3 auto keys and their list, unused keys, DeepSpeed's */
}

/* profiler.schedule.args: any object, copied in file order, nested values kept; not an object,
   a duplicate key inside or a NUL is refused with the key path. */
static void test_schedule_args(void) {
  static const char *const ov[] = {
    "profiler.schedule.script=every_n",
    "profiler.schedule.args={\"every\": 4, \"warmup\": 1, \"nested\": {\"a\": [1, \"x\"]}}"
  };
  prof_State *S;
  prof_Config *cfg;
  long steps;
  if ((cfg = with(&S, ov, N(ov))) != NULL) {
    const prof_JsonValue *a = cfg->schedule_args;
    T_EQ_STR(cfg->schedule_script, "every_n");
    T_CHECK(a != NULL && a->type == PROF_JSON_OBJECT && a->n_items == 3);
    if (a != NULL && a->n_items == 3) {
      T_EQ_STR(a->items[0].key, "every");
      T_NEAR(a->items[0].number, 4.0, 0.0);
      T_EQ_STR(a->items[1].key, "warmup");
      T_EQ_STR(a->items[2].key, "nested");
      T_EQ_INT(a->items[2].type, PROF_JSON_OBJECT);
      T_EQ_INT(a->items[2].items[0].type, PROF_JSON_ARRAY);
      T_EQ_STR(a->items[2].items[0].items[1].string, "x");
    }
  }
  done(S, cfg);
  expect_set_error("profiler.schedule.args=5",
                   "profiler.schedule.args: expected an object or null, got number 5");
  expect_set_error("profiler.schedule.args=\"every=3\"",
                   "profiler.schedule.args: expected an object or null, got string \"every=3\"");
  expect_set_error("profiler.schedule.args={\"n\": {\"a\": 1, \"a\": 2}}",
                   "duplicate key \"profiler.schedule.args.n.a\"");
  expect_set_error("profiler.schedule.args={\"a\\u0000b\": 1}",
                   "a NUL character (\\u0000) in a string: no key or path may hold one");
  expect_set_error("profiler.schedule.script=3",
                   "profiler.schedule.script: expected a string or null, got number 3");
  oom_sweep(NULL, ov, N(ov), PROF_OK, NULL, &steps);
  T_CHECK(steps > 8);  /* the keys and values of args, the script, override copies, forced keys */
}

int main(void) {
  T_RUN(test_defaults);
  T_RUN(test_minimal);
  T_RUN(test_full);
  T_RUN(test_flops_json);
  T_RUN(test_deepspeed_zero3);
  T_RUN(test_deepspeed_bf16);
  T_RUN(test_optimizer_fixture);
  T_RUN(test_optimizer_types);
  T_RUN(test_optimizer_errors);
  T_RUN(test_nulls);
  T_RUN(test_large_file);
  T_RUN(test_missing_file);
  T_RUN(test_malformed);
  T_RUN(test_unknown_keys);
  T_RUN(test_wrong_types);
  T_RUN(test_key_checks);
  T_RUN(test_override_typing);
  T_RUN(test_override_precedence);
  T_RUN(test_override_vs_file_errors);
  T_RUN(test_override_deepspeed_key);
  T_RUN(test_override_malformed);
  T_RUN(test_bad_arguments);
  T_RUN(test_key_tables);
  T_RUN(test_model_parallel_rank);
  T_RUN(test_oom);
  T_RUN(test_auto);
  T_RUN(test_schedule_args);
  return T_DONE();
}
