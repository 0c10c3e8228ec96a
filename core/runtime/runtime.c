/* runtime.c — a runtime's defaults and its built-in devices: the one file that knows every backend. */
#include <string.h>
#include <unistd.h>

#include "runtime.h"

void pr_runtime_init(pr_Runtime *rt) {
  memset(rt, 0, sizeof *rt);
  rt->default_device = PR_SHAPES_DEVICE;
  rt->default_dtype = PROF_F32;
  rt->grad_enabled = 1;
  rt->home = rt;                /* copies of rt (internal quiet runtimes) count into this one */
  pr_device_register(rt, pr_backend_meta());   /* PR_SHAPES_DEVICE */
  rt->host_device = pr_device_register(rt, pr_backend_cpu());
  pr_device_register(rt, pr_backend_cuda());
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  rt->memory_bytes = pages > 0 && page > 0 ? (int64_t)pages * page : 0;
  pr_manual_seed(rt, 0);
}
