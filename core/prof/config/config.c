/* config.c — loading a DeepSpeed-style JSON config: parse, apply --set overrides, validate. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cJSON.h>

#include "config_internal.h"

/*
** The file is parsed into a cJSON tree, overrides are grafted onto that tree, and only then is it
** validated, so a --set value meets exactly the checks a file value does. The tree lives only
** inside prof_config_load; what survives is copied into prof_Config through S's allocator.
** (cJSON's own nodes come from its process-wide hooks, which a per-state allocator cannot reach.)
**
** What is checked and filled comes from the schema (config_schema.c) for the core's sections and
** from DeepSpeed's key tables (config_deepspeed.c) for DeepSpeed's; DeepSpeed's values are copied
** into cfg->deepspeed as plain JSON for the Lua engine, which owns their policy.
** null is accepted, meaning "not set", where a row is nullable (the batch keys, device,
** output_file, format, report.script): DeepSpeed's own defaults for its keys are None.
** "auto" (Hugging Face's placeholder) given to an int, number or bool row keeps the default and
** is listed in cfg->auto_keys, so that the run can say so once.
*/

#define PATH_SIZE 256          /* key paths in messages; longer ones are truncated */
#define EXCERPT 24             /* bytes of text shown after a JSON syntax error */

#define TRY(call)                                                                        \
  do {                                                                                   \
    int rc_ = (call);                                                                    \
    if (rc_ != PROF_OK) return rc_;                                                      \
  } while (0)

typedef struct Loader {
  prof_State *S;
  const char *file;                    /* the path as given; NULL: defaults only */
  const char *const *overrides;
  int32_t n_overrides;
  const char *name;                    /* file as messages show it: a long one's middle cut */
  char name_buf[224];
} Loader;

/* {====================== messages ======================} */

static int oom(const Loader *L) {
  return profI_error(L->S, PROF_ERRMEM, "out of memory while loading the config");
}

/* Whether key path a (first na bytes) and b name the same value, or one lies inside the other. */
static int paths_related(const char *a, size_t na, const char *b) {
  size_t nb = strlen(b), n = na < nb ? na : nb;
  char next;
  if (strncmp(a, b, n) != 0) return 0;
  next = na > nb ? a[n] : b[n];
  return na == nb || next == '.' || next == '[';
}

/* The last override that set keypath or a key around or inside it: the value came from there. */
static const char *override_for(const Loader *L, const char *keypath) {
  for (int32_t i = L->n_overrides - 1; i >= 0; i--) {
    const char *ov = L->overrides[i], *eq = strchr(ov, '=');
    if (eq != NULL && paths_related(ov, (size_t)(eq - ov), keypath)) return ov;
  }
  return NULL;
}

/* A PROF_ERRCONFIG whose message starts with where the value at keypath came from. */
__attribute__((format(printf, 3, 4)))
static int fail(const Loader *L, const char *keypath, const char *fmt, ...) {
  char msg[PROF_ERRMSG_SIZE];
  const char *ov = keypath != NULL ? override_for(L, keypath) : NULL;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (ov != NULL) return profI_error(L->S, PROF_ERRCONFIG, "--set %s: %s", ov, msg);
  return profI_error(L->S, PROF_ERRCONFIG, "%s: %s", L->name != NULL ? L->name : "config", msg);
}

/* Copies at most max bytes of s into buf, stopping at a line end and hiding control bytes. */
static size_t excerpt(const char *s, size_t max, char *buf) {
  size_t n = 0;
  while (n < max && s[n] != '\0' && s[n] != '\n' && s[n] != '\r') {
    buf[n] = (unsigned char)s[n] < 0x20 ? '?' : s[n];
    n++;
  }
  /* Never cut a UTF-8 sequence in half. */
  if (s[n] != '\0' && s[n] != '\n' && s[n] != '\r')
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
  buf[n] = '\0';
  return n;
}

/* What a JSON value is, for "got ..." in messages: string "x", number 1.5, true, null, ... */
static const char *describe(const cJSON *v, char *buf, size_t size) {
  if (cJSON_IsString(v)) {
    char text[40];
    size_t n = excerpt(v->valuestring, 32, text);
    snprintf(buf, size, "string \"%s%s\"", text, v->valuestring[n] != '\0' ? "..." : "");
  } else if (cJSON_IsNumber(v)) {
    snprintf(buf, size, "number %.15g", v->valuedouble);
  } else if (cJSON_IsBool(v)) {
    snprintf(buf, size, "%s", cJSON_IsTrue(v) ? "true" : "false");
  } else if (cJSON_IsNull(v)) {
    snprintf(buf, size, "null");
  } else if (cJSON_IsArray(v)) {
    snprintf(buf, size, "an array");
  } else {
    snprintf(buf, size, "an object");
  }
  return buf;
}

/* {====================== typed reads ======================} */

static int copy_json(const Loader *L, const cJSON *v, prof_JsonValue *out);
static void free_json(prof_State *S, prof_JsonValue *v);

