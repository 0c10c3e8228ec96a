/* test_config_schema.c — every schema row's default, type, range and --set; DeepSpeed's sections;
   --help-config. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "config/config_internal.h"
#include "prof.h"
#include "t.h"

#define N(a) ((int32_t)(sizeof(a) / sizeof((a)[0])))

static prof_Config *load(prof_State **S, const char *const *ov, int32_t n) {
  prof_Config *cfg = NULL;
  *S = prof_new(NULL, NULL);
  if (prof_config_load(*S, NULL, ov, n, &cfg) != PROF_OK) T_FAIL_("%s", prof_errmsg(*S));
  return cfg;
}

static void done(prof_State *S, prof_Config *cfg) {
  prof_config_free(S, cfg);
  prof_close(S);
}

/* Expects the override to fail with a message that starts "--set OV: " and contains want. */
static void expect_set_error(const char *ov, const char *want) {
  prof_State *S = prof_new(NULL, NULL);
  prof_Config *cfg = NULL;
  char prefix[300];
  const char *one[1] = { ov };
  T_EQ_INT(prof_config_load(S, NULL, one, 1, &cfg), PROF_ERRCONFIG);
  T_CHECK(cfg == NULL);
  snprintf(prefix, sizeof prefix, "--set %s: ", ov);
  T_CHECK(strncmp(prof_errmsg(S), prefix, strlen(prefix)) == 0);
  T_CONTAINS(prof_errmsg(S), want);
  prof_close(S);
}

/* The field of row k in cfg equals the JSON value v (a default or what --set gave). */
static void expect_field(const prof_Config *cfg, const prof_ConfigKey *k, const cJSON *v) {
  const char *at = (const char *)cfg + k->offset;
  switch (k->type) {
    case PROF_CONFIG_SECTION: break;
    case PROF_CONFIG_BOOL: T_EQ_INT(*(const int *)(const void *)at, cJSON_IsTrue(v)); break;
    case PROF_CONFIG_INT:
      T_EQ_INT(*(const int64_t *)(const void *)at, cJSON_IsNull(v) ? 0 : (int64_t)v->valuedouble);
      break;
    case PROF_CONFIG_NUMBER: T_NEAR(*(const double *)(const void *)at, v->valuedouble, 0.0); break;
    case PROF_CONFIG_STRING: {
      const char *s = *(char *const *)(const void *)at;
      if (cJSON_IsNull(v)) T_CHECK(s == NULL);
      else T_EQ_STR(s, v->valuestring);
      break;
    }
    case PROF_CONFIG_ENUM:
      T_EQ_STR(k->choices[*(const int *)(const void *)at], v->valuestring);
      break;
    case PROF_CONFIG_STRINGS: {
      char **list = *(char **const *)(const void *)at;
      int32_t n = *(const int32_t *)(const void *)((const char *)cfg + k->count_offset), i = 0;
      const cJSON *e;
      T_EQ_INT(n, cJSON_GetArraySize(v));
      cJSON_ArrayForEach(e, v) {
        if (i < n) T_EQ_STR(list[i], e->valuestring);
        i++;
      }
      break;
    }
    case PROF_CONFIG_OBJECT: {
      const prof_JsonValue *o = *(prof_JsonValue *const *)(const void *)at;
      const cJSON *e;
      int32_t i = 0;
      if (cJSON_IsNull(v)) {
        T_CHECK(o == NULL);
        break;
      }
      T_CHECK(o != NULL && o->type == PROF_JSON_OBJECT);
      if (o == NULL) break;
      T_EQ_INT(o->n_items, cJSON_GetArraySize(v));
      cJSON_ArrayForEach(e, v) {   /* keys in file order */
        if (i < o->n_items) T_EQ_STR(o->items[i].key, e->string);
        i++;
      }
      break;
    }
  }
}

