/* dtype.c — element types: sizes and PyTorch's names, both ways. */
#include <string.h>

#include "prof.h"

typedef struct DTypeInfo {
  const char *name;
  int size;
} DTypeInfo;

static const DTypeInfo dtypes[PROF_DTYPE_COUNT] = {
  [PROF_F32] = {"float32", 4}, [PROF_F64] = {"float64", 8}, [PROF_F16] = {"float16", 2},
  [PROF_BF16] = {"bfloat16", 2}, [PROF_I64] = {"int64", 8}, [PROF_I32] = {"int32", 4},
  [PROF_I8] = {"int8", 1}, [PROF_U8] = {"uint8", 1}, [PROF_BOOL] = {"bool", 1},
};

/* PyTorch's other spellings of the same types (torch.float is torch.float32, ...). */
static const struct {
  const char *alias;
  prof_DType dt;
} aliases[] = {
  {"float", PROF_F32}, {"double", PROF_F64}, {"half", PROF_F16},
  {"long", PROF_I64}, {"int", PROF_I32},
};

int prof_dtype_size(prof_DType dt) {
  if ((int)dt < 0 || dt >= PROF_DTYPE_COUNT) return 0;
  return dtypes[dt].size;
}

const char *prof_dtype_name(prof_DType dt) {
  if ((int)dt < 0 || dt >= PROF_DTYPE_COUNT) return "unknown";
  return dtypes[dt].name;
}

int prof_dtype_parse(const char *name) {
  if (name == NULL) return -1;
  if (strncmp(name, "torch.", 6) == 0) name += 6;  /* str(torch.float32) is "torch.float32" */
  for (int i = 0; i < PROF_DTYPE_COUNT; i++)
    if (strcmp(name, dtypes[i].name) == 0) return i;
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (strcmp(name, aliases[i].alias) == 0) return (int)aliases[i].dt;
  return -1;
}

const char *prof_device_name(int32_t device) { return device == PROF_DEVICE_CUDA ? "cuda" : "cpu"; }

const char *prof_mem_category_name(prof_MemCategory c) {
  /* torch's Category names, lower case */
  static const char *const names[] = {"unknown", "parameter", "optimizer_state", "input",
                                      "temporary", "activation", "gradient"};
  return (unsigned)c < sizeof names / sizeof names[0] ? names[c] : "unknown";
}

int prof_device_parse(const char *name) {
  if (name == NULL || strcmp(name, "cpu") == 0) return PROF_DEVICE_CPU;
  if (strcmp(name, "cuda") == 0) return PROF_DEVICE_CUDA;
  return -1;
}
