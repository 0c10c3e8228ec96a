/* test_report.c — prof_write_report on documents a host builds: the JSON and DeepSpeed's text of a hand-made tree, and every way it can fail. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "prof.h"
#include "t.h"

/* {====================== a document of fixed rows ======================} */

typedef struct Row {
  const char *name, *type, *extra;
  int32_t parent;
  int hidden, fold;
  int64_t params, macs, flops, bwd_flops;
  double fwd_latency_s;
  const char *bound;
} Row;

typedef struct Doc {
  const Row *rows;
  int32_t fail_at;             /* the reader fails at this index; -1 never */
  int32_t reads;
} Doc;

static int read_row(void *ud, int32_t index, prof_ReportModule *m) {
  Doc *d = ud;
  d->reads++;
  if (index == d->fail_at) return 1;
  const Row *r = &d->rows[index];
  m->name = r->name;
  m->type = r->type;
  m->extra_repr = r->extra;
  m->parent = r->parent;
  m->depth = 0;
  for (int32_t p = r->parent; p >= 0; p = d->rows[p].parent) m->depth++;
  m->hidden = r->hidden;
  m->fold = r->fold;
  m->params = r->params;
  m->macs = r->macs;
  m->flops = r->flops;
  m->calls = 1;
  m->bwd_flops = r->bwd_flops;
  m->fwd_latency_s = r->fwd_latency_s;
  m->bound = r->bound;
  return 0;
}

static prof_ReportDoc doc_of(Doc *d, int32_t count) {
  prof_ReportDoc doc;
  prof_report_doc_init(&doc);
  doc.count = count;
  doc.module = read_row;
  doc.ud = d;
  return doc;
}

typedef struct Buf {
  char *data;
  size_t len, cap;
} Buf;

static int to_buf(void *ud, const char *data, size_t len) {
  Buf *b = ud;
  if (b->len + len + 1 > b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 4096;
    while (cap < b->len + len + 1) cap *= 2;
    char *p = realloc(b->data, cap);
    if (p == NULL) return 1;
    b->data = p;
    b->cap = cap;
  }
  memcpy(b->data + b->len, data, len);
  b->len += len;
  b->data[b->len] = '\0';
  return 0;
}

/*
** Net { enc: Encoder (hidden) { a: Linear, b: ReLU }, blocks: ModuleList (fold) { 0, 1, 2: Block
** (each with an identical Linear fc), 3: Block whose fc differs } } and, after it, a second root
** that the document's tree does not hold.
*/
#define UNK PROF_UNKNOWN
static const Row NET[] = {
  /*  0 */ {"", "Net", "", -1, 0, 0, 1000, 4000, 8000, UNK, NAN, NULL},
  /*  1 */ {"enc", "Encoder", "", 0, 1, 0, 600, 2000, 4000, UNK, NAN, NULL},
  /*  2 */ {"a", "Linear", "in_features=4, out_features=4", 1, 0, 0, 600, 2000, 4000, 6000, NAN, "memory"},
  /*  3 */ {"b", "ReLU", "", 1, 0, 0, 0, 0, 0, UNK, NAN, NULL},
  /*  4 */ {"blocks", "ModuleList", "", 0, 0, 1, 400, 2000, 4000, UNK, NAN, NULL},
  /*  5 */ {"0", "Block", "", 4, 0, 0, 100, 500, 1000, UNK, NAN, NULL},
  /*  6 */ {"fc", "Linear", "", 5, 0, 0, 100, 500, 1000, UNK, NAN, NULL},
  /*  7 */ {"1", "Block", "", 4, 0, 0, 100, 500, 1000, UNK, NAN, NULL},
  /*  8 */ {"fc", "Linear", "", 7, 0, 0, 100, 500, 1000, UNK, NAN, NULL},
  /*  9 */ {"2", "Block", "", 4, 0, 0, 100, 500, 1000, UNK, NAN, NULL},
  /* 10 */ {"fc", "Linear", "", 9, 0, 0, 100, 500, 1000, UNK, NAN, NULL},
  /* 11 */ {"3", "Block", "line one\nline two", 4, 0, 0, 100, 500, 1000, UNK, NAN, NULL},
  /* 12 */ {"fc", "Linear", "", 11, 0, 0, 100, 500, 1000, UNK, NAN, NULL},
  /* 13 */ {"", "Other", "", -1, 0, 0, 1, 1, 1, UNK, NAN, NULL},
};
#define NET_COUNT ((int32_t)(sizeof NET / sizeof *NET))

/* The JSON: the hidden encoder left out (its children under the root, named by their paths),
   optional keys only where known, the second root not written. */
