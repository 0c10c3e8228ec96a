/* config_help.c — profrun --help-config: the schema's rows as a listing, grouped by section. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config_internal.h"

/* An snprintf-style sink: writes what fits, counts everything. */
typedef struct Out {
  char *buf;
  size_t size, len;
} Out;

__attribute__((format(printf, 2, 3)))
static void put(Out *o, const char *fmt, ...) {
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = vsnprintf(o->len < o->size ? o->buf + o->len : NULL, o->len < o->size ? o->size - o->len : 0,
                fmt, ap);
  va_end(ap);
  if (n > 0) o->len += (size_t)n;
}

static void choices(const char *const *c, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; c[i] != NULL; i++) {
    int w = snprintf(buf + used, size - used, "%s%s", i > 0 ? "|" : "", c[i]);
    if (w < 0 || (size_t)w >= size - used) break;
    used += (size_t)w;
  }
}

const char *prof_config_type_name(const prof_ConfigKey *k, char *buf, size_t size) {
  char list[96];
  const char *null = k->nullable ? " or null" : "";
  switch (k->type) {
    case PROF_CONFIG_SECTION: snprintf(buf, size, "object"); break;
    case PROF_CONFIG_BOOL: snprintf(buf, size, "bool"); break;
    case PROF_CONFIG_INT: snprintf(buf, size, "int >= %lld%s", (long long)k->min, null); break;
    case PROF_CONFIG_NUMBER:
      snprintf(buf, size, "number >= %lld%s", (long long)k->min, null);
      break;
    case PROF_CONFIG_ENUM:
      choices(k->choices, list, sizeof list);
      snprintf(buf, size, "%s", list);
      break;
    case PROF_CONFIG_STRING:
      if (k->choices != NULL) {
        choices(k->choices, list, sizeof list);
        snprintf(buf, size, "%s%s", list, null);
      } else {
        snprintf(buf, size, "string%s", null);
      }
      break;
    case PROF_CONFIG_STRINGS:
      if (k->choices != NULL) choices(k->choices, list, sizeof list);
      snprintf(buf, size, "[%s]", k->choices != NULL ? list : "string");
      break;
    case PROF_CONFIG_OBJECT: snprintf(buf, size, "any object%s", null); break;
  }
  return buf;
}

size_t prof_config_help(char *buf, size_t size) {
  Out o = { buf, size, 0 };
  const prof_ConfigKey *k;
  char type[128];
  if (size > 0) buf[0] = '\0';
  put(&o, "profrun's configuration keys (built-in defaults < config file < script < --set):\n");
  put(&o, "\n  %-38s %-22s %-9s %s\n", "KEY", "TYPE", "DEFAULT", "WHAT");
  put(&o, "\ntop level\n");
  for (int32_t i = 0; (k = prof_config_key(i)) != NULL; i++) {
    if (k->type == PROF_CONFIG_SECTION) {
      put(&o, "\n%s: %s\n", k->path, k->doc);
      continue;
    }
    put(&o, "  %-38s %-22s %-9s %s\n", k->path, prof_config_type_name(k, type, sizeof type),
        k->default_json, k->doc);
  }
  put(&o, "\nDeepSpeed's other keys (optimizer, scheduler, fp16, bf16, zero_optimization,\n"
          "activation_checkpointing, tensorboard, wandb, comms_logger, ...) are accepted and\n"
          "handed to the Lua engine as they are; keys inside their documented sections are\n"
          "checked against DeepSpeed's documentation (docs/_pages/config-json.md).\n");
  return o.len;
}