static int is_int64(double d) {
  return isfinite(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0 &&
         (double)(int64_t)d == d;
}

/* An integer >= min (a JSON number without a fraction: 2.0 is fine, 1.5 is not). */
static int read_int(const Loader *L, const cJSON *v, const char *path, int64_t min,
                    int64_t *out) {
  char got[64];
  const char *what = min == 1 ? "a positive integer" : "an integer";
  if (!cJSON_IsNumber(v) || !is_int64(v->valuedouble))
    return fail(L, path, "%s: expected %s, got %s", path, what, describe(v, got, sizeof got));
  if ((int64_t)v->valuedouble < min) {
    if (min == 1)
      return fail(L, path, "%s: expected a positive integer, got %s", path,
                  describe(v, got, sizeof got));
    return fail(L, path, "%s: expected an integer >= %lld, got %s", path, (long long)min,
                describe(v, got, sizeof got));
  }
  *out = (int64_t)v->valuedouble;
  return PROF_OK;
}

static int read_number(const Loader *L, const cJSON *v, const char *path, double min,
                       double *out) {
  char got[64];
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
    return fail(L, path, "%s: expected a number, got %s", path, describe(v, got, sizeof got));
  if (v->valuedouble < min)
    return fail(L, path, "%s: expected a number >= %g, got %s", path, min,
                describe(v, got, sizeof got));
  *out = v->valuedouble;
  return PROF_OK;
}

static int read_bool(const Loader *L, const cJSON *v, const char *path, int *out) {
  char got[64];
  if (!cJSON_IsBool(v))
    return fail(L, path, "%s: expected true or false, got %s", path,
                describe(v, got, sizeof got));
  *out = cJSON_IsTrue(v) ? 1 : 0;
  return PROF_OK;
}

/* The position of v among choices (NULL-ended), or an error listing them. */
static int read_choice(const Loader *L, const cJSON *v, const char *path,
                       const char *const *choices, int *index) {
  char list[128] = "", got[64];
  size_t used = 0;
  if (cJSON_IsString(v))
    for (int i = 0; choices[i] != NULL; i++)
      if (strcmp(v->valuestring, choices[i]) == 0) {
        *index = i;
        return PROF_OK;
      }
  for (int i = 0; choices[i] != NULL; i++) {
    int w = snprintf(list + used, sizeof list - used, "%s\"%s\"", i > 0 ? ", " : "", choices[i]);
    if (w < 0 || (size_t)w >= sizeof list - used) break;
    used += (size_t)w;
  }
  return fail(L, path, "%s: expected one of %s, got %s", path, list,
              describe(v, got, sizeof got));
}

/* A string (one of k's choices when it has some) replacing *out; null unsets where k allows. */
static int read_string(const Loader *L, const cJSON *v, const prof_ConfigKey *k, char **out) {
  char got[64];
  int index;
  profI_strfree(L->S, *out);
  *out = NULL;
  if (k->nullable && cJSON_IsNull(v)) return PROF_OK;
  if (k->choices != NULL) {
    TRY(read_choice(L, v, k->path, k->choices, &index));
  } else if (!cJSON_IsString(v)) {
    return fail(L, k->path, "%s: expected a string%s, got %s", k->path,
                k->nullable ? " or null" : "", describe(v, got, sizeof got));
  }
  *out = profI_strdup(L->S, v->valuestring);
  return *out != NULL ? PROF_OK : oom(L);
}

static void free_strings(prof_State *S, char **list, int32_t n) {
  if (list == NULL) return;
  for (int32_t i = 0; i < n; i++) profI_strfree(S, list[i]);
  profI_free(S, list, (size_t)n * sizeof *list);
}

/* An array of strings replacing *out. Everything is checked before anything is allocated. */
static int read_strings(const Loader *L, const cJSON *v, const prof_ConfigKey *k, char ***out,
                        int32_t *n) {
  char got[64], elem[PATH_SIZE];
  const cJSON *e;
  int count = 0, i = 0, index;
  if (!cJSON_IsArray(v))
    return fail(L, k->path, "%s: expected an array of strings, got %s", k->path,
                describe(v, got, sizeof got));
  cJSON_ArrayForEach(e, v) {
    snprintf(elem, sizeof elem, "%s[%d]", k->path, count);
    if (k->choices != NULL) TRY(read_choice(L, e, elem, k->choices, &index));
    else if (!cJSON_IsString(e))
      return fail(L, elem, "%s: expected a string, got %s", elem, describe(e, got, sizeof got));
    count++;
  }
  free_strings(L->S, *out, *n);
  *out = NULL;
  *n = 0;
  if (count == 0) return PROF_OK;
  *out = profI_alloc(L->S, (size_t)count * sizeof **out);
  if (*out == NULL) return oom(L);
  memset(*out, 0, (size_t)count * sizeof **out);
  *n = count;  /* from here prof_config_free can release a half-filled array */
  cJSON_ArrayForEach(e, v) {
    if (((*out)[i++] = profI_strdup(L->S, e->valuestring)) == NULL) return oom(L);
  }
  return PROF_OK;
}

/*
** Duplicate keys anywhere inside v, the free-form object at path: DeepSpeed refuses them in its
** sections, and a script's arguments deserve the same (one of the two would be lost silently).
*/
static int check_duplicates(const Loader *L, const cJSON *v, const char *path) {
  const cJSON *e;
  char sub[PATH_SIZE];
  int i = 0;
  cJSON_ArrayForEach(e, v) {
    if (cJSON_IsObject(v)) {
      snprintf(sub, sizeof sub, "%s.%s", path, e->string);
      for (const cJSON *prev = v->child; prev != e; prev = prev->next)
        if (strcmp(prev->string, e->string) == 0) return fail(L, sub, "duplicate key \"%s\"", sub);
    } else {
      snprintf(sub, sizeof sub, "%s[%d]", path, i++);
    }
    if (cJSON_IsObject(e) || cJSON_IsArray(e)) TRY(check_duplicates(L, e, sub));
  }
  return PROF_OK;
}

/* An object replacing *out, copied as plain JSON; null unsets where k allows. */
static int read_object(const Loader *L, const cJSON *v, const prof_ConfigKey *k,
                       prof_JsonValue **out) {
  char got[64];
  prof_JsonValue *obj;
  if (!(cJSON_IsObject(v) || (k->nullable && cJSON_IsNull(v))))
    return fail(L, k->path, "%s: expected an object%s, got %s", k->path,
                k->nullable ? " or null" : "", describe(v, got, sizeof got));
  if (cJSON_IsObject(v)) TRY(check_duplicates(L, v, k->path));
  if (*out != NULL) {
    free_json(L->S, *out);
    profI_free(L->S, *out, sizeof **out);
    *out = NULL;
  }
  if (cJSON_IsNull(v)) return PROF_OK;
  if ((obj = *out = profI_alloc(L->S, sizeof *obj)) == NULL) return oom(L);
  memset(obj, 0, sizeof *obj);  /* from here prof_config_free can release a half-filled copy */
  return copy_json(L, v, obj);
}

/* Reads v into the field of cfg that schema row k names. */
static int read_row(const Loader *L, const cJSON *v, const prof_ConfigKey *k, prof_Config *cfg) {
  char *at = (char *)cfg + k->offset;
  int index;
  switch (k->type) {
    case PROF_CONFIG_BOOL: return read_bool(L, v, k->path, (int *)(void *)at);
    case PROF_CONFIG_INT:
      if (k->nullable && cJSON_IsNull(v)) return PROF_OK;  /* 0: not set */
      return read_int(L, v, k->path, k->min, (int64_t *)(void *)at);
    case PROF_CONFIG_NUMBER:
      return read_number(L, v, k->path, (double)k->min, (double *)(void *)at);
    case PROF_CONFIG_STRING: return read_string(L, v, k, (char **)(void *)at);
    case PROF_CONFIG_ENUM:
      TRY(read_choice(L, v, k->path, k->choices, &index));
      *(int *)(void *)at = index;
      return PROF_OK;
    case PROF_CONFIG_STRINGS:
      return read_strings(L, v, k, (char ***)(void *)at,
                          (int32_t *)(void *)((char *)cfg + k->count_offset));
    case PROF_CONFIG_OBJECT: return read_object(L, v, k, (prof_JsonValue **)(void *)at);
    case PROF_CONFIG_SECTION: break;
  }
  return PROF_OK;
}

/* {====================== keys ======================} */

/*
** Checks the keys of obj (the object at path, "" for the top level) in file order, then the
** objects inside it: duplicates anywhere (DeepSpeed refuses them too: silently taking one would
** hide a typo'd merge), unknown keys of the core's and DeepSpeed's documented sections, sections
** that are not objects, and the few DeepSpeed values whose type is documented.
*/
static int check_object(const Loader *L, const cJSON *obj, const char *path) {
  const cJSON *item;
  char sub[PATH_SIZE], got[64];
  cJSON_ArrayForEach(item, obj) {
    const char *key = item->string;
    int cls = profC_classify(path, key);
    snprintf(sub, sizeof sub, "%s%s%s", path, path[0] != '\0' ? "." : "", key);
    for (const cJSON *prev = obj->child; prev != item; prev = prev->next)
      if (strcmp(prev->string, key) == 0) return fail(L, sub, "duplicate key \"%s\"", sub);
    if (cls == PROFC_UNKNOWN) {
      const char *near = profC_closest(path, key);
      if (near != NULL)
        return fail(L, sub, "unknown key \"%s\" (did you mean \"%s\"?)", sub, near);
      return fail(L, sub, "unknown key \"%s\"", sub);
    }
  }
  cJSON_ArrayForEach(item, obj) {
    int cls = profC_classify(path, item->string), type;
    const prof_ConfigKey *row;
    snprintf(sub, sizeof sub, "%s%s%s", path, path[0] != '\0' ? "." : "", item->string);
    if (cls == PROFC_KNOWN) {
      row = profC_row(sub, strlen(sub));
      if (row == NULL || row->type != PROF_CONFIG_SECTION) continue;  /* read_rows checks it */
      if (!cJSON_IsObject(item))
        return fail(L, sub, "%s: expected an object, got %s", sub, describe(item, got, sizeof got));
      TRY(check_object(L, item, sub));
      continue;
    }
    /* DeepSpeed's: a documented section must be an object (or null: not set) */
    if (profC_deepspeed_keys(sub) != NULL && !cJSON_IsObject(item) && !cJSON_IsNull(item))
      return fail(L, sub, "%s: expected an object, got %s", sub, describe(item, got, sizeof got));
    type = profC_deepspeed_type(sub);
    /* "auto" (Hugging Face's placeholder) means DeepSpeed's default: the engine says so */
    if (cJSON_IsString(item) && strcmp(item->valuestring, "auto") == 0) type = -1;
    if (type == PROF_CONFIG_BOOL) {
      int b;
      TRY(read_bool(L, item, sub, &b));
    } else if (type == PROF_CONFIG_INT) {
      int64_t i;
      TRY(read_int(L, item, sub, 0, &i));
    }
    if (cJSON_IsObject(item)) TRY(check_object(L, item, sub));
    if (cJSON_IsArray(item)) {
      const cJSON *e;
      int i = 0;
      cJSON_ArrayForEach(e, item) {
        char elem[PATH_SIZE + 16];
        snprintf(elem, sizeof elem, "%s[%d]", sub, i++);
        if (cJSON_IsObject(e)) TRY(check_object(L, e, elem));
      }
    }
  }
  return PROF_OK;
}

/* The value at row k's path in root, or NULL when it or a section on the way is absent. */
static const cJSON *lookup(const cJSON *root, const prof_ConfigKey *k) {
  const char *seg = k->path;
  const cJSON *cur = root;
  for (;;) {
    const char *dot = strchr(seg, '.');
    size_t n = dot != NULL ? (size_t)(dot - seg) : strlen(seg);
    const cJSON *child = NULL, *c;
    if (!cJSON_IsObject(cur)) return NULL;
    cJSON_ArrayForEach(c, cur) {
      if (strncmp(c->string, seg, n) == 0 && c->string[n] == '\0') {
        child = c;
        break;
      }
    }
    if (child == NULL || dot == NULL) return child;
    cur = child;
    seg = dot + 1;
  }
}

/* Every row's default, read as a file's value would be. */
static int apply_defaults(const Loader *L, prof_Config *cfg) {
  const prof_ConfigKey *k;
  for (int32_t i = 0; (k = prof_config_key(i)) != NULL; i++) {
    cJSON *v;
    int rc;
    if (k->type == PROF_CONFIG_SECTION) continue;
    v = cJSON_Parse(k->default_json);
    if (v == NULL) return oom(L);  /* the schema's defaults are valid JSON (test_config_schema) */
    rc = read_row(L, v, k, cfg);
    cJSON_Delete(v);
    TRY(rc);
  }
  return PROF_OK;
}

/*
** Whether v is "auto" given to a row that cannot hold a string: Hugging Face's DeepSpeed
** integration writes it for the batch keys (its Trainer fills them in); without a Trainer it can
** only mean "choose the default", so the row keeps its default and the run says so.
*/
static int is_auto(const cJSON *v, const prof_ConfigKey *k) {
  return (k->type == PROF_CONFIG_INT || k->type == PROF_CONFIG_NUMBER ||
          k->type == PROF_CONFIG_BOOL) && cJSON_IsString(v) && strcmp(v->valuestring, "auto") == 0;
}

/* cfg->auto_keys: the rows of root given as "auto", in schema order. */
static int record_auto(const Loader *L, const cJSON *root, prof_Config *cfg) {
  const prof_ConfigKey *k;
  int32_t n = 0, j = 0;
  for (int32_t i = 0; (k = prof_config_key(i)) != NULL; i++) {
    const cJSON *v = k->type == PROF_CONFIG_SECTION ? NULL : lookup(root, k);
    n += v != NULL && is_auto(v, k);
  }
  if (n == 0) return PROF_OK;
  if ((cfg->auto_keys = profI_alloc(L->S, (size_t)n * sizeof *cfg->auto_keys)) == NULL)
    return oom(L);
  memset(cfg->auto_keys, 0, (size_t)n * sizeof *cfg->auto_keys);
  cfg->n_auto_keys = n;
  for (int32_t i = 0; (k = prof_config_key(i)) != NULL; i++) {
    const cJSON *v = k->type == PROF_CONFIG_SECTION ? NULL : lookup(root, k);
    if (v == NULL || !is_auto(v, k)) continue;
    if ((cfg->auto_keys[j++] = profI_strdup(L->S, k->path)) == NULL) return oom(L);
  }
  return PROF_OK;
}

static int read_rows(const Loader *L, const cJSON *root, prof_Config *cfg) {
  const prof_ConfigKey *k;
  for (int32_t i = 0; (k = prof_config_key(i)) != NULL; i++) {
    const cJSON *v;
    if (k->type == PROF_CONFIG_SECTION || (v = lookup(root, k)) == NULL) continue;
    if (is_auto(v, k)) continue;  /* the default stays; record_auto lists it */
    TRY(read_row(L, v, k, cfg));
  }
  if (cfg->model_parallel_rank >= cfg->model_parallel_size)
    return fail(L, "parallel.model_parallel_rank",
                "parallel.model_parallel_rank: %lld is not below model_parallel_size %lld",
                (long long)cfg->model_parallel_rank, (long long)cfg->model_parallel_size);
  return PROF_OK;
}

/* {====================== DeepSpeed's values ======================} */

/*
** Whether a top-level item is DeepSpeed's, given to the engine, or neither. An optimizer section
** without a type is DeepSpeed's but not given: DeepSpeed builds nothing from it either.
*/
static int is_deepspeed(const cJSON *item) {
  return profC_classify("", item->string) == PROFC_DEEPSPEED;
}

static int handed_over(const cJSON *item) {
  if (!is_deepspeed(item) || cJSON_IsNull(item)) return 0;
  if (strcmp(item->string, "optimizer") == 0) {
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(item, "type");
    return type != NULL && !cJSON_IsNull(type);
  }
  return 1;
}

/* DeepSpeed keys accepted but unused: all of them but what is handed over, and the optimizer. */
static int unused(const cJSON *item) {
  if (!is_deepspeed(item)) return 0;
  if (strcmp(item->string, "optimizer") == 0) return !cJSON_IsNull(item) && !handed_over(item);
  return 1;
}

/* Lists the unused keys of root in file order, for --verbose. */
static int record_unused(const Loader *L, const cJSON *root, prof_Config *cfg) {
  const cJSON *item;
  int32_t n = 0, i = 0;
  cJSON_ArrayForEach(item, root) n += unused(item);
  if (n == 0) return PROF_OK;
  cfg->unused_keys = profI_alloc(L->S, (size_t)n * sizeof *cfg->unused_keys);
  if (cfg->unused_keys == NULL) return oom(L);
  memset(cfg->unused_keys, 0, (size_t)n * sizeof *cfg->unused_keys);
  cfg->n_unused_keys = n;
  cJSON_ArrayForEach(item, root) {
    if (!unused(item)) continue;
    if ((cfg->unused_keys[i++] = profI_strdup(L->S, item->string)) == NULL) return oom(L);
  }
  return PROF_OK;
}

static void free_json(prof_State *S, prof_JsonValue *v) {
  for (int32_t i = 0; i < v->n_items; i++) free_json(S, &v->items[i]);
  if (v->items != NULL) profI_free(S, v->items, (size_t)v->n_items * sizeof *v->items);
  profI_strfree(S, v->key);
  profI_strfree(S, v->string);
}

/* Copies v (without its key) into *out, which is zeroed; on failure *out stays freeable. */
static int copy_json(const Loader *L, const cJSON *v, prof_JsonValue *out) {
  const cJSON *e;
  int32_t n = 0;
  if (cJSON_IsNull(v)) out->type = PROF_JSON_NULL;
  else if (cJSON_IsFalse(v)) out->type = PROF_JSON_FALSE;
  else if (cJSON_IsTrue(v)) out->type = PROF_JSON_TRUE;
  else if (cJSON_IsNumber(v)) out->type = PROF_JSON_NUMBER;
  else if (cJSON_IsString(v)) out->type = PROF_JSON_STRING;
  else if (cJSON_IsArray(v)) out->type = PROF_JSON_ARRAY;
  else out->type = PROF_JSON_OBJECT;
  out->number = cJSON_IsNumber(v) ? v->valuedouble : 0.0;
  if (out->type == PROF_JSON_STRING && (out->string = profI_strdup(L->S, v->valuestring)) == NULL)
    return oom(L);
  if (out->type != PROF_JSON_ARRAY && out->type != PROF_JSON_OBJECT) return PROF_OK;
  cJSON_ArrayForEach(e, v) n++;
  if (n == 0) return PROF_OK;
  if ((out->items = profI_alloc(L->S, (size_t)n * sizeof *out->items)) == NULL) return oom(L);
  memset(out->items, 0, (size_t)n * sizeof *out->items);
  out->n_items = n;
  n = 0;
  cJSON_ArrayForEach(e, v) {
    prof_JsonValue *item = &out->items[n++];
    if (out->type == PROF_JSON_OBJECT && (item->key = profI_strdup(L->S, e->string)) == NULL)
      return oom(L);
    TRY(copy_json(L, e, item));
  }
  return PROF_OK;
}

/* cfg->deepspeed: the top-level items handed over, as one object. */
static int record_deepspeed(const Loader *L, const cJSON *root, prof_Config *cfg) {
  const cJSON *item;
  prof_JsonValue *obj;
  int32_t n = 0, i = 0;
  cJSON_ArrayForEach(item, root) n += handed_over(item);
  if (n == 0) return PROF_OK;
  if ((obj = cfg->deepspeed = profI_alloc(L->S, sizeof *obj)) == NULL) return oom(L);
  memset(obj, 0, sizeof *obj);
  obj->type = PROF_JSON_OBJECT;
  if ((obj->items = profI_alloc(L->S, (size_t)n * sizeof *obj->items)) == NULL) return oom(L);
  memset(obj->items, 0, (size_t)n * sizeof *obj->items);
  obj->n_items = n;
  cJSON_ArrayForEach(item, root) {
    prof_JsonValue *v;
    if (!handed_over(item)) continue;
    v = &obj->items[i++];
    if ((v->key = profI_strdup(L->S, item->string)) == NULL) return oom(L);
    TRY(copy_json(L, item, v));
  }
  return PROF_OK;
}

static int load_tree(const Loader *L, const cJSON *root, prof_Config *cfg) {
  TRY(check_object(L, root, ""));
  TRY(read_rows(L, root, cfg));
  TRY(record_auto(L, root, cfg));
  TRY(record_unused(L, root, cfg));
  return record_deepspeed(L, root, cfg);
}

/* {====================== file and overrides ======================} */

/* Reads all of path into a NUL-terminated block of *size bytes (pipes work: no seeking). */
static int read_file(const Loader *L, char **text, size_t *size, size_t *len) {
  FILE *f;
  if (L->file[0] == '\0')  /* profrun '' x.lua: ": cannot open" would name nothing */
    return profI_error(L->S, PROF_ERRIO, "the config path is empty: give a CONFIG.json file");
  f = fopen(L->file, "rb");
  char *buf = NULL;
  size_t cap = 0, n = 0;
  int rc = PROF_OK;
  if (f == NULL)
    return profI_error(L->S, PROF_ERRIO, "%s: cannot open: %s", L->name, strerror(errno));
  for (;;) {
    size_t got;
    if (cap - n < 2) {
      size_t ncap = cap == 0 ? 4096 : 2 * cap;
      char *nbuf = ncap > cap ? profI_realloc(L->S, buf, cap, ncap) : NULL;
      if (nbuf == NULL) {
        rc = oom(L);
        goto end;
      }
      buf = nbuf;
      cap = ncap;
    }
    got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) {
      if (ferror(f))
        rc = profI_error(L->S, PROF_ERRIO, "%s: cannot read: %s", L->name, strerror(errno));
      break;
    }
  }
  buf[n] = '\0';
end:
  fclose(f);
  if (rc != PROF_OK) {
    profI_free(L->S, buf, cap);
    return rc;
  }
  *text = buf;
  *size = cap;
  *len = n;
  return PROF_OK;
}

