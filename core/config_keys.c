/* config_keys.c — which config keys exist (profrun's and DeepSpeed's); the closest-key search. */
#include <ctype.h>
#include <string.h>

#include "config_internal.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Keys profrun reads and validates, per section (config.c reads them in the same order). */
static const char *const top_keys[] = {
  "train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
  "wall_clock_breakdown", "device", "flops_profiler", "optimizer", "parallel", "report"
};

static const char *const flops_keys[] = {
  /* DeepSpeed's (deepspeed/profiling/constants.py) */
  "enabled", "recompute_fwd_factor", "profile_step", "module_depth", "top_modules", "detailed",
  "output_file",
  /* profrun's */
  "conventions", "format", "ignore_modules", "rules"
};

static const char *const parallel_keys[] = { "model_parallel_size", "model_parallel_rank" };

static const char *const report_keys[] = { "script" };

/* DeepSpeed's optimizer section (runtime/constants.py: OPTIMIZER_PARAMS, TYPE, LEGACY_FUSION). */
static const char *const optimizer_keys[] = { "type", "params", "legacy_fusion" };

/*
** The params DeepSpeed passes on for Adam and AdamW: FusedAdam's (ops/adam/fused_adam.py: lr,
** bias_correction, betas, eps, weight_decay, amsgrad), torch.optim.Adam's maximize, and the two
** switches _configure_basic_optimizer pops first. Any other key would reach a constructor that
** refuses it, so profrun refuses it here.
*/
static const char *const adam_param_keys[] = {
  "lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "bias_correction", "torch_adam",
  "adam_w_mode"
};

/* torch.optim.SGD's keyword arguments that profrun's SGD implements. */
static const char *const sgd_param_keys[] = {
  "lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize"
};

static const char *const optimizer_types[] = { "Adam", "AdamW", "SGD" };

/*
** Every top-level key DeepSpeed itself reads, so that a real ds_config.json loads unchanged; the
** batch keys, wall_clock_breakdown, flops_profiler and optimizer are the ones profrun reads and
** live in top_keys.
** Source: deepspeedai/DeepSpeed main @ edaa7221 (2026-08-22): DeepSpeedConfig.__init__ and
** _initialize_params in deepspeed/runtime/config.py, the constants they use (runtime/constants.py,
** zero/config.py, activation_checkpointing/config.py, comm/constants.py, monitor/config.py,
** autotuning/constants.py, elasticity/constants.py, nebula/constants.py, datastates/config.py,
** compression/constants.py, data_pipeline/constants.py, swap_tensor/constants.py,
** utils/config.py), deepspeed/__init__.py, and the headings of docs/_pages/config-json.md.
** Keys DeepSpeed reads only inside a section (mics_shard_size in zero_optimization,
** load_universal and use_node_local_storage in checkpoint) are not top-level keys.
**
**   key                                    where DeepSpeed reads it / what it is
*/
static const char *const deepspeed_keys[] = {
  /* batch and steps */
  "managed_gradient_accumulation",       /* runtime/constants.py, config-json.md */
  "steps_per_print",                     /* logging */
  "dump_state",                          /* logging */
  "elasticity",                          /* elastic training (elasticity/constants.py) */
  "sequence_parallel_size",              /* deepspeed/__init__.py, world size under Ulysses */
  "data_parallel_size",                  /* deepspeed/__init__.py, mesh device */
  "vocabulary_size",                     /* runtime/config.py */
  "dataloader_drop_last",                /* deepspeed_io's DataLoader */
  /* schedule (the optimizer section is read: top_keys) */
  "scheduler",                           /* {type, params} */
  "zero_allow_untested_optimizer",
  "zero_force_ds_cpu_optimizer",
  /* communication */
  "communication_data_type",
  "seq_parallel_communication_data_type",
  "prescale_gradients",
  "gradient_predivide_factor",
  "gradient_allreduce_op",
  "sparse_gradients",
  "disable_allgather",
  /* precision */
  "fp16",                                /* runtime/precision_config.py */
  "bf16",
  "bfloat16",                            /* bf16's legacy name, still accepted */
  "amp",                                 /* Apex AMP */
  "torch_autocast",
  "data_types",                          /* {grad_accum_dtype, param_dtype, buffer_dtype} */
  "gradient_clipping",
  "graph_harvesting",
  /* ZeRO and memory */
  "zero_optimization",                   /* runtime/zero/config.py */
  "aio",                                 /* swap_tensor/constants.py, NVMe offload */
  "activation_checkpointing",
  "memory_breakdown",
  /* parallelism */
  "pipeline",
  "tensor_parallel",                     /* AutoTP */
  "expert_parallel",                     /* AutoEP */
  "use_data_before_expert_parallelism",
  "hybrid_engine",
  /* logging and monitoring */
  "tensorboard",                         /* monitor/config.py */
  "wandb",
  "csv_monitor",
  "comet",
  "comms_logger",                        /* comm/constants.py */
  "timers",                              /* utils/config.py */
  "log_level",
  /* tuning and analysis */
  "autotuning",
  "eigenvalue",
  /* training techniques */
  "sparse_attention",
  "progressive_layer_drop",
  "curriculum_learning",                 /* legacy curriculum (data_pipeline/constants.py) */
  "data_efficiency",
  "compression_training",
  "quantize_training",
  "weight_quantization",                 /* inference/config.py WeightQuantConfig */
  "compile",                             /* DeepCompile */
  /* checkpointing */
  "checkpoint",                          /* {tag_validation, load_universal, ...} */
  "nebula",
  "datastates_ckpt"
};

