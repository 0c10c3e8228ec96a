/* report_units.c — DeepSpeed's number formatters and Python's str/repr, to the character, and the writers' output sinks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_internal.h"

/* {====================== output ======================} */

void profP_put(profP_Out *o, const char *s, size_t len) {
  if (!o->failed && len > 0 && o->fn(o->ud, s, len) != 0) o->failed = 1;
}

void profP_puts(profP_Out *o, const char *s) { profP_put(o, s, strlen(s)); }

void profP_pad(profP_Out *o, size_t n) {
  static const char spaces[] = "                                                                ";
  while (n > 0) {
    size_t k = n < sizeof spaces - 1 ? n : sizeof spaces - 1;
    profP_put(o, spaces, k);
    n -= k;
  }
}

int profP_text_write(void *ud, const char *data, size_t len) {
  profP_Text *t = ud;
  if (t->len + len + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 256;
    while (cap < t->len + len + 1) cap *= 2;
    char *p = profI_realloc(t->S, t->data, t->cap, cap);
    if (p == NULL) return -1;
    t->data = p;
    t->cap = cap;
  }
  memcpy(t->data + t->len, data, len);
  t->len += len;
  t->data[t->len] = '\0';
  return 0;
}

void profP_text_free(profP_Text *t) {
  if (t->data) profI_free(t->S, t->data, t->cap);
  t->data = NULL;
  t->len = t->cap = 0;
}

/* {====================== numbers ======================} */

double profP_round2(double x) {
  char buf[PROFP_NUM * 4];
  if (!isfinite(x)) return x;
  /* printf rounds the exact binary value half-even, as Python's round does; read back */
  snprintf(buf, sizeof buf, "%.2f", x);
  double r = strtod(buf, NULL);
  if (r == 0 && buf[0] == '-') r = -0.0;
  return r;
}

const char *profP_number(double num, const char *suffix, char *buf) {
  if (isnan(num)) return snprintf(buf, PROFP_NUM, "n/a"), buf;
  double mag;
  const char *unit;
  /* the unit is chosen before rounding (999999 is "1000 K"); negatives fall to "u", as DeepSpeed */
  if (num >= 1e12) mag = 1e12, unit = "T";
  else if (num >= 1e9) mag = 1e9, unit = "G";
  else if (num >= 1e6) mag = 1e6, unit = "M";
  else if (num >= 1e3) mag = 1e3, unit = "K";
  else if (num >= 1 || num == 0) mag = 1, unit = "";
  else if (num >= 1e-3) mag = 1e-3, unit = "m";
  else mag = 1e-6, unit = "u";
  snprintf(buf, PROFP_NUM, "%g %s%s", profP_round2(num / mag), unit, suffix);
  return buf;
}

const char *profP_params(int64_t params, char *buf) {
  return profP_params_sum(params == PROF_UNKNOWN ? NAN : (double)params, buf);
}

const char *profP_params_sum(double params, char *buf) {
  if (isnan(params)) return snprintf(buf, PROFP_NUM, "n/a"), buf;
  profP_number(params, "", buf);
  for (char *p = buf; *p; p++)
    if (*p == 'G') *p = 'B';
  size_t n = strlen(buf);
  while (n > 0 && buf[n - 1] == ' ') buf[--n] = '\0';
  return buf;
}

const char *profP_pct(double x, double total, char *buf) {
  if (isnan(x)) snprintf(buf, PROFP_NUM, "n/a");
  else if (isnan(total) || total == 0) snprintf(buf, PROFP_NUM, "0");
  else snprintf(buf, PROFP_NUM, "%g", profP_round2(100 * x / total));
  return buf;
}

const char *profP_pct_int(int64_t x, int64_t total, char *buf) {
  if (x == PROF_UNKNOWN) return snprintf(buf, PROFP_NUM, "n/a"), buf;
  if (total == PROF_UNKNOWN || total == 0) return snprintf(buf, PROFP_NUM, "0"), buf;
  /* 100 * x in integers unless that would wrap (a saturated count): then in floats */
  double scaled = (x > INT64_MAX / 100 || x < -(INT64_MAX / 100)) ? 100.0 * (double)x
                                                                  : (double)(100 * x);
  snprintf(buf, PROFP_NUM, "%g", profP_round2(scaled / (double)total));
  return buf;
}