static void test_rows(void) {
  const prof_ConfigKey *k;
  int32_t n = 0, sections = 0;
  for (int32_t i = 0; (k = prof_config_key(i)) != NULL; i++, n++) {
    T_CHECK(k->doc != NULL && k->doc[0] != '\0');
    T_CHECK(profC_row(k->path, strlen(k->path)) == k);   /* paths are unique */
    if (k->type == PROF_CONFIG_SECTION) sections++;
    /* a key's section comes before it */
    if (strrchr(k->path, '.') != NULL) {
      const prof_ConfigKey *sec = profC_row(k->path, (size_t)(strrchr(k->path, '.') - k->path));
      T_CHECK(sec != NULL && sec->type == PROF_CONFIG_SECTION && sec < k);
    }
  }
  T_EQ_INT(n, 44);
  /* device_options, flops_profiler, profiler, profiler.schedule, parallel, report */
  T_EQ_INT(sections, 6);
  T_CHECK(prof_config_key(-1) == NULL);
  T_CHECK(prof_config_key(n) == NULL);
}

/* Every row's default, parsed from its JSON text, is what a config without the key gets. */
static void test_defaults_apply(void) {
  prof_State *S;
  prof_Config *cfg = load(&S, NULL, 0);
  const prof_ConfigKey *k;
  if (cfg == NULL) return;
  T_EQ_INT(cfg->size, sizeof *cfg);
  for (int32_t i = 0; (k = prof_config_key(i)) != NULL; i++) {
    cJSON *v = cJSON_Parse(k->default_json);
    T_CHECK(v != NULL);
    if (v != NULL) expect_field(cfg, k, v);
    cJSON_Delete(v);
  }
  /* the activity profiler's defaults, as torch.profiler's */
  T_EQ_INT(cfg->profiler.enabled, 0);
  T_EQ_INT(cfg->profiler.n_activities, 1);
  if (cfg->profiler.n_activities == 1) T_EQ_STR(cfg->profiler.activities[0], "cpu");
  T_EQ_INT(cfg->profiler.active, 1);
  T_EQ_INT(cfg->profiler.repeat, 0);
  T_CHECK(cfg->profiler.trace_file == NULL);
  done(S, cfg);
}

/* A value of the wrong type for k, and the words its message must contain. */
static void wrong_value(const prof_ConfigKey *k, char *ov, size_t size, const char **want) {
  switch (k->type) {
    case PROF_CONFIG_BOOL:
      snprintf(ov, size, "%s=1", k->path);
      *want = "expected true or false, got number 1";
      break;
    case PROF_CONFIG_INT:
      snprintf(ov, size, "%s=\"x\"", k->path);
      *want = k->min == 1 ? "expected a positive integer, got string \"x\""
                          : "expected an integer, got string \"x\"";
      break;
    case PROF_CONFIG_NUMBER:
      snprintf(ov, size, "%s=\"x\"", k->path);
      *want = "expected a number, got string \"x\"";
      break;
    case PROF_CONFIG_STRING:
      snprintf(ov, size, "%s=3", k->path);
      *want = k->choices != NULL ? "expected one of \"" : "expected a string";
      break;
    case PROF_CONFIG_ENUM:
      snprintf(ov, size, "%s=3", k->path);
      *want = "expected one of \"";
      break;
    case PROF_CONFIG_STRINGS:
      snprintf(ov, size, "%s=3", k->path);
      *want = "expected an array of strings, got number 3";
      break;
    case PROF_CONFIG_OBJECT:
      snprintf(ov, size, "%s=[1]", k->path);
      *want = "expected an object or null, got an array";
      break;
    case PROF_CONFIG_SECTION:
      snprintf(ov, size, "%s=3", k->path);
      *want = "expected an object, got number 3";
      break;
  }
}

/* A wrong type names the key path, for every row. */
static void test_wrong_types(void) {
  const prof_ConfigKey *k;
  for (int32_t i = 0; (k = prof_config_key(i)) != NULL; i++) {
    char ov[160], want[300];
    const char *what = "";
    wrong_value(k, ov, sizeof ov, &what);
    snprintf(want, sizeof want, "%s: %s", k->path, what);
    expect_set_error(ov, want);
  }
}