static void test_json_of_a_host_document(void) {
  prof_State *S = prof_new(NULL, NULL);
  Doc d = {NET, -1, 0};
  prof_ReportDoc doc = doc_of(&d, NET_COUNT);
  doc.summary.device = "meta";
  doc.summary.params = 1000;
  doc.summary.peak_flops = 2e12;
  Buf b = {0};
  T_EQ_INT(prof_write_report(S, PROF_REPORT_JSON, &doc, NULL, to_buf, &b), PROF_OK);
  T_CONTAINS(b.data, "{\n  \"schema\": \"profrun.profile/1\",\n  \"device\": \"meta\",\n"
                     "  \"conventions\": null,\n  \"world_size\": null,");
  T_CONTAINS(b.data, "  \"params\": 1000,\n  \"params_model\": null,");
  /* an integral double as its digits, as every JSON writer of the project prints it */
  T_CONTAINS(b.data, "  \"samples_per_s\": null,\n  \"peak_flops\": 2000000000000,\n  \"modules\": [\n");
  T_CONTAINS(b.data, "      \"id\": 1,\n      \"parent\": 0,\n      \"name\": \"enc.a\",\n"
                     "      \"type\": \"Linear\",\n      \"depth\": 2,\n      \"params\": 600,\n"
                     "      \"macs\": 2000,\n      \"flops\": 4000,\n      \"fwd_latency_s\": null,\n"
                     "      \"bwd_latency_s\": null,\n      \"calls\": 1,\n      \"bwd_flops\": 6000,\n"
                     "      \"bound\": \"memory\"\n    }");
  T_CONTAINS(b.data, "\"name\": \"enc.b\"");
  T_CONTAINS(b.data, "\"id\": 3,\n      \"parent\": 0,\n      \"name\": \"blocks\"");
  T_CONTAINS(b.data, "\"id\": 11,\n      \"parent\": 10,\n      \"name\": \"blocks.3.fc\"");
  T_CHECK(strstr(b.data, "Encoder") == NULL);
  T_CHECK(strstr(b.data, "Other") == NULL);
  T_CHECK(strstr(b.data, "\"bytes\"") == NULL);
  T_CHECK(b.len > 0 && b.data[b.len - 1] == '\n' && b.data[b.len - 2] == '}');
  free(b.data);
  prof_close(S);
}

/* DeepSpeed's text: three identical blocks print once as a run, the fourth (another text) alone,
   its two-line repr on lines of their own; the hidden encoder's children at depth 1. */
static void test_text_of_a_host_document(void) {
  prof_State *S = prof_new(NULL, NULL);
  Doc d = {NET, -1, 0};
  prof_ReportDoc doc = doc_of(&d, NET_COUNT);
  prof_ReportOptions o;
  prof_report_options_init(&o);
  o.top_modules = 2;
  Buf b = {0};
  T_EQ_INT(prof_write_report(S, PROF_REPORT_DEEPSPEED, &doc, &o, to_buf, &b), PROF_OK);
  /* by hand: 600 of 1,000 params is 60 %, 2,000 of 4,000 MACs 50 % */
  T_CONTAINS(b.data, "\nNet(\n  1 K = 100% Params, 4 KMACs = 100% MACs, n/a latency, n/a FLOPS\n"
                     "  (a): Linear(600 = 60% Params, 2 KMACs = 50% MACs, n/a latency, n/a FLOPS, "
                     "in_features=4, out_features=4)\n"
                     "  (b): ReLU(0 = 0% Params, 0 MACs = 0% MACs, n/a latency, n/a FLOPS)\n"
                     "  (blocks): ModuleList(\n"
                     "    400 = 40% Params, 2 KMACs = 50% MACs, n/a latency, n/a FLOPS\n"
                     "    (0-2): 3 x Block(each:\n"
                     "      100 = 10% Params, 500 MACs = 12.5% MACs, n/a latency, n/a FLOPS\n"
                     "      (fc): Linear(100 = 10% Params, 500 MACs = 12.5% MACs, n/a latency, n/a FLOPS)\n"
                     "    )\n"
                     "    (3): Block(\n"
                     "      100 = 10% Params, 500 MACs = 12.5% MACs, n/a latency, n/a FLOPS, line one\n"
                     "      line two\n"
                     "      (fc): Linear(100 = 10% Params, 500 MACs = 12.5% MACs, n/a latency, n/a FLOPS)\n"
                     "    )\n"
                     "  )\n"
                     ")\n---");
  /* depth 1 aggregates the encoder's children and the list: Linear, ReLU, ModuleList in order */
  T_CONTAINS(b.data, "depth 1:\n    params      - {'Linear': '600', 'ModuleList': '400'}\n");
  T_CONTAINS(b.data, "depth 2:\n    params      - {'Block': '400'}\n");
  T_CONTAINS(b.data, "depth 3:\n    params      - {'Linear': '400'}\n");
  T_CHECK(strstr(b.data, "depth 4:") == NULL);
  T_CHECK(strstr(b.data, "Encoder") == NULL);
  free(b.data);
  prof_close(S);
}

