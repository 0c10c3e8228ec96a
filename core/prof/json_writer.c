/* json_writer.c — a streaming JSON writer: documents are emitted as they are built, never held. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "prof_internal.h"

#define MAX_DEPTH ((int)(sizeof ((profW_Writer *)0)->need_comma / sizeof(int)))

static void put(profW_Writer *w, const char *s, size_t n) {
  if (w->failed || n == 0) return;
  if (w->fn(w->ud, s, n) != 0) w->failed = 1;
}

static void puts_(profW_Writer *w, const char *s) { put(w, s, strlen(s)); }

static void newline(profW_Writer *w) {
  static const char spaces[] = "                                                                ";
  if (!w->pretty) return;
  put(w, "\n", 1);
  for (int i = 0; i < w->depth; i++) put(w, spaces, 2);
}

/* Every value and key goes through here: a comma after a sibling, a line break when pretty. */
static void before_value(profW_Writer *w) {
  if (w->depth == 0) return;
  int *nc = &w->need_comma[w->depth];
  if (*nc == 2) {           /* right after a key */
    *nc = 1;
    return;
  }
  if (*nc) put(w, ",", 1);
  newline(w);
  *nc = 1;
}

void profW_init(profW_Writer *w, prof_WriteFn fn, void *ud, int pretty) {
  memset(w, 0, sizeof *w);
  w->fn = fn;
  w->ud = ud;
  w->pretty = pretty;
}

static void open_(profW_Writer *w, const char *c) {
  before_value(w);
  puts_(w, c);
  if (w->depth + 1 >= MAX_DEPTH) {
    w->failed = 1;
    return;
  }
  w->need_comma[++w->depth] = 0;
}

static void close_(profW_Writer *w, const char *c) {
  int had = w->need_comma[w->depth];
  if (w->depth > 0) w->depth--;
  if (had) newline(w);
  puts_(w, c);
}

void profW_begin_object(profW_Writer *w) { open_(w, "{"); }
void profW_end_object(profW_Writer *w) { close_(w, "}"); }
void profW_begin_array(profW_Writer *w) { open_(w, "["); }
void profW_end_array(profW_Writer *w) { close_(w, "]"); }

/*
** Length of the well-formed UTF-8 sequence at s (2..4 bytes), or 0 with *bad set to the length of
** its maximal ill-formed prefix, which Unicode replaces by one U+FFFD: overlongs, surrogates,
** values above U+10FFFF, stray continuation bytes and truncated sequences are all ill-formed. The
** terminating NUL is never a continuation byte, so a truncated sequence stops before it.
*/
static int utf8_len(const unsigned char *s, int *bad) {
  unsigned c = s[0], lo = 0x80, hi = 0xBF;
  int n;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;          /* overlong below U+0800 */
    if (c == 0xED) hi = 0x9F;          /* surrogates U+D800..DFFF */
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;          /* overlong below U+10000 */
    if (c == 0xF4) hi = 0x8F;          /* above U+10FFFF */
  } else {
    *bad = 1;
    return 0;
  }
  for (int i = 1; i < n; i++) {
    unsigned b = s[i];
    if (b < lo || b > hi) {
      *bad = i;
      return 0;
    }
    lo = 0x80;
    hi = 0xBF;
  }
  return n;
}

/* Nothing reaches the output raw but printable ASCII and well-formed UTF-8: a reader that chokes
   on control characters or bad bytes (Perfetto, pytorch#130622) gets escapes and U+FFFD. */
static void string_body(profW_Writer *w, const char *str) {
  const unsigned char *s = (const unsigned char *)str, *run = s;
  put(w, "\"", 1);
  while (*s) {
    unsigned char c = *s;
    if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
      s++;
      continue;
    }
    int bad = 0, n = c >= 0x80 ? utf8_len(s, &bad) : 0;
    if (n > 0) {
      s += n;
      continue;
    }
    put(w, (const char *)run, (size_t)(s - run));
    char esc[8];
    switch (c) {
      case '"': puts_(w, "\\\""); break;
      case '\\': puts_(w, "\\\\"); break;
      case '\n': puts_(w, "\\n"); break;
      case '\r': puts_(w, "\\r"); break;
      case '\t': puts_(w, "\\t"); break;
      default:
        if (bad > 0) {
          puts_(w, "\\ufffd");
        } else {
          snprintf(esc, sizeof esc, "\\u%04x", c);
          puts_(w, esc);
        }
    }
    s += bad > 0 ? bad : 1;
    run = s;
  }
  put(w, (const char *)run, (size_t)(s - run));
  put(w, "\"", 1);
}

void profW_key(profW_Writer *w, const char *key) {
  before_value(w);
  string_body(w, key);
  put(w, w->pretty ? ": " : ":", w->pretty ? 2 : 1);
  w->need_comma[w->depth] = 2;
}

void profW_string(profW_Writer *w, const char *s) {
  before_value(w);
  if (s == NULL) puts_(w, "null");
  else string_body(w, s);
}

void profW_int(profW_Writer *w, int64_t v) {
  char buf[32];
  before_value(w);
  snprintf(buf, sizeof buf, "%lld", (long long)v);
  puts_(w, buf);
}

void profW_double(profW_Writer *w, double v) {
  char buf[40];
  before_value(w);
  if (!isfinite(v)) {
    puts_(w, "null");
    return;
  }
  /* an integral value below 2^63 as its digits (1e+20 as 100000000000000000000), as the Lua
     encoder (lua/prof/report/json_encode.lua) prints it, so both write one number one way */
  if (v == floor(v) && v > -9223372036854775808.0 && v < 9223372036854775808.0)
    snprintf(buf, sizeof buf, "%lld", (long long)v);
  else
    snprintf(buf, sizeof buf, "%.17g", v);
  puts_(w, buf);
}

void profW_bool(profW_Writer *w, int v) {
  before_value(w);
  puts_(w, v ? "true" : "false");
}

void profW_null(profW_Writer *w) {
  before_value(w);
  puts_(w, "null");
}
