/* config_internal.h — the config loader's tables: the schema, DeepSpeed's keys, closest key. */
#ifndef PROF_CONFIG_INTERNAL_H
#define PROF_CONFIG_INTERNAL_H

#include "prof_internal.h"

/* {====================== the schema (config_schema.c) ======================} */

/* The schema row at path (n bytes of it), or NULL. */
PROF_INTERNAL const prof_ConfigKey *profC_row(const char *path, size_t n);

/* {====================== DeepSpeed's keys (config_deepspeed.c) ======================} */

/* DeepSpeed's top-level keys (the core's own excepted), NULL-ended. */
PROF_INTERNAL const char *const *profC_deepspeed_top(void);

/* The documented keys of DeepSpeed's section at path ("fp16", "zero_optimization.offload_param"),
   NULL-ended; NULL when the section's keys go unchecked. */
PROF_INTERNAL const char *const *profC_deepspeed_keys(const char *path);

/* The prof_ConfigType a DeepSpeed value at path must have (BOOL or INT >= 0), or -1: any. */
PROF_INTERNAL int profC_deepspeed_type(const char *path);

/* {====================== classifying keys (config_keys.c) ======================} */

/* What a key of an object is to profrun. */
enum {
  PROFC_UNKNOWN = 0,     /* an error */
  PROFC_KNOWN = 1,       /* a schema row: read and validated by the core */
  PROFC_DEEPSPEED = 2,   /* a DeepSpeed key: top-level or documented in its section */
  PROFC_UNCHECKED = 3    /* inside a DeepSpeed object whose keys go unchecked */
};

/*
** Classifies key (case-sensitive, as DeepSpeed reads it) of the object at section, a dotted key
** path ("" for the top level): one of PROFC_UNKNOWN...
*/
PROF_INTERNAL int profC_classify(const char *section, const char *key);

/*
** The known key of section nearest to key by case-insensitive Levenshtein distance, first in
** table order on ties (the core's before DeepSpeed's); NULL when the nearest is farther than
** max(2, strlen(key) / 3) or the section's keys go unchecked. Allocates nothing.
*/
PROF_INTERNAL const char *profC_closest(const char *section, const char *key);

/* Case-insensitive Levenshtein distance; b must be shorter than 64 bytes (table keys are). */
PROF_INTERNAL size_t profC_edit_distance(const char *a, const char *b);

/* {====================== the raw text (config_text.c) ======================} */

/* The offset of the first "\u0000" escape inside a string of text, or (size_t)-1. */
PROF_INTERNAL size_t profC_find_nul_escape(const char *text, size_t len);

/* The offset of a comma just before the '}' or ']' at (or just before) pos, where cJSON
   stopped, that bracket in *bracket; or (size_t)-1, *bracket untouched. */
PROF_INTERNAL size_t profC_trailing_comma(const char *text, size_t len, size_t pos, char *bracket);

#endif
