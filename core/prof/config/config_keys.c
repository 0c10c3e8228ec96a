/* config_keys.c — which keys an object of the config may hold; the closest-key search. */
#include <ctype.h>
#include <string.h>

#include "config_internal.h"

/* Whether row is a direct key of section ("" = top level); *name gets its last segment. */
static int row_in(const prof_ConfigKey *row, const char *section, const char **name) {
  size_t n = strlen(section);
  const char *rest = row->path;
  if (n > 0) {
    if (strncmp(row->path, section, n) != 0 || row->path[n] != '.') return 0;
    rest = row->path + n + 1;
  }
  if (strchr(rest, '.') != NULL) return 0;
  *name = rest;
  return 1;
}

/* Whether section is one of the core's (a schema section, or the top level). */
static int is_core(const char *section) {
  const prof_ConfigKey *row;
  if (section[0] == '\0') return 1;
  row = profC_row(section, strlen(section));
  return row != NULL && row->type == PROF_CONFIG_SECTION;
}

static int in_list(const char *const *keys, const char *key) {
  for (; keys != NULL && *keys != NULL; keys++)
    if (strcmp(*keys, key) == 0) return 1;
  return 0;
}

int profC_classify(const char *section, const char *key) {
  const char *const *ds;
  if (is_core(section)) {
    const prof_ConfigKey *row;
    const char *name;
    for (int32_t i = 0; (row = prof_config_key(i)) != NULL; i++)
      if (row_in(row, section, &name) && strcmp(name, key) == 0) return PROFC_KNOWN;
    if (section[0] == '\0' && in_list(profC_deepspeed_top(), key)) return PROFC_DEEPSPEED;
    return PROFC_UNKNOWN;
  }
  ds = profC_deepspeed_keys(section);
  if (ds == NULL) return PROFC_UNCHECKED;
  return in_list(ds, key) ? PROFC_DEEPSPEED : PROFC_UNKNOWN;
}

#define MAX_KEY 64

size_t profC_edit_distance(const char *a, const char *b) {
  /* One row over b suffices: b is a table key, so the row lives on the stack whatever a is. */
  size_t row[MAX_KEY + 1];
  size_t nb = strlen(b);
  if (nb > MAX_KEY) return (size_t)-1;
  for (size_t j = 0; j <= nb; j++) row[j] = j;
  for (size_t i = 1; a[i - 1] != '\0'; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= nb; j++) {
      size_t up = row[j];
      int same = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]);
      size_t best = diag + (same ? 0 : 1);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[nb];
}

static void nearest(const char *cand, const char *key, const char **best, size_t *dist) {
  size_t d = profC_edit_distance(key, cand);
  if (d < *dist) {
    *dist = d;
    *best = cand;
  }
}

const char *profC_closest(const char *section, const char *key) {
  const char *best = NULL;
  size_t dist = (size_t)-1;
  size_t limit = strlen(key) / 3;
  if (limit < 2) limit = 2;
  if (is_core(section)) {
    const prof_ConfigKey *row;
    const char *name;
    for (int32_t i = 0; (row = prof_config_key(i)) != NULL; i++)
      if (row_in(row, section, &name)) nearest(name, key, &best, &dist);
    /* DeepSpeed's keys come second so that profrun's own win a tie. */
    if (section[0] == '\0')
      for (const char *const *k = profC_deepspeed_top(); *k != NULL; k++)
        nearest(*k, key, &best, &dist);
  } else {
    const char *const *ds = profC_deepspeed_keys(section);
    for (; ds != NULL && *ds != NULL; ds++) nearest(*ds, key, &best, &dist);
  }
  return dist <= limit ? best : NULL;
}