/* The 1-based line and column (in bytes) of offset pos. */
static void line_col(const char *text, size_t pos, long *line, long *col) {
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < pos; i++) {
    if (text[i] == '\n') {
      ++*line;
      *col = 1;
    } else {
      ++*col;
    }
  }
}

/* FILE:LINE:COLUMN of offset pos, with the text that follows it (or the comma that is wrong). */
static int syntax_error(const Loader *L, const char *text, size_t len, size_t pos) {
  char near[EXCERPT + 1];
  long line, col;
  char bracket = '}';
  size_t comma = profC_trailing_comma(text, len, pos, &bracket);
  if (comma != (size_t)-1) {
    line_col(text, comma, &line, &col);
    return profI_error(L->S, PROF_ERRCONFIG, "%s:%ld:%ld: invalid JSON: trailing comma before "
                       "'%c' (JSON allows none)", L->name, line, col, bracket);
  }
  line_col(text, pos, &line, &col);
  if (pos >= len)
    return profI_error(L->S, PROF_ERRCONFIG, "%s:%ld:%ld: invalid JSON at the end of the file",
                       L->name, line, col);
  if (text[pos] == '\0')
    return profI_error(L->S, PROF_ERRCONFIG, "%s:%ld:%ld: invalid JSON: a NUL byte", L->name,
                       line, col);
  if (excerpt(text + pos, EXCERPT, near) == 0)
    return profI_error(L->S, PROF_ERRCONFIG, "%s:%ld:%ld: invalid JSON at the end of the line",
                       L->name, line, col);
  return profI_error(L->S, PROF_ERRCONFIG, "%s:%ld:%ld: invalid JSON near '%s'", L->name, line,
                     col, near);
}

