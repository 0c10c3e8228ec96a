/* test_json_out.c — the streaming JSON writer, the C profile document and atomic file writes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prof_internal.h"
#include "t.h"

typedef struct Buf { char data[8192]; size_t len; int fail_after; } Buf;

static int buf_write(void *ud, const char *s, size_t n) {
  Buf *b = ud;
  if (b->fail_after >= 0 && b->len + n > (size_t)b->fail_after) return -1;
  if (b->len + n >= sizeof b->data) return -1;
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
  return 0;
}

static void test_writer_compact(void) {
  Buf b = {.fail_after = -1};
  profW_Writer w;
  profW_init(&w, buf_write, &b, 0);
  profW_begin_object(&w);
  profW_key(&w, "s");
  profW_string(&w, "a\"b\\c\n\x01");
  profW_key(&w, "big");
  profW_int(&w, 700000000000000LL);   /* GPT-3 scale flops stay exact integers */
  profW_key(&w, "x");
  profW_double(&w, 0.25);
  profW_key(&w, "nan");
  profW_double(&w, NAN);
  profW_key(&w, "list");
  profW_begin_array(&w);
  profW_int(&w, 1);
  profW_bool(&w, 0);
  profW_null(&w);
  profW_begin_object(&w);
  profW_end_object(&w);
  profW_end_array(&w);
  profW_end_object(&w);
  T_EQ_INT(w.failed, 0);
  T_EQ_STR(b.data, "{\"s\":\"a\\\"b\\\\c\\n\\u0001\",\"big\":700000000000000,\"x\":0.25,"
                   "\"nan\":null,\"list\":[1,false,null,{}]}");
}

static void test_writer_pretty(void) {
  Buf b = {.fail_after = -1};
  profW_Writer w;
  profW_init(&w, buf_write, &b, 1);
  profW_begin_object(&w);
  profW_key(&w, "a");
  profW_begin_array(&w);
  profW_int(&w, 1);
  profW_int(&w, 2);
  profW_end_array(&w);
  profW_key(&w, "e");
  profW_begin_array(&w);
  profW_end_array(&w);
  profW_end_object(&w);
  T_EQ_STR(b.data, "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"e\": []\n}");
}

static void test_writer_failure_is_sticky(void) {
  Buf b = {.fail_after = 5};
  profW_Writer w;
  profW_init(&w, buf_write, &b, 0);
  profW_begin_array(&w);
  for (int i = 0; i < 10; i++) profW_int(&w, 12345);
  profW_end_array(&w);
  T_EQ_INT(w.failed, 1);
  T_CHECK(b.len <= 5);
}

static void test_profile_document(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId root, a, drop;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 110, &root);
  prof_module_add(S, root, "fc", "Linear", 110, &a);
  prof_module_add(S, root, "drop", "Dropout", 0, &drop);
  prof_module_set_flags(S, drop, PROF_MODULE_IGNORED);
  prof_start(S);
  prof_module_enter(S, root);
  prof_module_enter(S, a);
  prof_Op op = {0};
  op.kind = PROF_OP_CUSTOM;
  op.macs = 100;
  op.flops = 200;
  prof_op_record(S, &op);
  prof_module_exit(S, a);
  prof_module_exit(S, root);
  prof_stop(S);
  prof_RunInfo info;
  prof_runinfo_init(&info);
  info.device = "meta";
  info.mp_size = 2;
  info.batch_size = 1;
  Buf b = {.fail_after = -1};
  T_EQ_INT(prof_write_profile_json(S, &info, buf_write, &b), PROF_OK);
  T_CONTAINS(b.data, "\"schema\": \"profrun.profile/1\"");
  T_CONTAINS(b.data, "\"device\": \"meta\"");
  T_CONTAINS(b.data, "\"conventions\": \"exact\"");
  T_CONTAINS(b.data, "\"params\": 110,");
  T_CONTAINS(b.data, "\"params_model\": 220,");     /* x mp_size */
  T_CONTAINS(b.data, "\"fwd_flops_model\": 400,");
  T_CONTAINS(b.data, "\"bwd_flops\": null,");
  T_CONTAINS(b.data, "\"fwd_latency_s\": null,");   /* meta: nothing was timed */
  T_CONTAINS(b.data, "\"name\": \"fc\"");
  T_CHECK(strstr(b.data, "\"drop\"") == NULL);      /* ignored: left out */
  T_CONTAINS(b.data, "\"parent\": 0,");
  /* a failing sink is an error, not a crash */
  Buf small = {.fail_after = 40};
  T_EQ_INT(prof_write_profile_json(S, &info, buf_write, &small), PROF_ERRIO);
  prof_close(S);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  static char data[256];
  size_t n = fread(data, 1, sizeof data - 1, f);
  data[n] = '\0';
  fclose(f);
  return data;
}

static void test_atomic_file(void) {
  prof_State *S = prof_new(NULL, NULL);
  char dir[] = "/tmp/profrun-test-XXXXXX";
  T_CHECK(mkdtemp(dir) != NULL);
  char path[256], blocked[256];
  snprintf(path, sizeof path, "%s/sub/dir/out.txt", dir);
  T_EQ_INT(prof_write_file_atomic(S, path, "hello", 5), PROF_OK);   /* parents are created */
  T_EQ_STR(slurp(path), "hello");
  T_EQ_INT(prof_write_file_atomic(S, path, "bye", 3), PROF_OK);     /* replaced whole */
  T_EQ_STR(slurp(path), "bye");
  /* a parent that is a file: the write fails with the path in the message, nothing is left */
  snprintf(blocked, sizeof blocked, "%s/sub/dir/out.txt/inner.txt", dir);
  T_EQ_INT(prof_write_file_atomic(S, blocked, "x", 1), PROF_ERRIO);
  T_CONTAINS(prof_errmsg(S), "inner.txt");
  T_EQ_STR(slurp(path), "bye");
  char cmd[512];
  snprintf(cmd, sizeof cmd, "test $(find %s -type f | wc -l) -eq 1 && rm -rf %s", dir, dir);
  T_EQ_INT(system(cmd), 0);   /* exactly one file: no temporary left behind */
  prof_close(S);
}

int main(void) {
  T_RUN(test_writer_compact);
  T_RUN(test_writer_pretty);
  T_RUN(test_writer_failure_is_sticky);
  T_RUN(test_profile_document);
  T_RUN(test_atomic_file);
  return T_DONE();
}