/* Below an int's or a number's minimum, outside an enum: named with the bound. */
static void test_ranges(void) {
  const prof_ConfigKey *k;
  for (int32_t i = 0; (k = prof_config_key(i)) != NULL; i++) {
    char ov[160], want[300];
    if (k->type == PROF_CONFIG_INT || k->type == PROF_CONFIG_NUMBER) {
      snprintf(ov, sizeof ov, "%s=%lld", k->path, (long long)k->min - 1);
      if (k->type == PROF_CONFIG_NUMBER)
        snprintf(want, sizeof want, "%s: expected a number >= %lld, got number %lld", k->path,
                 (long long)k->min, (long long)k->min - 1);
      else if (k->min == 1)
        snprintf(want, sizeof want, "%s: expected a positive integer, got number %lld", k->path,
                 (long long)k->min - 1);
      else
        snprintf(want, sizeof want, "%s: expected an integer >= %lld, got number %lld", k->path,
                 (long long)k->min, (long long)k->min - 1);
      expect_set_error(ov, want);
    } else if (k->choices != NULL) {
      snprintf(ov, sizeof ov, "%s=%s", k->path,
               k->type == PROF_CONFIG_STRINGS ? "[\"nope\"]" : "nope");
      snprintf(want, sizeof want, "%s%s: expected one of \"%s\"", k->path,
               k->type == PROF_CONFIG_STRINGS ? "[0]" : "", k->choices[0]);
      expect_set_error(ov, want);
    }
  }
  expect_set_error("profiler.activities=[\"cpu\", \"gpu\"]",
                   "profiler.activities[1]: expected one of \"cpu\", \"cuda\", got string \"gpu\"");
}

/* A valid value for k other than its default, as JSON text. */
static void other_value(const prof_ConfigKey *k, char *buf, size_t size) {
  int last = 0;
  switch (k->type) {
    case PROF_CONFIG_BOOL:
      snprintf(buf, size, "%s", strcmp(k->default_json, "true") != 0 ? "true" : "false");
      break;
    case PROF_CONFIG_INT: snprintf(buf, size, "%lld", (long long)k->min + 5); break;
    case PROF_CONFIG_NUMBER: snprintf(buf, size, "2.5"); break;
    case PROF_CONFIG_ENUM:
    case PROF_CONFIG_STRING:
      if (k->choices == NULL) {
        snprintf(buf, size, "\"some/value.txt\"");
        break;
      }
      while (k->choices[last + 1] != NULL) last++;
      snprintf(buf, size, "\"%s\"", k->choices[last]);
      break;
    case PROF_CONFIG_STRINGS:
      if (k->choices != NULL) snprintf(buf, size, "[\"%s\", \"%s\"]", k->choices[1], k->choices[0]);
      else snprintf(buf, size, "[\"a\", \"b.c\"]");
      break;
    case PROF_CONFIG_OBJECT: snprintf(buf, size, "{\"every\": 3, \"tags\": [\"a\"]}"); break;
    case PROF_CONFIG_SECTION: snprintf(buf, size, "{}"); break;
  }
}

/* --set on every row lands in its field and lists the key as forced. */
static void test_set_every_row(void) {
  const prof_ConfigKey *k;
  for (int32_t i = 0; (k = prof_config_key(i)) != NULL; i++) {
    char value[80], ov[200];
    const char *one[2] = { ov, "parallel.model_parallel_size=9" };  /* room for any rank */
    prof_State *S;
    prof_Config *cfg;
    cJSON *v;
    if (k->type == PROF_CONFIG_SECTION) continue;
    other_value(k, value, sizeof value);
    snprintf(ov, sizeof ov, "%s=%s", k->path, value);
    if (strcmp(k->path, "parallel.model_parallel_size") == 0) one[1] = "device=cpu";
    cfg = load(&S, one, 2);
    v = cJSON_Parse(value);
    if (cfg != NULL && v != NULL) {
      expect_field(cfg, k, v);
      T_CHECK(cfg->n_forced_keys == 2);
      if (cfg->n_forced_keys == 2) T_EQ_STR(cfg->forced_keys[0], k->path);
    }
    cJSON_Delete(v);
    done(S, cfg);
  }
}