static int parse_text(const Loader *L, const char *text, size_t len, cJSON **root) {
  char got[64];
  const char *end = NULL;
  size_t stop = strlen(text), nul;  /* stop < len when the file holds a NUL byte */
  /* The length counts the terminator: cJSON requires it when asked to reject trailing text. */
  cJSON *r = cJSON_ParseWithLengthOpts(text, stop + 1, &end, 1);
  if (r == NULL || stop != len) {
    size_t pos = r != NULL ? stop : end != NULL ? (size_t)(end - text) : 0;
    cJSON_Delete(r);
    return syntax_error(L, text, len, pos);
  }
  if ((nul = profC_find_nul_escape(text, len)) != (size_t)-1) {
    long line, col;
    line_col(text, nul, &line, &col);
    cJSON_Delete(r);
    return profI_error(L->S, PROF_ERRCONFIG, "%s:%ld:%ld: a NUL character (\\u0000) in a string: "
                       "no key or path may hold one", L->name, line, col);
  }
  if (!cJSON_IsObject(r)) {
    profI_error(L->S, PROF_ERRCONFIG, "%s: the top level must be a JSON object, got %s", L->name,
                describe(r, got, sizeof got));
    cJSON_Delete(r);
    return PROF_ERRCONFIG;
  }
  *root = r;
  return PROF_OK;
}