/* A document that is not a tree in pre-order, or whose reader fails, is refused by name. */
static void test_bad_documents(void) {
  prof_State *S = prof_new(NULL, NULL);
  static const Row forward[] = {
    {"", "Net", "", -1, 0, 0, 1, 1, 1, UNK, NAN, NULL},
    {"x", "Linear", "", 2, 0, 0, 1, 1, 1, UNK, NAN, NULL},
    {"y", "Linear", "", 0, 0, 0, 1, 1, 1, UNK, NAN, NULL},
  };
  Buf b = {0};
  for (int f = 0; f < 2; f++) {
    Doc d = {forward, -1, 0};
    prof_ReportDoc doc = doc_of(&d, 3);
    T_EQ_INT(prof_write_report(S, f ? PROF_REPORT_JSON : PROF_REPORT_DEEPSPEED, &doc, NULL, to_buf, &b),
             PROF_ERRARG);
    T_CONTAINS(prof_errmsg(S), "module 1 names 2 as its parent");
    Doc e = {NET, 6, 0};
    doc = doc_of(&e, NET_COUNT);
    T_EQ_INT(prof_write_report(S, f ? PROF_REPORT_JSON : PROF_REPORT_DEEPSPEED, &doc, NULL, to_buf, &b),
             PROF_ERRARG);
    T_CONTAINS(prof_errmsg(S), "reader failed at module 6");
  }
  prof_ReportDoc none;
  prof_report_doc_init(&none);
  none.count = 2;
  T_EQ_INT(prof_write_report(S, PROF_REPORT_JSON, &none, NULL, to_buf, &b), PROF_ERRARG);
  T_CONTAINS(prof_errmsg(S), "no reader");
  /* an empty document is a report of nothing, not an error */
  none.count = 0;
  b.len = 0;
  T_EQ_INT(prof_write_report(S, PROF_REPORT_JSON, &none, NULL, to_buf, &b), PROF_OK);
  T_CONTAINS(b.data, "\"modules\": []\n}\n");
  T_EQ_INT(prof_write_report(S, PROF_REPORT_DEEPSPEED, &none, NULL, to_buf, &b), PROF_OK);
  T_CONTAINS(b.data, "fwd latency:");
  free(b.data);
  prof_close(S);
}

/* {====================== out of memory ======================} */

typedef struct Heap {
  long requests, fail_at;
  long long live_bytes;
} Heap;

static void *heap_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  Heap *h = ud;
  if (nsize == 0) {
    if (ptr != NULL) h->live_bytes -= (long long)osize, free(ptr);
    return NULL;
  }
  if (h->fail_at > 0 && ++h->requests == h->fail_at) return NULL;
  void *p = realloc(ptr, nsize);
  if (p != NULL) h->live_bytes += (long long)nsize - (ptr != NULL ? (long long)osize : 0);
  return p;
}

/* Every allocation of both writers refused in turn: each is an error, and nothing is kept. */
static void test_every_allocation_failure(void) {
  for (int f = 0; f < 2; f++) {
    int failures = 0;
    for (long k = 1; k < 200; k++) {
      Heap h = {0, 0, 0};
      prof_State *S = prof_new(heap_alloc, &h);
      T_CHECK(S != NULL);
      long long base = h.live_bytes;
      h.fail_at = k;
      h.requests = 0;
      Doc d = {NET, -1, 0};
      prof_ReportDoc doc = doc_of(&d, NET_COUNT);
      Buf b = {0};
      int rc = prof_write_report(S, f ? PROF_REPORT_JSON : PROF_REPORT_DEEPSPEED, &doc, NULL, to_buf, &b);
      h.fail_at = 0;
      free(b.data);
      if (rc == PROF_OK) {          /* k passed the writer's allocations: all were tried */
        T_EQ_INT(h.live_bytes - base, 0);
        prof_close(S);
        break;
      }
      failures++;
      T_EQ_INT(rc, PROF_ERRMEM);
      T_CONTAINS(prof_errmsg(S), "out of memory");
      T_EQ_INT(h.live_bytes - base, 0);
      prof_close(S);
    }
    T_CHECK(failures >= 4);
  }
}

int main(void) {
  T_RUN(test_json_of_a_host_document);
  T_RUN(test_text_of_a_host_document);
  T_RUN(test_bad_documents);
  T_RUN(test_every_allocation_failure);
  return T_DONE();
}
