/* fuzz_json.c — libFuzzer harness for the JSON profile and Chrome-trace writers: any names, counts and event orders. */
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "prof.h"

/*
** The input is a little program, one byte of opcode at a time, driving a session: add a module
** (name and type are the next bytes up to a NUL: any bytes, invalid UTF-8 and control characters
** included), enter/exit modules, record custom ops with counts taken from the input (up to
** INT64_MAX: sums saturate), push/pop ranges, instants, counters, memory events, phase changes.
** Then both writers run; each document must parse as JSON (cJSON is the oracle), whatever the
** names held, and the device properties (a string from the input) either fail with PROF_ERRARG or
** are kept as valid JSON.
*/
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

typedef struct Input { const unsigned char *p, *end; } Input;

static int byte(Input *in) { return in->p < in->end ? *in->p++ : 0; }

static int64_t i64(Input *in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = v << 8 | (uint64_t)byte(in);
  return (int64_t)(v >> 1);   /* non-negative: counts are */
}

/* The next bytes up to a NUL (or the end), as a NUL-terminated string in buf. */
static const char *str(Input *in, char *buf, size_t size) {
  size_t n = 0;
  while (in->p < in->end && *in->p != '\0' && n + 1 < size) buf[n++] = (char)*in->p++;
  if (in->p < in->end) in->p++;
  buf[n] = '\0';
  return buf;
}

typedef struct Sink { char *data; size_t len, cap; } Sink;

static int sink_write(void *ud, const char *data, size_t len) {
  Sink *s = ud;
  if (s->len + len + 1 > s->cap) {
    size_t cap = (s->len + len + 1) * 2;
    char *d = realloc(s->data, cap);
    if (d == NULL) return 1;
    s->data = d;
    s->cap = cap;
  }
  memcpy(s->data + s->len, data, len);
  s->len += len;
  s->data[s->len] = '\0';
  return 0;
}

static void must_parse(const Sink *s) {
  cJSON *j = cJSON_ParseWithLengthOpts(s->data, s->len, NULL, 0);
  if (j == NULL) abort();   /* a writer produced invalid JSON */
  cJSON_Delete(j);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  Input in = {data, data + size};
  prof_State *S = prof_new(NULL, NULL);
  if (S == NULL) abort();
  prof_set_event_capacity(S, 256);
  prof_set_memory_events(S, 1);
  prof_start(S);
  char name[64], type[32];
  int32_t n_modules = 0;
  for (int steps = 0; in.p < in.end && steps < 512; steps++) {
    int op = byte(&in) % 12;
    prof_ModuleId id = n_modules > 0 ? (prof_ModuleId)(byte(&in) % n_modules) : PROF_NO_MODULE;
    switch (op) {
    case 0: {   /* a module under id (or a root) */
      str(&in, name, sizeof name);
      str(&in, type, sizeof type);
      if (prof_module_add(S, id, name, type, i64(&in), NULL) == PROF_OK) n_modules++;
      break;
    }
    case 1: if (id >= 0) prof_module_enter(S, id); break;
    case 2: if (id >= 0) prof_module_exit(S, id); break;
    case 3: {
      prof_Op o = {0};
      o.kind = PROF_OP_CUSTOM;
      o.name = prof_intern(S, str(&in, name, sizeof name));
      o.macs = i64(&in);
      o.flops = i64(&in);
      o.bytes_read = byte(&in);
      o.bytes_written = byte(&in);
      prof_op_record(S, &o);
      break;
    }
    case 4: prof_range_push(S, prof_intern(S, str(&in, name, sizeof name))); break;
    case 5: prof_range_pop(S); break;
    case 6: prof_instant(S, prof_intern(S, str(&in, name, sizeof name))); break;
    case 7: prof_counter(S, prof_intern(S, str(&in, name, sizeof name)), i64(&in)); break;
    case 8: prof_mem_alloc(S, byte(&in) & 1, NULL, byte(&in)); break;
    case 9: prof_mem_free(S, byte(&in) & 1, NULL, byte(&in)); break;
    case 10: prof_set_phase(S, (prof_Phase)(byte(&in) % 3)); break;
    default: (void)prof_check(S); break;
    }
  }
  prof_stop(S);
  Sink s = {0};
  prof_RunInfo info;
  prof_runinfo_init(&info);
  info.mp_size = 1 + byte(&in);
  if (prof_write_profile_json(S, &info, sink_write, &s) == PROF_OK) must_parse(&s);
  s.len = 0;
  prof_TraceInfo ti;
  prof_traceinfo_init(&ti);
  char props[64];
  ti.device_properties = str(&in, props, sizeof props);
  if (props[0] == '\0') ti.device_properties = NULL;   /* most inputs: the default, [] */
  ti.process_name = str(&in, name, sizeof name);
  int rc = prof_write_chrome_trace(S, &ti, sink_write, &s);
  if (rc == PROF_OK) must_parse(&s);
  else if (rc != PROF_ERRARG) abort();
  free(s.data);
  prof_close(S);
  return 0;
}
