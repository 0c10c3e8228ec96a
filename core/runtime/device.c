/* device.c — the runtime's device registry: names to backends, built-ins first. */
#include <stdio.h>
#include <string.h>

#include "runtime.h"

int pr_device_register(pr_Runtime *rt, const pr_Backend *be) {
  for (int i = 0; i < rt->n_devices; i++)
    if (strcmp(rt->devices[i]->name, be->name) == 0) {
      rt->devices[i] = be;
      return i;
    }
  if (rt->n_devices >= PR_MAX_DEVICES)
    return pr_error(rt, "device '%s': the registry already holds %d devices", be->name,
                    PR_MAX_DEVICES);
  rt->devices[rt->n_devices] = be;
  return rt->n_devices++;
}

int pr_device_parse(const pr_Runtime *rt, const char *name) {
  for (int i = 0; i < rt->n_devices; i++)
    if (strcmp(name, rt->devices[i]->name) == 0) return i;
  return -1;
}

const char *pr_device_name(const pr_Runtime *rt, int device) {
  return device >= 0 && device < rt->n_devices ? rt->devices[device]->name : "?";
}

const pr_Backend *pr_device_backend(const pr_Runtime *rt, int device) {
  return device >= 0 && device < rt->n_devices ? rt->devices[device] : NULL;
}

const char *pr_device_list(const pr_Runtime *rt, char *buf, size_t size) {
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < rt->n_devices && len < size; i++) {
    const char *sep = i == 0 ? "" : i == rt->n_devices - 1 ? " or " : ", ";
    len += (size_t)snprintf(buf + len, size - len, "%s%s", sep, rt->devices[i]->name);
  }
  return buf;
}
