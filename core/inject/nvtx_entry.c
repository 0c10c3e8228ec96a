/* nvtx_entry.c — InitializeInjectionNvtx2: installs profrun's NVTX implementations into the application's NVTX export table. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define NVTX_NO_IMPL /* a tool: NVTX's types and ids, not its implementation */
#include <nvtx3/nvToolsExt.h>

#include "inject_main.h"

#define INJ_EXPORT __attribute__((visibility("default")))

/* The calling thread's tree state; NULL (the call is dropped) only when out of memory. */
static injT_Thread *thread_of(injM_Ctx **c) {
  *c = injM_get();
  return *c != NULL ? injT_thread((*c)->tree) : NULL;
}

/* A wide message as UTF-8 (what a module name is stored as); "" when it cannot be converted. */
static const char *narrow(const wchar_t *w, char *buf, size_t size) {
  buf[0] = '\0';
  if (w == NULL) return buf;
  mbstate_t st;
  memset(&st, 0, sizeof st);
  const wchar_t *p = w;
  size_t n = wcsrtombs(buf, &p, size - 1, &st);
  buf[n == (size_t)-1 ? 0 : n] = '\0';
  return buf;
}

/* The message of an attributes struct (ASCII, wide or a registered handle) and its category. */
static const char *message_of(const nvtxEventAttributes_t *a, uint32_t *category, char *buf,
                              size_t size) {
  *category = 0;
  if (a == NULL) return "";
  if (a->size >= offsetof(nvtxEventAttributes_t, colorType)) *category = a->category;
  if (a->size < offsetof(nvtxEventAttributes_t, message) + sizeof a->message) return "";
  switch (a->messageType) {
  case NVTX_MESSAGE_TYPE_ASCII: return a->message.ascii != NULL ? a->message.ascii : "";
  case NVTX_MESSAGE_TYPE_UNICODE: return narrow(a->message.unicode, buf, size);
  case NVTX_MESSAGE_TYPE_REGISTERED: /* our handles are interned strings (register_string_a) */
    return a->message.registered != NULL ? (const char *)(uintptr_t)a->message.registered : "";
  default: return "";
  }
}

static uint32_t domain_of(nvtxDomainHandle_t d) { return (uint32_t)(uintptr_t)d; }

/* {====================== the core module ======================} */

static int NVTX_API push_a(const char *msg) {
  injM_Ctx *c;
  injT_Thread *th = thread_of(&c);
  return th != NULL ? injT_push(c->tree, th, INJT_DEFAULT_DOMAIN, 0, msg) - 1 : -1;
}

static int NVTX_API push_w(const wchar_t *msg) {
  char buf[512];
  return push_a(narrow(msg, buf, sizeof buf));
}

static int NVTX_API domain_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  injM_Ctx *c;
  injT_Thread *th = thread_of(&c);
  char buf[512];
  uint32_t cat;
  const char *msg = message_of(a, &cat, buf, sizeof buf);
  return th != NULL ? injT_push(c->tree, th, domain_of(d), cat, msg) - 1 : -1;
}

static int NVTX_API push_ex(const nvtxEventAttributes_t *a) { return domain_push_ex(NULL, a); }

static int NVTX_API domain_pop(nvtxDomainHandle_t d) {
  injM_Ctx *c;
  injT_Thread *th = thread_of(&c);
  return th != NULL ? injT_pop(c->tree, th, domain_of(d)) : -1;
}

static int NVTX_API pop(void) { return domain_pop(NULL); }

static nvtxRangeId_t NVTX_API domain_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  injM_Ctx *c;
  injT_Thread *th = thread_of(&c);
  char buf[512];
  uint32_t cat;
  const char *msg = message_of(a, &cat, buf, sizeof buf);
  return th != NULL ? injT_start(c->tree, th, domain_of(d), cat, msg) : 0;
}

