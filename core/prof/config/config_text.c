/* config_text.c — what a config's JSON text hides from cJSON: NUL escapes and trailing commas. */
#include <string.h>

#include "config_internal.h"

static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int is_zero_hex(const char *s) {
  return s[0] == '0' && s[1] == '0' && s[2] == '0' && s[3] == '0';
}

/*
** cJSON decodes "\u0000" into a NUL byte and keeps the C string before it, so "out\u0000x.json"
** would silently become "out" and "top_modules\u0000x" a known key. A NUL can only be written as
** that escape, and only inside a string: one pass with a string/escape state finds it.
*/
size_t profC_find_nul_escape(const char *text, size_t len) {
  int in_string = 0;
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    if (!in_string) {
      in_string = c == '"';
    } else if (c == '"') {
      in_string = 0;
    } else if (c == '\\' && i + 1 < len) {
      if (text[i + 1] == 'u' && len - i >= 6 && is_zero_hex(text + i + 2)) return i;
      i++;  /* the escaped character, whatever it is, cannot end the string */
    }
  }
  return (size_t)-1;
}

/* The comma before the bracket at close, past white space; (size_t)-1 when none. */
static size_t comma_before(const char *text, size_t close) {
  size_t j;
  for (j = close; j > 0 && is_space(text[j - 1]); j--) {}
  return j > 0 && text[j - 1] == ',' ? j - 1 : (size_t)-1;
}

/*
** JSON allows no comma before '}' or ']'; cJSON stops at the bracket (in an array) or just past
** it (in an object, where the next character may be another bracket: `{"a": {"b": 1,}}`), which
** reads as "invalid JSON at the end of the line". The comma is the mistake worth naming.
*/
size_t profC_trailing_comma(const char *text, size_t len, size_t pos, char *bracket) {
  for (size_t back = 0; back <= 1; back++) {
    if (pos < back || pos - back >= len) continue;
    size_t close = pos - back, comma;
    if (text[close] != '}' && text[close] != ']') continue;
    if ((comma = comma_before(text, close)) == (size_t)-1) continue;
    *bracket = text[close];
    return comma;
  }
  return (size_t)-1;
}
