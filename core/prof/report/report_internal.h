/* report_internal.h — what the report writers share: output, DeepSpeed's number formats, the shown tree; never installed. */
#ifndef PROF_REPORT_INTERNAL_H
#define PROF_REPORT_INTERNAL_H

#include "prof_internal.h"

/* {====================== output (report_units.c) ======================} */

/* A sink that stops at its first failure (sticky), so a writer checks once at the end. */
typedef struct profP_Out {
  prof_WriteFn fn;
  void *ud;
  int failed;
} profP_Out;

PROF_INTERNAL void profP_put(profP_Out *o, const char *s, size_t len);
PROF_INTERNAL void profP_puts(profP_Out *o, const char *s);
PROF_INTERNAL void profP_pad(profP_Out *o, size_t n);

/* A growable text in S's memory, and a prof_WriteFn that appends to one (ud: the profP_Text). */
typedef struct profP_Text {
  prof_State *S;
  char *data;
  size_t len, cap;
} profP_Text;

PROF_INTERNAL int profP_text_write(void *ud, const char *data, size_t len);
PROF_INTERNAL void profP_text_free(profP_Text *t);

/* {====================== DeepSpeed's and Python's number formats (report_units.c) ======================} */

/* Buffers of these sizes hold any text below. */
#define PROFP_NUM 128

/* Python's round(x, 2) on a float (NAN and infinities as they are). */
PROF_INTERNAL double profP_round2(double x);

/* DeepSpeed's number_to_string(num) followed by suffix ("MACs", "FLOPS", "s", ""); "n/a" for NAN. */
PROF_INTERNAL const char *profP_number(double num, const char *suffix, char *buf);

/* DeepSpeed's params_to_string: "B" for billions, no trailing space; "n/a" for PROF_UNKNOWN (or,
   of a sum held as a double, NAN). */
PROF_INTERNAL const char *profP_params(int64_t params, char *buf);
PROF_INTERNAL const char *profP_params_sum(double params, char *buf);

/* DeepSpeed's percentage f"{round(100 * x / total, 2):g}": "n/a" when x is unknown, "0" when
   the total is unknown or 0. The int64 form scales in integers as the Lua reports did. */
PROF_INTERNAL const char *profP_pct(double x, double total, char *buf);
PROF_INTERNAL const char *profP_pct_int(int64_t x, int64_t total, char *buf);

/* work / latency as FLOPS: "n/a" when either is unknown, "0 FLOPS" at zero latency. */
PROF_INTERNAL const char *profP_rate(double work, double latency, char *buf);

/* Python's str(): of an int ("n/a" for PROF_UNKNOWN), of a float (repr: "0.5", "1e-05", "2.0";
   "n/a" for NAN, which stands for None here). */
PROF_INTERNAL const char *profP_pystr_int(int64_t v, char *buf);
PROF_INTERNAL const char *profP_pystr_float(double v, char *buf);

/* Python's repr of a str, written to o. */
PROF_INTERNAL void profP_pyrepr(profP_Out *o, const char *s);

/* The nil-aware sum of the Lua reports: NAN is unknown and does not poison a known value. */
PROF_INTERNAL double profP_add(double a, double b);

/* {====================== the shown tree (report_tree.c) ======================} */

/*
** A document's tree as the text report walks it, read once: a few numbers a module, never the
** modules themselves. The shown tree drops hidden modules, their children taking their place.
*/
typedef struct profP_Tree {
  prof_State *S;
  const prof_ReportDoc *doc;
  int32_t n;                   /* modules of module 0's tree */
  int32_t cap;                 /* modules the arrays hold (the document's count) */
  int32_t *first, *next;       /* shown children: first and next sibling, -1 at the end */
  int32_t *depth;              /* depth in the shown tree */
  uint8_t *flags;              /* PROFP_HIDDEN | PROFP_FOLD */
  double *duration;            /* DeepSpeed's get_module_duration; NAN unknown */
  int32_t levels;              /* depths of the shown tree */
} profP_Tree;

#define PROFP_HIDDEN 1
#define PROFP_FOLD 2

/* Reads doc's modules once into t. [may fail: PROF_ERRARG (not a tree in pre-order, or the reader
   failed), PROF_ERRMEM] */
PROF_INTERNAL int profP_tree_build(prof_State *S, const prof_ReportDoc *doc, profP_Tree *t);
PROF_INTERNAL void profP_tree_free(profP_Tree *t);

/* Module index of doc into *m (prof_report_module_init first), checked. [may fail: PROF_ERRARG] */
PROF_INTERNAL int profP_read(prof_State *S, const prof_ReportDoc *doc, int32_t index,
                             prof_ReportModule *m);

/* {====================== the writers ======================} */

PROF_INTERNAL int profP_write_deepspeed(prof_State *S, const prof_ReportDoc *doc,
                                        const prof_ReportOptions *opts, prof_WriteFn fn, void *ud);
PROF_INTERNAL int profP_write_json(prof_State *S, const prof_ReportDoc *doc, prof_WriteFn fn,
                                   void *ud);

#endif