static nvtxRangeId_t NVTX_API start_ex(const nvtxEventAttributes_t *a) {
  return domain_start_ex(NULL, a);
}

static nvtxRangeId_t NVTX_API start_a(const char *msg) {
  injM_Ctx *c;
  injT_Thread *th = thread_of(&c);
  return th != NULL ? injT_start(c->tree, th, INJT_DEFAULT_DOMAIN, 0, msg) : 0;
}

static nvtxRangeId_t NVTX_API start_w(const wchar_t *msg) {
  char buf[512];
  return start_a(narrow(msg, buf, sizeof buf));
}

static void NVTX_API domain_end(nvtxDomainHandle_t d, nvtxRangeId_t id) {
  (void)d; /* ids are unique over domains */
  injM_Ctx *c;
  injT_Thread *th = thread_of(&c);
  if (th != NULL) injT_end(c->tree, th, id);
}

static void NVTX_API end(nvtxRangeId_t id) { domain_end(NULL, id); }

static void NVTX_API mark_a(const char *msg) {
  injM_Ctx *c;
  injT_Thread *th = thread_of(&c);
  if (th != NULL) injT_mark(c->tree, th, msg);
}

static void NVTX_API mark_w(const wchar_t *msg) {
  char buf[512];
  mark_a(narrow(msg, buf, sizeof buf));
}

static void NVTX_API domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  (void)d;
  char buf[512];
  uint32_t cat;
  mark_a(message_of(a, &cat, buf, sizeof buf));
}

static void NVTX_API mark_ex(const nvtxEventAttributes_t *a) { domain_mark_ex(NULL, a); }

static void NVTX_API domain_name_category_a(nvtxDomainHandle_t d, uint32_t cat, const char *name) {
  injM_Ctx *c = injM_get();
  if (c != NULL) injT_name_category(c->tree, domain_of(d), cat, name);
}

static void NVTX_API name_category_a(uint32_t cat, const char *name) {
  domain_name_category_a(NULL, cat, name);
}

static void NVTX_API domain_name_category_w(nvtxDomainHandle_t d, uint32_t cat, const wchar_t *name) {
  char buf[512];
  domain_name_category_a(d, cat, narrow(name, buf, sizeof buf));
}

static void NVTX_API name_category_w(uint32_t cat, const wchar_t *name) {
  domain_name_category_w(NULL, cat, name);
}

/* {====================== the core2 module: domains ======================} */

static nvtxDomainHandle_t NVTX_API domain_create_a(const char *name) {
  injM_Ctx *c = injM_get();
  /* the handle is the domain's number (1, 2, ...): NULL stays NVTX's default domain */
  return c != NULL ? (nvtxDomainHandle_t)(uintptr_t)injT_domain(c->tree, name) : NULL;
}

static nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t *name) {
  char buf[512];
  return domain_create_a(narrow(name, buf, sizeof buf));
}

static void NVTX_API domain_destroy(nvtxDomainHandle_t d) { (void)d; /* numbers stay valid */ }

static nvtxStringHandle_t NVTX_API register_string_a(nvtxDomainHandle_t d, const char *s) {
  (void)d;
  injM_Ctx *c = injM_get();
  const char *k = c != NULL ? prof_intern(c->S, s != NULL ? s : "") : NULL;
  return (nvtxStringHandle_t)(uintptr_t)k;
}

static nvtxStringHandle_t NVTX_API register_string_w(nvtxDomainHandle_t d, const wchar_t *s) {
  char buf[512];
  return register_string_a(d, narrow(s, buf, sizeof buf));
}

static void NVTX_API initialize(const void *reserved) { (void)reserved; }

/* {====================== installing ======================} */

typedef struct Slot {
  unsigned id;
  NvtxFunctionPointer fn;
} Slot;

#define FN(f) ((NvtxFunctionPointer)(f))