const char *profP_rate(double work, double latency, char *buf) {
  if (isnan(work) || isnan(latency)) return snprintf(buf, PROFP_NUM, "n/a"), buf;
  if (latency == 0) return profP_number(0, "FLOPS", buf);
  return profP_number(work / latency, "FLOPS", buf);
}

double profP_add(double a, double b) {
  if (isnan(a)) return b;
  if (isnan(b)) return a;
  return a + b;
}

/* {====================== Python's str ======================} */

const char *profP_pystr_int(int64_t v, char *buf) {
  if (v == PROF_UNKNOWN) snprintf(buf, PROFP_NUM, "n/a");
  else snprintf(buf, PROFP_NUM, "%lld", (long long)v);
  return buf;
}

/*
** repr(float): the shortest digits that read back to v; fixed notation while the decimal point
** sits within 16 digits (and no further than 4 zeros after it), else d.ddde+XX; an integral
** fixed value keeps ".0".
*/
const char *profP_pystr_float(double v, char *buf) {
  if (isnan(v)) return snprintf(buf, PROFP_NUM, "n/a"), buf;
  if (isinf(v)) return snprintf(buf, PROFP_NUM, v > 0 ? "inf" : "-inf"), buf;
  if (v == 0) return snprintf(buf, PROFP_NUM, signbit(v) ? "-0.0" : "0.0"), buf;
  char e[64];
  for (int p = 0; p <= 16; p++) {
    snprintf(e, sizeof e, "%.*e", p, v);
    if (strtod(e, NULL) == v) break;
  }
  /* e is [-]d[.ddd]e[+-]XX */
  const char *s = e;
  int neg = *s == '-';
  if (neg) s++;
  char digits[32];
  size_t nd = 0;
  for (; *s && *s != 'e'; s++)
    if (*s != '.' && nd < sizeof digits - 1) digits[nd++] = *s;
  while (nd > 1 && digits[nd - 1] == '0') nd--;
  digits[nd] = '\0';
  int decpt = atoi(s + 1) + 1;
  char *o = buf;
  if (neg) *o++ = '-';
  if (decpt > 16 || decpt <= -4) {
    int ex = decpt - 1;
    *o++ = digits[0];
    if (nd > 1) {
      *o++ = '.';
      memcpy(o, digits + 1, nd - 1);
      o += nd - 1;
    }
    snprintf(o, (size_t)(PROFP_NUM - (o - buf)), "e%c%02d", ex < 0 ? '-' : '+', ex < 0 ? -ex : ex);
  } else if (decpt <= 0) {
    *o++ = '0';
    *o++ = '.';
    for (int i = 0; i < -decpt; i++) *o++ = '0';
    memcpy(o, digits, nd + 1);
  } else if ((size_t)decpt >= nd) {
    memcpy(o, digits, nd);
    o += nd;
    for (size_t i = nd; i < (size_t)decpt; i++) *o++ = '0';
    memcpy(o, ".0", 3);
  } else {
    memcpy(o, digits, (size_t)decpt);
    o += decpt;
    *o++ = '.';
    memcpy(o, digits + decpt, nd - (size_t)decpt + 1);
  }
  return buf;
}

void profP_pyrepr(profP_Out *o, const char *s) {
  char q = (strchr(s, '\'') && !strchr(s, '"')) ? '"' : '\'';
  profP_put(o, &q, 1);
  for (const char *p = s; *p; p++) {
    char buf[8];
    unsigned char c = (unsigned char)*p;
    if (c == '\\' || c == (unsigned char)q) snprintf(buf, sizeof buf, "\\%c", c);
    else if (c == '\n') snprintf(buf, sizeof buf, "\\n");
    else if (c == '\r') snprintf(buf, sizeof buf, "\\r");
    else if (c == '\t') snprintf(buf, sizeof buf, "\\t");
    else if (c < 0x20 || c == 0x7f) snprintf(buf, sizeof buf, "\\x%02x", c);
    else buf[0] = (char)c, buf[1] = '\0';
    profP_puts(o, buf);
  }
  profP_put(o, &q, 1);
}