typedef struct KeyList {
  const char *const *keys;
  size_t n;
} KeyList;

static const KeyList deepspeed = { deepspeed_keys, COUNT(deepspeed_keys) };

static const KeyList known[PROFC_SECTION_COUNT] = {
  { top_keys, COUNT(top_keys) },
  { flops_keys, COUNT(flops_keys) },
  { parallel_keys, COUNT(parallel_keys) },
  { report_keys, COUNT(report_keys) },
  { optimizer_keys, COUNT(optimizer_keys) },
  { adam_param_keys, COUNT(adam_param_keys) },
  { sgd_param_keys, COUNT(sgd_param_keys) },
  { optimizer_types, COUNT(optimizer_types) }
};

static int in_list(const KeyList *l, const char *key) {
  for (size_t i = 0; i < l->n; i++)
    if (strcmp(l->keys[i], key) == 0) return 1;
  return 0;
}

int profC_classify(profC_Section sec, const char *key) {
  if ((unsigned)sec >= PROFC_SECTION_COUNT) return PROFC_UNKNOWN;
  if (in_list(&known[sec], key)) return PROFC_KNOWN;
  if (sec == PROFC_TOP && in_list(&deepspeed, key)) return PROFC_DEEPSPEED;
  return PROFC_UNKNOWN;
}

#define MAX_KEY 64

size_t profC_edit_distance(const char *a, const char *b) {
  /* One row over b suffices: b is a table key, so the row lives on the stack whatever a is. */
  size_t row[MAX_KEY + 1];
  size_t nb = strlen(b);
  if (nb > MAX_KEY) return (size_t)-1;
  for (size_t j = 0; j <= nb; j++) row[j] = j;
  for (size_t i = 1; a[i - 1] != '\0'; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= nb; j++) {
      size_t up = row[j];
      int same = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]);
      size_t best = diag + (same ? 0 : 1);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[nb];
}

static void nearest_in(const KeyList *l, const char *key, const char **best, size_t *dist) {
  for (size_t i = 0; i < l->n; i++) {
    size_t d = profC_edit_distance(key, l->keys[i]);
    if (d < *dist) {
      *dist = d;
      *best = l->keys[i];
    }
  }
}

const char *profC_closest(profC_Section sec, const char *key) {
  const char *best = NULL;
  size_t dist = (size_t)-1;
  size_t limit = strlen(key) / 3;
  if ((unsigned)sec >= PROFC_SECTION_COUNT) return NULL;
  if (limit < 2) limit = 2;
  nearest_in(&known[sec], key, &best, &dist);
  /* DeepSpeed's keys come second so that profrun's own win a tie. */
  if (sec == PROFC_TOP) nearest_in(&deepspeed, key, &best, &dist);
  return dist <= limit ? best : NULL;
}
