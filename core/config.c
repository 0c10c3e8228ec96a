/* config.c — loading a DeepSpeed-style JSON config: parse, apply --set overrides, validate. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <cJSON.h>

#include "config_internal.h"

/*
** The file is parsed into a cJSON tree, overrides are grafted onto that tree, and only then is it
** validated, so a --set value meets exactly the checks a file value does. The tree lives only
** inside prof_config_load; what survives is copied into prof_Config through S's allocator.
** (cJSON's own nodes come from its process-wide hooks, which a per-state allocator cannot reach.)
**
** null is accepted, meaning "not set", where the default is "not set" (the batch keys, device,
** output_file, format, report.script): DeepSpeed's own defaults for its keys are None.
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
} Loader;

static const char *const devices[] = { "meta", "cpu", "cuda" };
static const char *const conventions[] = { "exact", "deepspeed" };  /* prof_Conventions order */

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
  return profI_error(L->S, PROF_ERRCONFIG, "%s: %s", L->file != NULL ? L->file : "config", msg);
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

/* Like read_int, but null leaves *out at its default ("not set"). */
static int read_int_or_null(const Loader *L, const cJSON *v, const char *path, int64_t min,
                            int64_t *out) {
  return cJSON_IsNull(v) ? PROF_OK : read_int(L, v, path, min, out);
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

/* A string copied into *out (which is NULL); with nullable, null leaves *out NULL. */
static int read_string(const Loader *L, const cJSON *v, const char *path, int nullable,
                       char **out) {
  char got[64];
  if (nullable && cJSON_IsNull(v)) return PROF_OK;
  if (!cJSON_IsString(v))
    return fail(L, path, "%s: expected a string%s, got %s", path, nullable ? " or null" : "",
                describe(v, got, sizeof got));
  *out = profI_strdup(L->S, v->valuestring);
  return *out != NULL ? PROF_OK : oom(L);
}

/* One of n choices; *index receives its position. */
static int read_choice(const Loader *L, const cJSON *v, const char *path,
                       const char *const *choices, int n, int *index) {
  char list[128] = "", got[64];
  size_t used = 0;
  if (cJSON_IsString(v))
    for (int i = 0; i < n; i++)
      if (strcmp(v->valuestring, choices[i]) == 0) {
        *index = i;
        return PROF_OK;
      }
  for (int i = 0; i < n; i++) {
    int w = snprintf(list + used, sizeof list - used, "%s\"%s\"", i > 0 ? ", " : "", choices[i]);
    if (w < 0 || (size_t)w >= sizeof list - used) break;
    used += (size_t)w;
  }
  return fail(L, path, "%s: expected one of %s, got %s", path, list,
              describe(v, got, sizeof got));
}

/* An array of strings. Everything is checked before anything is allocated. */
static int read_strings(const Loader *L, const cJSON *v, const char *path, char ***out,
                        int32_t *n) {
  char got[64], elem[PATH_SIZE];
  const cJSON *e;
  int count = 0, i = 0;
  if (!cJSON_IsArray(v))
    return fail(L, path, "%s: expected an array of strings, got %s", path,
                describe(v, got, sizeof got));
  cJSON_ArrayForEach(e, v) {
    if (!cJSON_IsString(e)) {
      snprintf(elem, sizeof elem, "%s[%d]", path, count);
      return fail(L, elem, "%s: expected a string, got %s", elem, describe(e, got, sizeof got));
    }
    count++;
  }
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

/* {====================== sections ======================} */

/*
** Rejects unknown and duplicate keys of obj (a section named prefix, NULL at the top level), in
** file order, and counts the DeepSpeed keys profrun ignores into *n_deepspeed. what, when not
** NULL, says in an unknown key's message whose keys these are (which keys a section has can
** depend on another value, as optimizer.params depends on optimizer.type).
*/
static int check_keys_of(const Loader *L, const cJSON *obj, profC_Section sec, const char *prefix,
                         const char *what, int32_t *n_deepspeed) {
  const cJSON *item;
  char path[PATH_SIZE];
  cJSON_ArrayForEach(item, obj) {
    const char *key = item->string;
    if (prefix != NULL) snprintf(path, sizeof path, "%s.%s", prefix, key);
    else snprintf(path, sizeof path, "%s", key);
    /* DeepSpeed refuses duplicates too; silently taking one would hide a typo'd merge. */
    for (const cJSON *prev = obj->child; prev != item; prev = prev->next)
      if (strcmp(prev->string, key) == 0) return fail(L, path, "duplicate key \"%s\"", path);
    switch (profC_classify(sec, key)) {
      case PROFC_KNOWN:
        break;
      case PROFC_DEEPSPEED:
        if (n_deepspeed != NULL) (*n_deepspeed)++;
        break;
      default: {
        const char *near = profC_closest(sec, key);
        const char *sep = what != NULL ? " " : "";
        if (what == NULL) what = "";
        if (near != NULL)
          return fail(L, path, "unknown key \"%s\"%s%s (did you mean \"%s\"?)", path, sep, what,
                      near);
        return fail(L, path, "unknown key \"%s\"%s%s", path, sep, what);
      }
    }
  }
  return PROF_OK;
}

static int check_keys(const Loader *L, const cJSON *obj, profC_Section sec, const char *prefix,
                      int32_t *n_deepspeed) {
  return check_keys_of(L, obj, sec, prefix, NULL, n_deepspeed);
}

/* The object at key (a section), or NULL when absent; a non-object is an error. */
static int section(const Loader *L, const cJSON *root, const char *key, profC_Section sec,
                   const cJSON **out) {
  char got[64];
  *out = cJSON_GetObjectItemCaseSensitive(root, key);
  if (*out == NULL) return PROF_OK;
  if (!cJSON_IsObject(*out))
    return fail(L, key, "%s: expected an object, got %s", key, describe(*out, got, sizeof got));
  return check_keys(L, *out, sec, key, NULL);
}

static const cJSON *field(const cJSON *obj, const char *key) {
  return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static int load_flops(const Loader *L, const cJSON *obj, prof_FlopsConfig *f) {
  const cJSON *v;
  int conv;
  if ((v = field(obj, "enabled")) != NULL)
    TRY(read_bool(L, v, "flops_profiler.enabled", &f->enabled));
  if ((v = field(obj, "recompute_fwd_factor")) != NULL)
    TRY(read_number(L, v, "flops_profiler.recompute_fwd_factor", 0.0, &f->recompute_fwd_factor));
  if ((v = field(obj, "profile_step")) != NULL)
    TRY(read_int(L, v, "flops_profiler.profile_step", 0, &f->profile_step));
  if ((v = field(obj, "module_depth")) != NULL)
    TRY(read_int(L, v, "flops_profiler.module_depth", -1, &f->module_depth));
  if ((v = field(obj, "top_modules")) != NULL)
    TRY(read_int(L, v, "flops_profiler.top_modules", 1, &f->top_modules));
  if ((v = field(obj, "detailed")) != NULL)
    TRY(read_bool(L, v, "flops_profiler.detailed", &f->detailed));
  if ((v = field(obj, "output_file")) != NULL)
    TRY(read_string(L, v, "flops_profiler.output_file", 1, &f->output_file));
  if ((v = field(obj, "conventions")) != NULL) {
    TRY(read_choice(L, v, "flops_profiler.conventions", conventions, 2, &conv));
    f->conventions = (prof_Conventions)prof_conventions_parse(conventions[conv]);
  }
  /* "deepspeed", "json", "csv" or a report script path: the report layer decides. */
  if ((v = field(obj, "format")) != NULL)
    TRY(read_string(L, v, "flops_profiler.format", 1, &f->format));
  if ((v = field(obj, "ignore_modules")) != NULL)
    TRY(read_strings(L, v, "flops_profiler.ignore_modules", &f->ignore_modules,
                     &f->n_ignore_modules));
  if ((v = field(obj, "rules")) != NULL)
    TRY(read_strings(L, v, "flops_profiler.rules", &f->rules, &f->n_rules));
  return PROF_OK;
}

/* {====================== the optimizer section ======================} */

/*
** deepspeed.initialize without an optimizer builds one from this section; profrun follows its
** rules (deepspeedai/DeepSpeed main @ edaa7221: DeepSpeedConfig.__init__ in runtime/config.py,
** DeepSpeedEngine._configure_basic_optimizer in runtime/engine.py, ops/adam/fused_adam.py):
**  - The type is lower-cased when it names one of DeepSpeed's own optimizers ("Adam", "ADAMW");
**    any other name is looked up in torch.optim as written, so "SGD" works and "sgd" does not.
**  - Without a type (absent or null) nothing is built and params are not read; the section is
**    then listed with the unused keys.
**  - Adam and AdamW: torch_adam (default false) and adam_w_mode (default true) are taken out, the
**    rest goes to the constructor. Adam with adam_w_mode is AdamW; AdamW stays AdamW whatever
**    adam_w_mode says. Without torch_adam the constructor is FusedAdam (weight_decay 0 by
**    default, no AMSGrad, no maximize); with it torch.optim.Adam or AdamW (no bias_correction).
**  - max_grad_norm among the params is an error that points to gradient_clipping.
** Here each value is checked against the constructor it would reach; lua/prof/engine.lua applies
** the defaults and builds the optimizer.
*/

typedef enum ParamKind { NUMBER, BOOLEAN, BETAS } ParamKind;

typedef struct OptimParam {
  const char *key;
  uint32_t bit;
  ParamKind kind;
  double min;       /* NUMBER: the smallest valid value, as torch's constructors check it */
  size_t offset;    /* of the field in prof_OptimizerConfig */
} OptimParam;

#define AT(field) offsetof(prof_OptimizerConfig, field)

/* Both types' params: config_keys.c has already refused those the type lacks. */
static const OptimParam optim_params[] = {
  { "lr", PROF_OPTIM_LR, NUMBER, 0.0, AT(lr) },
  { "betas", PROF_OPTIM_BETAS, BETAS, 0.0, AT(betas) },
  { "eps", PROF_OPTIM_EPS, NUMBER, 0.0, AT(eps) },
  { "weight_decay", PROF_OPTIM_WEIGHT_DECAY, NUMBER, 0.0, AT(weight_decay) },
  { "amsgrad", PROF_OPTIM_AMSGRAD, BOOLEAN, 0.0, AT(amsgrad) },
  { "maximize", PROF_OPTIM_MAXIMIZE, BOOLEAN, 0.0, AT(maximize) },
  { "bias_correction", PROF_OPTIM_BIAS_CORRECTION, BOOLEAN, 0.0, AT(bias_correction) },
  { "torch_adam", PROF_OPTIM_TORCH_ADAM, BOOLEAN, 0.0, AT(torch_adam) },
  { "adam_w_mode", PROF_OPTIM_ADAM_W_MODE, BOOLEAN, 0.0, AT(adam_w_mode) },
  { "momentum", PROF_OPTIM_MOMENTUM, NUMBER, 0.0, AT(momentum) },
  { "dampening", PROF_OPTIM_DAMPENING, NUMBER, -INFINITY, AT(dampening) },  /* torch: unchecked */
  { "nesterov", PROF_OPTIM_NESTEROV, BOOLEAN, 0.0, AT(nesterov) },
};

/* DeepSpeed's own optimizers that profrun does not build (runtime/config.py DEEPSPEED_OPTIMIZERS). */
static const char *const deepspeed_only[] = {
  "adagrad", "lamb", "onebitadam", "zerooneadam", "onebitlamb", "muadam", "muadamw", "musgd",
  "lion", "muon"
};

/* Adam's betas: two numbers in [0, 1), as torch checks them. */
static int read_betas(const Loader *L, const cJSON *v, const char *path, double *out) {
  char got[64], elem[PATH_SIZE + 16];
  const cJSON *e;
  int i = 0;
  if (!cJSON_IsArray(v))
    return fail(L, path, "%s: expected an array of 2 numbers, got %s", path,
                describe(v, got, sizeof got));
  if (cJSON_GetArraySize(v) != 2)
    return fail(L, path, "%s: expected 2 numbers, got an array of %d", path,
                cJSON_GetArraySize(v));
  cJSON_ArrayForEach(e, v) {
    snprintf(elem, sizeof elem, "%s[%d]", path, i);
    if (!cJSON_IsNumber(e) || !(e->valuedouble >= 0.0 && e->valuedouble < 1.0))
      return fail(L, elem, "%s: expected a number in [0, 1), got %s", elem,
                  describe(e, got, sizeof got));
    out[i++] = e->valuedouble;
  }
  return PROF_OK;
}

/* DeepSpeed's name for the type v gives ("adam", "adamw" or "SGD") into *out. */
static int read_optimizer_type(const Loader *L, const cJSON *v, char **out) {
  static const char *const expected = "expected \"Adam\", \"AdamW\" (in any case) or \"SGD\"";
  const char *name = NULL, *near;
  char got[64];
  if (!cJSON_IsString(v))
    return fail(L, "optimizer.type", "optimizer.type: %s, got %s", expected,
                describe(v, got, sizeof got));
  if (strcasecmp(v->valuestring, "adam") == 0) name = "adam";
  else if (strcasecmp(v->valuestring, "adamw") == 0) name = "adamw";
  else if (strcmp(v->valuestring, "SGD") == 0) name = "SGD";
  if (name != NULL) {
    *out = profI_strdup(L->S, name);
    return *out != NULL ? PROF_OK : oom(L);
  }
  describe(v, got, sizeof got);
  /* "Lamb" is one edit from nothing profrun builds, yet a suggestion of "Adam" would mislead. */
  for (size_t i = 0; i < sizeof deepspeed_only / sizeof deepspeed_only[0]; i++)
    if (strcasecmp(v->valuestring, deepspeed_only[i]) == 0)
      return fail(L, "optimizer.type", "optimizer.type: %s, got %s (DeepSpeed's %s is not "
                  "built by profrun)", expected, got, deepspeed_only[i]);
  if ((near = profC_closest(PROFC_OPTIMIZER_TYPES, v->valuestring)) != NULL)
    return fail(L, "optimizer.type", "optimizer.type: %s, got %s (did you mean \"%s\"?)",
                expected, got, near);
  return fail(L, "optimizer.type", "optimizer.type: %s, got %s", expected, got);
}

/* What DeepSpeed's constructor would refuse among values that are each fine on their own. */
static int check_optimizer(const Loader *L, const prof_OptimizerConfig *o) {
  if (strcmp(o->type, "SGD") == 0) {
    if (!(o->set & PROF_OPTIM_LR))
      return fail(L, "optimizer.params.lr", "optimizer.params.lr: SGD needs a learning rate "
                  "(profrun's SGD, like torch 1.13's, has no default)");
    if (o->nesterov && (o->momentum <= 0.0 || o->dampening != 0.0))
      return fail(L, "optimizer.params.nesterov", "optimizer.params.nesterov: Nesterov momentum "
                  "requires a momentum and zero dampening");
    return PROF_OK;
  }
  if (!o->torch_adam) {
    if (o->set & PROF_OPTIM_MAXIMIZE)
      return fail(L, "optimizer.params.maximize", "optimizer.params.maximize: DeepSpeed's "
                  "FusedAdam has no maximize (torch's Adam has: set \"torch_adam\": true)");
    if (o->amsgrad)
      return fail(L, "optimizer.params.amsgrad", "optimizer.params.amsgrad: DeepSpeed's "
                  "FusedAdam does not support AMSGrad (torch's Adam does: set \"torch_adam\": "
                  "true)");
    if ((o->set & PROF_OPTIM_BIAS_CORRECTION) && !o->bias_correction)
      return fail(L, "optimizer.params.bias_correction", "optimizer.params.bias_correction: "
                  "false is not supported: profrun's Adam always corrects the bias");
  } else if (o->set & PROF_OPTIM_BIAS_CORRECTION) {
    return fail(L, "optimizer.params.bias_correction", "optimizer.params.bias_correction: "
                "torch's Adam has no bias_correction (DeepSpeed's FusedAdam has: leave "
                "\"torch_adam\" false)");
  }
  return PROF_OK;
}

static int load_optimizer(const Loader *L, const cJSON *obj, prof_OptimizerConfig *o) {
  const cJSON *v, *type, *params;
  char got[64], what[80];
  int legacy_fusion;
  /* Read only to check its type: it selects DeepSpeed's fused fp16 wrapper, not the optimizer. */
  if ((v = field(obj, "legacy_fusion")) != NULL)
    TRY(read_bool(L, v, "optimizer.legacy_fusion", &legacy_fusion));
  type = field(obj, "type");
  if (type == NULL || cJSON_IsNull(type)) return PROF_OK;
  TRY(read_optimizer_type(L, type, &o->type));
  params = field(obj, "params");
  if (params == NULL || cJSON_IsNull(params)) return check_optimizer(L, o);  /* DeepSpeed: `or {}` */
  if (!cJSON_IsObject(params))
    return fail(L, "optimizer.params", "optimizer.params: expected an object, got %s",
                describe(params, got, sizeof got));
  if (field(params, "max_grad_norm") != NULL)
    return fail(L, "optimizer.params.max_grad_norm", "optimizer.params.max_grad_norm: not an "
                "optimizer parameter in DeepSpeed: use the top-level \"gradient_clipping\"");
  /* as the file spells it: "adam" would not be found there */
  snprintf(what, sizeof what, "for optimizer type \"%.40s\"", type->valuestring);
  TRY(check_keys_of(L, params, strcmp(o->type, "SGD") == 0 ? PROFC_SGD_PARAMS : PROFC_ADAM_PARAMS,
                    "optimizer.params", what, NULL));
  for (size_t i = 0; i < sizeof optim_params / sizeof optim_params[0]; i++) {
    const OptimParam *p = &optim_params[i];
    void *at = (char *)o + p->offset;
    char path[PATH_SIZE];
    if ((v = field(params, p->key)) == NULL) continue;
    snprintf(path, sizeof path, "optimizer.params.%s", p->key);
    switch (p->kind) {
      case NUMBER: TRY(read_number(L, v, path, p->min, at)); break;
      case BOOLEAN: TRY(read_bool(L, v, path, at)); break;
      case BETAS: TRY(read_betas(L, v, path, at)); break;
    }
    o->set |= p->bit;
  }
  return check_optimizer(L, o);
}

/*
** Whether key of root is one profrun accepts and ignores: a DeepSpeed key it does not read, or an
** optimizer section without a type (from which DeepSpeed builds nothing either).
*/
static int unused(const cJSON *item, const prof_Config *cfg) {
  if (strcmp(item->string, "optimizer") == 0)
    return !cJSON_IsNull(item) && cfg->optimizer.type == NULL;
  return profC_classify(PROFC_TOP, item->string) == PROFC_DEEPSPEED;
}

/* Lists the unused keys of root (n of them) in file order, for --verbose. */
static int record_unused(const Loader *L, const cJSON *root, int32_t n, prof_Config *cfg) {
  const cJSON *item;
  int32_t i = 0;
  if (n == 0) return PROF_OK;
  cfg->unused_keys = profI_alloc(L->S, (size_t)n * sizeof *cfg->unused_keys);
  if (cfg->unused_keys == NULL) return oom(L);
  memset(cfg->unused_keys, 0, (size_t)n * sizeof *cfg->unused_keys);
  cfg->n_unused_keys = n;
  cJSON_ArrayForEach(item, root) {
    if (!unused(item, cfg)) continue;
    if ((cfg->unused_keys[i++] = profI_strdup(L->S, item->string)) == NULL) return oom(L);
  }
  return PROF_OK;
}

static int load_tree(const Loader *L, const cJSON *root, prof_Config *cfg) {
  const cJSON *v, *sec;
  int32_t n_unused = 0;
  int dev;
  TRY(check_keys(L, root, PROFC_TOP, NULL, &n_unused));
  if ((v = field(root, "train_batch_size")) != NULL)
    TRY(read_int_or_null(L, v, "train_batch_size", 1, &cfg->train_batch_size));
  if ((v = field(root, "train_micro_batch_size_per_gpu")) != NULL)
    TRY(read_int_or_null(L, v, "train_micro_batch_size_per_gpu", 1,
                         &cfg->train_micro_batch_size_per_gpu));
  if ((v = field(root, "gradient_accumulation_steps")) != NULL)
    TRY(read_int_or_null(L, v, "gradient_accumulation_steps", 1,
                         &cfg->gradient_accumulation_steps));
  if ((v = field(root, "wall_clock_breakdown")) != NULL)
    TRY(read_bool(L, v, "wall_clock_breakdown", &cfg->wall_clock_breakdown));
  if ((v = field(root, "device")) != NULL && !cJSON_IsNull(v)) {
    TRY(read_choice(L, v, "device", devices, 3, &dev));
    if ((cfg->device = profI_strdup(L->S, devices[dev])) == NULL) return oom(L);
  }
  TRY(section(L, root, "flops_profiler", PROFC_FLOPS, &sec));
  if (sec != NULL) TRY(load_flops(L, sec, &cfg->flops_profiler));
  /* null: no optimizer, so that --set optimizer=null drops a file's section */
  if ((v = field(root, "optimizer")) != NULL && !cJSON_IsNull(v)) {
    TRY(section(L, root, "optimizer", PROFC_OPTIMIZER, &sec));
    TRY(load_optimizer(L, sec, &cfg->optimizer));
  }
  TRY(section(L, root, "parallel", PROFC_PARALLEL, &sec));
  if (sec != NULL && (v = field(sec, "model_parallel_size")) != NULL)
    TRY(read_int(L, v, "parallel.model_parallel_size", 1, &cfg->model_parallel_size));
  if (sec != NULL && (v = field(sec, "model_parallel_rank")) != NULL)
    TRY(read_int(L, v, "parallel.model_parallel_rank", 0, &cfg->model_parallel_rank));
  if (cfg->model_parallel_rank >= cfg->model_parallel_size)
    return fail(L, "parallel.model_parallel_rank",
                "parallel.model_parallel_rank: %lld is not below model_parallel_size %lld",
                (long long)cfg->model_parallel_rank, (long long)cfg->model_parallel_size);
  TRY(section(L, root, "report", PROFC_REPORT, &sec));
  if (sec != NULL && (v = field(sec, "script")) != NULL)
    TRY(read_string(L, v, "report.script", 1, &cfg->report_script));
  if ((v = field(root, "optimizer")) != NULL && unused(v, cfg)) n_unused++;
  return record_unused(L, root, n_unused, cfg);
}

/* {====================== file and overrides ======================} */

/* Reads all of path into a NUL-terminated block of *size bytes (pipes work: no seeking). */
static int read_file(const Loader *L, char **text, size_t *size, size_t *len) {
  FILE *f = fopen(L->file, "rb");
  char *buf = NULL;
  size_t cap = 0, n = 0;
  int rc = PROF_OK;
  if (f == NULL)
    return profI_error(L->S, PROF_ERRIO, "%s: cannot open: %s", L->file, strerror(errno));
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
        rc = profI_error(L->S, PROF_ERRIO, "%s: cannot read: %s", L->file, strerror(errno));
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

/* FILE:LINE:COLUMN (1-based, columns in bytes) of offset pos, with the text that follows it. */
static int syntax_error(const Loader *L, const char *text, size_t len, size_t pos) {
  char near[EXCERPT + 1];
  long line = 1, col = 1;
  for (size_t i = 0; i < pos; i++) {
    if (text[i] == '\n') {
      line++;
      col = 1;
    } else {
      col++;
    }
  }
  if (pos >= len)
    return profI_error(L->S, PROF_ERRCONFIG, "%s:%ld:%ld: invalid JSON at the end of the file",
                       L->file, line, col);
  if (text[pos] == '\0')
    return profI_error(L->S, PROF_ERRCONFIG, "%s:%ld:%ld: invalid JSON: a NUL byte", L->file,
                       line, col);
  if (excerpt(text + pos, EXCERPT, near) == 0)
    return profI_error(L->S, PROF_ERRCONFIG, "%s:%ld:%ld: invalid JSON at the end of the line",
                       L->file, line, col);
  return profI_error(L->S, PROF_ERRCONFIG, "%s:%ld:%ld: invalid JSON near '%s'", L->file, line,
                     col, near);
}

static int parse_text(const Loader *L, const char *text, size_t len, cJSON **root) {
  char got[64];
  const char *end = NULL;
  size_t stop = strlen(text);  /* < len when the file holds a NUL byte */
  /* The length counts the terminator: cJSON requires it when asked to reject trailing text. */
  cJSON *r = cJSON_ParseWithLengthOpts(text, stop + 1, &end, 1);
  if (r == NULL || stop != len) {
    size_t pos = r != NULL ? stop : end != NULL ? (size_t)(end - text) : 0;
    cJSON_Delete(r);
    return syntax_error(L, text, len, pos);
  }
  if (!cJSON_IsObject(r)) {
    profI_error(L->S, PROF_ERRCONFIG, "%s: the top level must be a JSON object, got %s", L->file,
                describe(r, got, sizeof got));
    cJSON_Delete(r);
    return PROF_ERRCONFIG;
  }
  *root = r;
  return PROF_OK;
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

static void set_defaults(prof_Config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->flops_profiler.profile_step = 1;
  cfg->flops_profiler.module_depth = -1;
  cfg->flops_profiler.top_modules = 1;
  cfg->flops_profiler.detailed = 1;
  cfg->flops_profiler.conventions = PROF_CONV_EXACT;
  cfg->model_parallel_size = 1;
}

int prof_config_load(prof_State *S, const char *path, const char *const *overrides,
                     int32_t n_overrides, prof_Config **out) {
  Loader L = { S, path, overrides, n_overrides };
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
  if ((cfg = profI_alloc(S, sizeof *cfg)) == NULL) return oom(&L);
  set_defaults(cfg);
  if (path != NULL) {
    if ((rc = read_file(&L, &text, &text_size, &len)) != PROF_OK) goto end;
    if ((rc = parse_text(&L, text, len, &root)) != PROF_OK) goto end;
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

static void free_strings(prof_State *S, char **list, int32_t n) {
  if (list == NULL) return;
  for (int32_t i = 0; i < n; i++) profI_strfree(S, list[i]);
  profI_free(S, list, (size_t)n * sizeof *list);
}

void prof_config_free(prof_State *S, prof_Config *cfg) {
  if (cfg == NULL) return;
  profI_strfree(S, cfg->device);
  profI_strfree(S, cfg->report_script);
  profI_strfree(S, cfg->optimizer.type);
  profI_strfree(S, cfg->flops_profiler.output_file);
  profI_strfree(S, cfg->flops_profiler.format);
  free_strings(S, cfg->flops_profiler.ignore_modules, cfg->flops_profiler.n_ignore_modules);
  free_strings(S, cfg->flops_profiler.rules, cfg->flops_profiler.n_rules);
  free_strings(S, cfg->unused_keys, cfg->n_unused_keys);
  free_strings(S, cfg->forced_keys, cfg->n_forced_keys);
  profI_free(S, cfg, sizeof *cfg);
}