/*
** The first key of the file's tree (in document order) that repeats an earlier sibling; *nth
** counts the keys before it, 1-based. Checked before --set is grafted: the file is to blame.
*/
static const cJSON *file_duplicate(const cJSON *v, long *nth, char *path, size_t size) {
  const cJSON *e;
  size_t at = strlen(path);
  int i = 0;
  cJSON_ArrayForEach(e, v) {
    if (cJSON_IsObject(v)) {
      ++*nth;
      snprintf(path + at, size - at, "%s%s", at > 0 ? "." : "", e->string);
      for (const cJSON *prev = v->child; prev != e; prev = prev->next)
        if (strcmp(prev->string, e->string) == 0) return e;
    } else {
      snprintf(path + at, size - at, "[%d]", i++);
    }
    if (cJSON_IsObject(e) || cJSON_IsArray(e)) {
      const cJSON *d = file_duplicate(e, nth, path, size);
      if (d != NULL) return d;
    }
    path[at] = '\0';
  }
  return NULL;
}

/* Offset of the nth key (1-based) in valid JSON text: a string followed by ':' is a key. */
static size_t key_offset(const char *text, size_t len, long nth) {
  for (size_t i = 0; i < len; i++) {
    if (text[i] != '"') continue;
    size_t start = i++;
    while (i < len && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
    size_t j = i + 1;
    while (j < len && (text[j] == ' ' || text[j] == '\t' || text[j] == '\n' || text[j] == '\r')) j++;
    if (j < len && text[j] == ':' && --nth == 0) return start;
  }
  return 0;
}

/* A duplicate key in the file itself, as FILE:LINE:COLUMN of its second occurrence. */
static int check_file_duplicates(const Loader *L, const cJSON *root, const char *text, size_t len) {
  char path[PATH_SIZE] = "";
  long nth = 0, line, col;
  if (file_duplicate(root, &nth, path, sizeof path) == NULL) return PROF_OK;
  line_col(text, key_offset(text, len, nth), &line, &col);
  return profI_error(L->S, PROF_ERRCONFIG, "%s:%ld:%ld: duplicate key \"%s\"", L->name, line, col,
                     path);
}

/*
** Grafts "a.b=value" onto root: value as JSON if it parses, else as a string; missing objects on
** the way are created, an existing value is replaced in place (so file order is kept).
*/
static int apply_override(const Loader *L, cJSON *root, const char *ov) {
  size_t size = strlen(ov) + 1;
  char *key = profI_strdup(L->S, ov), *seg, *value, *eq;
  cJSON *item = NULL, *cur = root;
  int rc = PROF_OK;
  if (key == NULL) return oom(L);
  eq = strchr(key, '=');
  if (eq == NULL || eq == key) {
    rc = profI_error(L->S, PROF_ERRCONFIG, "--set %s: expected KEY=VALUE, e.g. "
                     "flops_profiler.top_modules=3", ov);
    goto end;
  }
  *eq = '\0';
  value = eq + 1;
  if (key[0] == '.' || eq[-1] == '.' || strstr(key, "..") != NULL) {
    rc = profI_error(L->S, PROF_ERRCONFIG, "--set %s: empty key name in \"%s\"", ov, key);
    goto end;
  }
  item = cJSON_ParseWithLengthOpts(value, strlen(value) + 1, NULL, 1);
  if (item != NULL && profC_find_nul_escape(value, strlen(value)) != (size_t)-1) {
    rc = profI_error(L->S, PROF_ERRCONFIG, "--set %s: a NUL character (\\u0000) in a string: "
                     "no key or path may hold one", ov);
    goto end;
  }
  if (item == NULL) item = cJSON_CreateString(value);
  if (item == NULL) {
    rc = oom(L);
    goto end;
  }
  for (seg = key;;) {
    char *dot = strchr(seg, '.');
    cJSON *child;
    if (dot == NULL) break;
    *dot = '\0';
    child = cJSON_GetObjectItemCaseSensitive(cur, seg);
    if (child == NULL) {
      if ((child = cJSON_CreateObject()) == NULL || !cJSON_AddItemToObject(cur, seg, child)) {
        cJSON_Delete(child);
        rc = oom(L);
        goto end;
      }
    } else if (!cJSON_IsObject(child)) {
      char got[64];
      rc = profI_error(L->S, PROF_ERRCONFIG, "--set %s: %.*s: expected an object, got %s", ov,
                       (int)(dot - key), ov, describe(child, got, sizeof got));
      goto end;
    }
    cur = child;
    seg = dot + 1;
  }
  if (cJSON_GetObjectItemCaseSensitive(cur, seg) != NULL
          ? !cJSON_ReplaceItemInObjectCaseSensitive(cur, seg, item)
          : !cJSON_AddItemToObject(cur, seg, item)) {
    rc = oom(L);
    goto end;
  }
  item = NULL;  /* owned by the tree now */
end:
  cJSON_Delete(item);
  profI_free(L->S, key, size);  /* not strfree: the copy was cut at '=' and '.' */
  return rc;
}

/* Lists the key path of every override once, in order of first appearance. */
static int record_forced(const Loader *L, prof_Config *cfg) {
  int32_t n = 0, k = 0;
  for (int32_t pass = 0; pass < 2; pass++) {
    for (int32_t i = 0; i < L->n_overrides; i++) {
      const char *ov = L->overrides[i];
      size_t len = (size_t)(strchr(ov, '=') - ov);
      int seen = 0;
      for (int32_t j = 0; j < i && !seen; j++)
        seen = strncmp(L->overrides[j], ov, len + 1) == 0;
      if (seen) continue;
      if (pass == 0) {
        n++;
        continue;
      }
      if ((cfg->forced_keys[k] = profI_alloc(L->S, len + 1)) == NULL) return oom(L);
      memcpy(cfg->forced_keys[k], ov, len);
      cfg->forced_keys[k++][len] = '\0';
    }
    if (pass == 0) {
      if (n == 0) return PROF_OK;
      cfg->forced_keys = profI_alloc(L->S, (size_t)n * sizeof *cfg->forced_keys);
      if (cfg->forced_keys == NULL) return oom(L);
      memset(cfg->forced_keys, 0, (size_t)n * sizeof *cfg->forced_keys);
      cfg->n_forced_keys = n;
    }
  }
  return PROF_OK;
}

/* {====================== public ======================} */

int prof_config_load(prof_State *S, const char *path, const char *const *overrides,
                     int32_t n_overrides, prof_Config **out) {
  Loader L = { S, path, overrides, n_overrides, NULL, "" };
  prof_Config *cfg = NULL;
  cJSON *root = NULL;
  char *text = NULL;
  size_t text_size = 0, len = 0;
  int rc = PROF_OK;
  if (out == NULL || n_overrides < 0 || (n_overrides > 0 && overrides == NULL))
    return profI_error(S, PROF_ERRARG, "prof_config_load: bad arguments");
  *out = NULL;
  for (int32_t i = 0; i < n_overrides; i++)
    if (overrides[i] == NULL)
      return profI_error(S, PROF_ERRARG, "prof_config_load: override %d is NULL", (int)i);
  if (path != NULL) L.name = profI_short_path(path, L.name_buf, sizeof L.name_buf);
  if ((cfg = profI_alloc(S, sizeof *cfg)) == NULL) return oom(&L);
  memset(cfg, 0, sizeof *cfg);
  cfg->size = sizeof *cfg;
  if ((rc = apply_defaults(&L, cfg)) != PROF_OK) goto end;
  if (path != NULL) {
    if ((rc = read_file(&L, &text, &text_size, &len)) != PROF_OK) goto end;
    if ((rc = parse_text(&L, text, len, &root)) != PROF_OK) goto end;
    if ((rc = check_file_duplicates(&L, root, text, len)) != PROF_OK) goto end;
  } else if ((root = cJSON_CreateObject()) == NULL) {
    rc = oom(&L);
    goto end;
  }
  for (int32_t i = 0; i < n_overrides; i++)
    if ((rc = apply_override(&L, root, overrides[i])) != PROF_OK) goto end;
  if ((rc = load_tree(&L, root, cfg)) != PROF_OK) goto end;
  rc = record_forced(&L, cfg);
end:
  cJSON_Delete(root);
  profI_free(S, text, text_size);
  if (rc != PROF_OK) {
    prof_config_free(S, cfg);
    return rc;
  }
  *out = cfg;
  return PROF_OK;
}

void prof_config_free(prof_State *S, prof_Config *cfg) {
  const prof_ConfigKey *k;
  if (cfg == NULL) return;
  for (int32_t i = 0; (k = prof_config_key(i)) != NULL; i++) {
    char *at = (char *)cfg + k->offset;
    if (k->type == PROF_CONFIG_STRING) profI_strfree(S, *(char **)(void *)at);
    if (k->type == PROF_CONFIG_STRINGS)
      free_strings(S, *(char ***)(void *)at, *(int32_t *)(void *)((char *)cfg + k->count_offset));
    if (k->type == PROF_CONFIG_OBJECT && *(prof_JsonValue **)(void *)at != NULL) {
      free_json(S, *(prof_JsonValue **)(void *)at);
      profI_free(S, *(prof_JsonValue **)(void *)at, sizeof(prof_JsonValue));
    }
  }
  free_strings(S, cfg->unused_keys, cfg->n_unused_keys);
  free_strings(S, cfg->auto_keys, cfg->n_auto_keys);
  free_strings(S, cfg->forced_keys, cfg->n_forced_keys);
  if (cfg->deepspeed != NULL) {
    free_json(S, cfg->deepspeed);
    profI_free(S, cfg->deepspeed, sizeof *cfg->deepspeed);
  }
  profI_free(S, cfg, sizeof *cfg);
}