static const Slot core_slots[] = {
  {NVTX_CBID_CORE_MarkEx, FN(mark_ex)}, {NVTX_CBID_CORE_MarkA, FN(mark_a)},
  {NVTX_CBID_CORE_MarkW, FN(mark_w)}, {NVTX_CBID_CORE_RangeStartEx, FN(start_ex)},
  {NVTX_CBID_CORE_RangeStartA, FN(start_a)}, {NVTX_CBID_CORE_RangeStartW, FN(start_w)},
  {NVTX_CBID_CORE_RangeEnd, FN(end)}, {NVTX_CBID_CORE_RangePushEx, FN(push_ex)},
  {NVTX_CBID_CORE_RangePushA, FN(push_a)}, {NVTX_CBID_CORE_RangePushW, FN(push_w)},
  {NVTX_CBID_CORE_RangePop, FN(pop)}, {NVTX_CBID_CORE_NameCategoryA, FN(name_category_a)},
  {NVTX_CBID_CORE_NameCategoryW, FN(name_category_w)},
};

static const Slot core2_slots[] = {
  {NVTX_CBID_CORE2_DomainMarkEx, FN(domain_mark_ex)},
  {NVTX_CBID_CORE2_DomainRangeStartEx, FN(domain_start_ex)},
  {NVTX_CBID_CORE2_DomainRangeEnd, FN(domain_end)},
  {NVTX_CBID_CORE2_DomainRangePushEx, FN(domain_push_ex)},
  {NVTX_CBID_CORE2_DomainRangePop, FN(domain_pop)},
  {NVTX_CBID_CORE2_DomainNameCategoryA, FN(domain_name_category_a)},
  {NVTX_CBID_CORE2_DomainNameCategoryW, FN(domain_name_category_w)},
  {NVTX_CBID_CORE2_DomainRegisterStringA, FN(register_string_a)},
  {NVTX_CBID_CORE2_DomainRegisterStringW, FN(register_string_w)},
  {NVTX_CBID_CORE2_DomainCreateA, FN(domain_create_a)},
  {NVTX_CBID_CORE2_DomainCreateW, FN(domain_create_w)},
  {NVTX_CBID_CORE2_DomainDestroy, FN(domain_destroy)},
  {NVTX_CBID_CORE2_Initialize, FN(initialize)},
};

/* Writes each slot's function into the application's table of module m; 0 when it has none. */
static int install(const NvtxExportTableCallbacks *cb, NvtxCallbackModule m, const Slot *slots,
                   size_t n) {
  NvtxFunctionTable table = NULL;
  unsigned size = 0;
  if (!cb->GetModuleFunctionTable(m, &table, &size) || table == NULL) return 0;
  for (size_t i = 0; i < n; i++)
    if (slots[i].id < size && table[slots[i].id] != NULL) *table[slots[i].id] = slots[i].fn;
  return 1;
}

/*
** NVTX's loader calls this once, at the application's first NVTX call, when
** NVTX_INJECTION64_PATH names this library. Returns 1 (attached) or 0 (NVTX stays a no-op).
*/
INJ_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table);

INJ_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table) {
  if (get_table == NULL) return 0;
  const NvtxExportTableCallbacks *cb = get_table(NVTX_ETID_CALLBACKS);
  if (cb == NULL || cb->struct_size < sizeof *cb || cb->GetModuleFunctionTable == NULL) return 0;
  const NvtxExportTableVersionInfo *vi = get_table(NVTX_ETID_VERSIONINFO);
  if (vi != NULL && vi->struct_size >= sizeof *vi && vi->SetInjectionNvtxVersion != NULL)
    vi->SetInjectionNvtxVersion(NVTX_VERSION);
  if (injM_get() == NULL) return 0;
  if (!install(cb, NVTX_CB_MODULE_CORE, core_slots, sizeof core_slots / sizeof core_slots[0]))
    return 0;
  install(cb, NVTX_CB_MODULE_CORE2, core2_slots, sizeof core2_slots / sizeof core2_slots[0]);
  return 1;
}
