/* config_internal.h — the config loader's key tables and closest-key search (config_keys.c). */
#ifndef PROF_CONFIG_INTERNAL_H
#define PROF_CONFIG_INTERNAL_H

#include "prof_internal.h"

/* The objects whose keys profrun checks; everything inside a DeepSpeed section goes unchecked. */
typedef enum profC_Section {
  PROFC_TOP = 0,         /* the top-level object */
  PROFC_FLOPS,           /* "flops_profiler" */
  PROFC_PARALLEL,        /* "parallel" */
  PROFC_REPORT,          /* "report" */
  PROFC_OPTIMIZER,       /* "optimizer": type, params, legacy_fusion */
  PROFC_ADAM_PARAMS,     /* "optimizer.params" when type is Adam or AdamW */
  PROFC_SGD_PARAMS,      /* "optimizer.params" when type is SGD */
  PROFC_OPTIMIZER_TYPES, /* not keys: the optimizer types profrun builds, for "did you mean" */
  PROFC_SECTION_COUNT
} profC_Section;

/* What a key of a section is to profrun. */
enum {
  PROFC_UNKNOWN = 0,     /* an error */
  PROFC_KNOWN = 1,       /* read and validated by profrun */
  PROFC_DEEPSPEED = 2    /* a DeepSpeed top-level key profrun accepts, ignores and lists */
};

/* Classifies key (case-sensitive, as DeepSpeed reads it) within sec: one of PROFC_UNKNOWN... */
PROF_INTERNAL int profC_classify(profC_Section sec, const char *key);

/*
** The known key of sec (DeepSpeed's included at the top level) nearest to key by case-insensitive
** Levenshtein distance, first in table order on ties; NULL when the nearest is farther than
** max(2, strlen(key) / 3). Allocates nothing.
*/
PROF_INTERNAL const char *profC_closest(profC_Section sec, const char *key);

/* Case-insensitive Levenshtein distance; b must be shorter than 64 bytes (table keys are). */
PROF_INTERNAL size_t profC_edit_distance(const char *a, const char *b);

#endif
