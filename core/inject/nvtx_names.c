/* nvtx_names.c — what an NVTX range's message says: a module (path and type) or an emit_nvtx op. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "inject.h"

static void copy_n(char *dst, const char *src, size_t n) {
  if (n >= INJN_NAME_SIZE) n = INJN_NAME_SIZE - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

static int is_ident(const char *s, size_t n) {
  if (n == 0) return 0;
  for (size_t i = 0; i < n; i++)
    if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) return 0;
  return 1;
}

/* "AddmmBackward0", "MulBackward": the names autograd gives its nodes. */
static int is_backward_node(const char *s, size_t n) {
  if (!is_ident(s, n)) return 0;
  while (n > 0 && isdigit((unsigned char)s[n - 1])) n--;
  return n > 8 && memcmp(s + n - 8, "Backward", 8) == 0;
}

/* Skips spaces; returns the new position. */
static const char *ws(const char *p) {
  while (*p == ' ') p++;
  return p;
}

/*
** One list of sizes "[[128], [32, 64], []]" at p into r->sizes; returns 0 when it is not one
** (r->nsizes is then -1). An entry with too many dims keeps ndim -1; entries beyond
** INJN_MAX_SIZES are read and dropped.
*/
static int parse_sizes(const char *p, injN_Range *r) {
  p = ws(p);
  if (*p++ != '[') return 0;
  int32_t n = 0;
  p = ws(p);
  if (*p == ']') {
    r->nsizes = 0;
    return 1;
  }
  for (;;) {
    p = ws(p);
    if (*p++ != '[') goto bad;
    prof_Operand o = {.ndim = 0, .dtype = PROF_F32};
    p = ws(p);
    if (*p != ']') {
      for (;;) {
        char *end;
        p = ws(p);
        long long d = strtoll(p, &end, 10);
        if (end == p || d < 0) goto bad;
        p = ws(end);
        if (o.ndim >= 0 && o.ndim < PROF_MAX_DIMS) o.dim[o.ndim++] = d;
        else o.ndim = -1;
        if (*p == ',') { p++; continue; }
        break;
      }
    }
    if (*p++ != ']') goto bad;
    if (n < INJN_MAX_SIZES) r->sizes[n] = o;
    n++;
    p = ws(p);
    if (*p == ',') { p++; continue; }
    if (*p == ']') break;
    goto bad;
  }
  r->nsizes = n < INJN_MAX_SIZES ? n : INJN_MAX_SIZES;
  return 1;
bad:
  r->nsizes = -1;
  return 0;
}

/* The fields after an op's name: ", seq = 12", ", stashed seq = 3", ", op_id = 5", ", sizes = ...". */
static void parse_fields(const char *p, injN_Range *r) {
  while ((p = strstr(p, ", ")) != NULL) {
    p += 2;
    if (strncmp(p, "seq = ", 6) == 0) {
      r->seq = strtoll(p + 6, NULL, 10);
    } else if (strncmp(p, "stashed seq = ", 14) == 0) {
      r->seq = strtoll(p + 14, NULL, 10);
      r->backward = 1;
    } else if (strncmp(p, "sizes = ", 8) == 0) {
      parse_sizes(p + 8, r);
      return; /* what follows the list (input_op_ids) is not needed */
    }
  }
}

void injN_parse(const char *msg, injN_Range *r) {
  if (msg == NULL) msg = "";
  memset(r, 0, sizeof *r);
  r->seq = -1;
  r->nsizes = -1;
  size_t head = strcspn(msg, ",");
  int fields = msg[head] == ',' && (strstr(msg + head, ", seq = ") != NULL ||
                                    strstr(msg + head, ", stashed seq = ") != NULL ||
                                    strstr(msg + head, ", sizes = ") != NULL);
  int aten = strncmp(msg, "aten::", 6) == 0 && is_ident(msg + 6, head - 6);
  int node = is_backward_node(msg, head) && (fields || msg[head] == '\0');
  if (aten || node || (fields && strstr(msg, "::") != NULL && strstr(msg, "::") < msg + head)) {
    r->is_op = 1;
    r->backward = node;
    copy_n(r->name, msg, head);
    parse_fields(msg + head, r);
    return;
  }
  /* a module: "path:Type" when a single ':' splits a space-free path from a type */
  size_t len = strlen(msg);
  const char *colon = strrchr(msg, ':');
  if (colon != NULL && colon > msg && colon[-1] != ':' && colon[1] != '\0' &&
      strchr(msg, ' ') == NULL && memchr(msg, ':', (size_t)(colon - msg)) == NULL) {
    copy_n(r->name, msg, (size_t)(colon - msg));
    copy_n(r->type, colon + 1, len - (size_t)(colon - msg) - 1);
    return;
  }
  copy_n(r->type, msg, len);
}