/* Typos inside DeepSpeed's documented sections name the closest documented key. */
static void test_deepspeed_sections(void) {
  expect_set_error("fp16.enabeld=true",
                   "unknown key \"fp16.enabeld\" (did you mean \"enabled\"?)");
  expect_set_error("zero_optimization.stag=2",
                   "unknown key \"zero_optimization.stag\" (did you mean \"stage\"?)");
  expect_set_error("optimizer.parms={}",
                   "unknown key \"optimizer.parms\" (did you mean \"params\"?)");
  expect_set_error("zero_optimization.offload_param.pin_memry=true",
                   "unknown key \"zero_optimization.offload_param.pin_memry\" (did you mean "
                   "\"pin_memory\"?)");
  expect_set_error("tensorboard.outputpath=x",
                   "unknown key \"tensorboard.outputpath\" (did you mean \"output_path\"?)");
  expect_set_error("fp16.enabled=1", "fp16.enabled: expected true or false, got number 1");
  expect_set_error("zero_optimization.stage=-1",
                   "zero_optimization.stage: expected an integer >= 0, got number -1");
  expect_set_error("fp16=true", "fp16: expected an object, got true");
  expect_set_error("scheduler={\"params\": {\"a\": 1, \"a\": 2}}",
                   "duplicate key \"scheduler.params.a\"");
  {
    /* unchecked places pass: scheduler params, sections the docs do not list, null sections */
    const char *ov[] = {
      "scheduler.params.warmup_anything=1", "elasticity.whatever=[1, {\"x\": null}]",
      "fp16=null", "zero_optimization={\"stage\": 3, \"offload_param\": {\"device\": \"cpu\"}}"
    };
    prof_State *S;
    prof_Config *cfg = load(&S, ov, N(ov));
    if (cfg != NULL) {
      const prof_JsonValue *ds = cfg->deepspeed;
      T_CHECK(ds != NULL && ds->n_items == 3);   /* fp16 null: not handed over */
      if (ds != NULL && ds->n_items == 3) {
        const prof_JsonValue *el = &ds->items[1], *zero = &ds->items[2];
        T_EQ_STR(ds->items[0].key, "scheduler");
        T_EQ_STR(el->key, "elasticity");
        T_EQ_INT(el->items[0].type, PROF_JSON_ARRAY);
        T_EQ_INT(el->items[0].n_items, 2);
        T_EQ_INT(el->items[0].items[1].items[0].type, PROF_JSON_NULL);
        T_EQ_STR(zero->items[1].items[0].string, "cpu");
        T_NEAR(zero->items[0].number, 3.0, 0.0);
      }
    }
    done(S, cfg);
  }
}

/* The listing shows every row: key, type, default and doc, on one line under its section. */
static void test_help(void) {
  size_t n = prof_config_help(NULL, 0);
  char *text = malloc(n + 1), small[16];
  const prof_ConfigKey *k;
  T_CHECK(text != NULL);
  if (text == NULL) return;
  T_EQ_INT(prof_config_help(text, n + 1), n);
  T_EQ_INT(strlen(text), n);
  for (int32_t i = 0; (k = prof_config_key(i)) != NULL; i++) {
    char line[400], type[128];
    if (k->type == PROF_CONFIG_SECTION) snprintf(line, sizeof line, "\n%s: %s\n", k->path, k->doc);
    else
      snprintf(line, sizeof line, "  %-38s %-22s %-9s %s\n", k->path,
               prof_config_type_name(k, type, sizeof type), k->default_json, k->doc);
    T_CONTAINS(text, line);
  }
  T_CONTAINS(text, "  profiler.schedule.active               int >= 1               1 ");
  T_CONTAINS(text, "  device                                 meta|cpu|cuda or null  null ");
  /* truncated like snprintf: the same length, a terminated prefix */
  T_EQ_INT(prof_config_help(small, sizeof small), n);
  T_EQ_INT(strlen(small), sizeof small - 1);
  T_CHECK(strncmp(small, text, sizeof small - 1) == 0);
  free(text);
}

int main(void) {
  T_RUN(test_rows);
  T_RUN(test_defaults_apply);
  T_RUN(test_wrong_types);
  T_RUN(test_ranges);
  T_RUN(test_set_every_row);
  T_RUN(test_deepspeed_sections);
  T_RUN(test_help);
  return T_DONE();
}
