/* config_schema.c — the core's config keys: one row each (type, default, range, doc). */
#include <stddef.h>
#include <string.h>

#include "config_internal.h"

/*
** Every key the core reads lives here and only here: the loader parses, validates and fills
** defaults from these rows, --set meets the same checks, the Lua binding builds its table from
** them, and profrun --help-config lists them. Adding a key is a row plus its field in prof.h.
** Sections come before their keys; the loader reads the keys in this order.
** Defaults are JSON text read by the same code as a file's value, so a default always passes
** its own row's checks (spec/c/test_config_schema.c loads every one).
*/

#define AT(field) offsetof(prof_Config, field)
#define FP(field) offsetof(prof_Config, flops_profiler.field)
#define PR(field) offsetof(prof_Config, profiler.field)

static const char *const devices[] = { "meta", "cpu", "cuda", NULL };
/* prof_Conventions order: the index is the enum's value */
static const char *const conventions[] = { "exact", "deepspeed", NULL };
static const char *const activities[] = { "cpu", "cuda", NULL };

static const prof_ConfigKey rows[] = {
  /* DeepSpeed's batch keys (DeepSpeed's default is None: null or absent leaves them unset) */
  { .path = "train_batch_size", .type = PROF_CONFIG_INT, .offset = AT(train_batch_size),
    .nullable = 1, .min = 1, .default_json = "null",
    .doc = "samples per optimizer step over all GPUs (DeepSpeed's)" },
  { .path = "train_micro_batch_size_per_gpu", .type = PROF_CONFIG_INT,
    .offset = AT(train_micro_batch_size_per_gpu), .nullable = 1, .min = 1,
    .default_json = "null", .doc = "samples per forward; the batch size the profile reports" },
  { .path = "gradient_accumulation_steps", .type = PROF_CONFIG_INT,
    .offset = AT(gradient_accumulation_steps), .nullable = 1, .min = 1, .default_json = "null",
    .doc = "forwards per optimizer step (the engine's default: 1)" },
  { .path = "wall_clock_breakdown", .type = PROF_CONFIG_BOOL, .offset = AT(wall_clock_breakdown),
    .default_json = "false", .doc = "print forward/backward/step times at every step" },
  { .path = "device", .type = PROF_CONFIG_STRING, .offset = AT(device), .nullable = 1,
    .choices = devices, .default_json = "null",
    .doc = "device of every tensor (null: meta under profrun); --device sets it" },
  { .path = "device_options", .type = PROF_CONFIG_SECTION, .default_json = "{}",
    .doc = "how a device computes" },
  { .path = "device_options.tf32", .type = PROF_CONFIG_BOOL, .offset = AT(device_tf32),
    .default_json = "false",
    .doc = "float32 matrix products on cuda use TF32 tensor cores (faster, ~1e-3 relative)" },

  { .path = "flops_profiler", .type = PROF_CONFIG_SECTION, .default_json = "{}",
    .doc = "DeepSpeed's flops profiler, plus profrun's keys" },
  { .path = "flops_profiler.enabled", .type = PROF_CONFIG_BOOL, .offset = FP(enabled),
    .default_json = "false", .doc = "profile the engine's step profile_step" },
  { .path = "flops_profiler.recompute_fwd_factor", .type = PROF_CONFIG_NUMBER,
    .offset = FP(recompute_fwd_factor), .min = 0, .default_json = "0",
    .doc = "share of the forward recomputed in the backward (activation checkpointing)" },
  { .path = "flops_profiler.profile_step", .type = PROF_CONFIG_INT, .offset = FP(profile_step),
    .min = 0, .default_json = "1", .doc = "the optimizer step to profile, counted from 0" },
  { .path = "flops_profiler.module_depth", .type = PROF_CONFIG_INT, .offset = FP(module_depth),
    .min = -1, .default_json = "-1", .doc = "depth of the aggregated tree printed (-1: all)" },
  { .path = "flops_profiler.top_modules", .type = PROF_CONFIG_INT, .offset = FP(top_modules),
    .min = 1, .default_json = "1", .doc = "modules listed per depth in the aggregated profile" },
  { .path = "flops_profiler.detailed", .type = PROF_CONFIG_BOOL, .offset = FP(detailed),
    .default_json = "true", .doc = "print the per-module tree" },
  { .path = "flops_profiler.detailed_backward", .type = PROF_CONFIG_BOOL,
    .offset = offsetof(prof_Config, detailed_backward), .default_json = "false",
    .doc = "the per-module tree also prints each module's measured backward (flops, latency)" },
  { .path = "flops_profiler.output_file", .type = PROF_CONFIG_STRING, .offset = FP(output_file),
    .nullable = 1, .default_json = "null",
    .doc = "write the profile there (written atomically; null: stdout)" },
  { .path = "flops_profiler.conventions", .type = PROF_CONFIG_ENUM, .offset = FP(conventions),
    .choices = conventions, .default_json = "\"exact\"",
    .doc = "count what runs (exact) or reproduce DeepSpeed's numbers (deepspeed)" },
  { .path = "flops_profiler.format", .type = PROF_CONFIG_STRING, .offset = FP(format),
    .nullable = 1, .default_json = "null",
    .doc = "deepspeed, json, csv, markdown, summary, roofline or a .lua report (null: from "
           "output_file's extension)" },
  { .path = "flops_profiler.ignore_modules", .type = PROF_CONFIG_STRINGS,
    .offset = FP(ignore_modules), .count_offset = FP(n_ignore_modules), .default_json = "[]",
    .doc = "module types, paths, \"prefix.*\" or Lua patterns left out of the counts" },
  { .path = "flops_profiler.rules", .type = PROF_CONFIG_STRINGS, .offset = FP(rules),
    .count_offset = FP(n_rules), .default_json = "[]",
    .doc = "flop-rule scripts (scripts/rules/NAME.lua or a path)" },

  { .path = "profiler", .type = PROF_CONFIG_SECTION, .default_json = "{}",
    .doc = "the activity profiler (torch.profiler's settings)" },
  { .path = "profiler.enabled", .type = PROF_CONFIG_BOOL, .offset = PR(enabled),
    .default_json = "false", .doc = "record activities while the script runs" },
  { .path = "profiler.activities", .type = PROF_CONFIG_STRINGS, .offset = PR(activities),
    .count_offset = PR(n_activities), .choices = activities, .default_json = "[\"cpu\"]",
    .doc = "what to record: cpu ops and ranges, cuda kernels and copies" },
  { .path = "profiler.record_shapes", .type = PROF_CONFIG_BOOL, .offset = PR(record_shapes),
    .default_json = "false", .doc = "record the input shapes of every op" },
  { .path = "profiler.profile_memory", .type = PROF_CONFIG_BOOL, .offset = PR(profile_memory),
    .default_json = "false", .doc = "record allocations and frees" },
  { .path = "profiler.with_stack", .type = PROF_CONFIG_BOOL, .offset = PR(with_stack),
    .default_json = "false", .doc = "record the Lua source line of every op" },
  { .path = "profiler.with_flops", .type = PROF_CONFIG_BOOL, .offset = PR(with_flops),
    .default_json = "false", .doc = "attach FLOPs to ops in the table and the trace" },
  { .path = "profiler.with_modules", .type = PROF_CONFIG_BOOL, .offset = PR(with_modules),
    .default_json = "false", .doc = "attach the module path to every op" },
  { .path = "profiler.output_dir", .type = PROF_CONFIG_STRING, .offset = PR(output_dir),
    .nullable = 1, .default_json = "null",
    .doc = "write one trace per cycle there (tensorboard_trace_handler)" },
  { .path = "profiler.trace_file", .type = PROF_CONFIG_STRING, .offset = PR(trace_file),
    .nullable = 1, .default_json = "null",
    .doc = "write the Chrome/Perfetto trace there (.json or .json.gz)" },
  { .path = "profiler.emit_nvtx", .type = PROF_CONFIG_BOOL,
    .offset = offsetof(prof_Config, emit_nvtx), .default_json = "false",
    .doc = "emit an NVTX range \"path:Type\" per module call (Nsight Systems sees the tree)" },

  { .path = "profiler.schedule", .type = PROF_CONFIG_SECTION, .default_json = "{}",
    .doc = "torch.profiler.schedule: which steps are recorded" },
  { .path = "profiler.schedule.wait", .type = PROF_CONFIG_INT, .offset = PR(wait), .min = 0,
    .default_json = "0", .doc = "steps skipped at the start of each cycle" },
  { .path = "profiler.schedule.warmup", .type = PROF_CONFIG_INT, .offset = PR(warmup),
    .min = 0, .default_json = "0", .doc = "steps traced but discarded after the wait" },
  { .path = "profiler.schedule.active", .type = PROF_CONFIG_INT, .offset = PR(active),
    .min = 1, .default_json = "1", .doc = "steps recorded per cycle" },
  { .path = "profiler.schedule.repeat", .type = PROF_CONFIG_INT, .offset = PR(repeat),
    .min = 0, .default_json = "0", .doc = "cycles (0: until the run ends)" },
  { .path = "profiler.schedule.skip_first", .type = PROF_CONFIG_INT, .offset = PR(skip_first),
    .min = 0, .default_json = "0", .doc = "steps skipped once, before the first cycle" },
  { .path = "profiler.schedule.script", .type = PROF_CONFIG_STRING,
    .offset = AT(schedule_script), .nullable = 1, .default_json = "null",
    .doc = "a schedule script (scripts/schedules/NAME.lua or a path) instead of the rows above" },
  { .path = "profiler.schedule.args", .type = PROF_CONFIG_OBJECT, .offset = AT(schedule_args),
    .nullable = 1, .default_json = "null",
    .doc = "the table given to the schedule script (every_n: {\"every\": 10})" },

  { .path = "parallel", .type = PROF_CONFIG_SECTION, .default_json = "{}",
    .doc = "model parallelism (Megatron layers)" },
  { .path = "parallel.model_parallel_size", .type = PROF_CONFIG_INT,
    .offset = AT(model_parallel_size), .min = 1, .default_json = "1",
    .doc = "model-parallel ranks: per-rank numbers and x mp_size model totals" },
  { .path = "parallel.model_parallel_rank", .type = PROF_CONFIG_INT,
    .offset = AT(model_parallel_rank), .min = 0, .default_json = "0",
    .doc = "this process's partition, below model_parallel_size" },

  { .path = "report", .type = PROF_CONFIG_SECTION, .default_json = "{}",
    .doc = "reports" },
  { .path = "report.script", .type = PROF_CONFIG_STRING, .offset = AT(report_script),
    .nullable = 1, .default_json = "null",
    .doc = "a report script run on the profile after the default report" },
};

#define N_ROWS ((int32_t)(sizeof rows / sizeof rows[0]))

const prof_ConfigKey *prof_config_key(int32_t i) {
  return i >= 0 && i < N_ROWS ? &rows[i] : NULL;
}

const prof_ConfigKey *profC_row(const char *path, size_t n) {
  for (int32_t i = 0; i < N_ROWS; i++)
    if (strncmp(rows[i].path, path, n) == 0 && rows[i].path[n] == '\0') return &rows[i];
  return NULL;
}
