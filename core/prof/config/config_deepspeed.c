/* config_deepspeed.c — DeepSpeed's own config keys: the top level and its documented sections. */
#include <string.h>

#include "config_internal.h"

/*
** Every top-level key DeepSpeed itself reads, so that a real ds_config.json loads unchanged; the
** batch keys, wall_clock_breakdown and flops_profiler are the core's and live in its schema
** (config_schema.c).
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
static const char *const top_keys[] = {
  /* batch and steps */
  "managed_gradient_accumulation",       /* runtime/constants.py, config-json.md */
  "steps_per_print",                     /* logging */
  "dump_state",                          /* logging */
  "elasticity",                          /* elastic training (elasticity/constants.py) */
  "sequence_parallel_size",              /* deepspeed/__init__.py, world size under Ulysses */
  "data_parallel_size",                  /* deepspeed/__init__.py, mesh device */
  "vocabulary_size",                     /* runtime/config.py */
  "dataloader_drop_last",                /* deepspeed_io's DataLoader */
  /* schedule */
  "optimizer",                           /* {type, params}: lua/prof/deepspeed/optimizer.lua */
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
  "datastates_ckpt",
  NULL
};

/*
** The keys of DeepSpeed's documented sections, so that a typo inside one (fp16.enabeld) is an
** error naming the closest documented key, as one in profrun's own sections is.
** Source: deepspeedai/DeepSpeed docs/_pages/config-json.md @ 00376da4 ("DeepSpeed Configuration
** JSON": the key tables and examples of each section), plus the keys DeepSpeed reads that the
** page lists under another heading, and the fields DeepSpeed's ZeRO config models read
** (deepspeed/runtime/zero/config.py @ 1b88ac36, zero/offload_config.py @ 1978617c).
** Sections not listed (pipeline, elasticity, compile, data_efficiency, tensor_parallel,
** expert_parallel, amp, ...) and params objects (optimizer.params: lua/prof/deepspeed/optimizer.lua
** checks them per type; scheduler.params: per scheduler) are passed on unchecked.
*/
static const char *const optimizer_keys[] = { "type", "params", "legacy_fusion", NULL };
static const char *const scheduler_keys[] = { "type", "params", NULL };
static const char *const fp16_keys[] = {
  "enabled", "auto_cast", "loss_scale", "initial_scale_power", "loss_scale_window", "hysteresis",
  "consecutive_hysteresis", "min_loss_scale", "fp16_master_weights_and_grads", NULL
};
/* the docs' list, DeepSpeedBF16Config's other fields (runtime/precision_config.py @ 0ac46845) */
static const char *const bf16_keys[] = {
  "enabled", "bf16_master_weights_and_grads", "bf16_optimizer_states", "immediate_grad_update",
  "check_grad_overflow", NULL
};
static const char *const torch_autocast_keys[] = {
  "enabled", "dtype", "lower_precision_safe_modules", NULL
};
/* The docs' list, then what DeepSpeedZeroConfig also reads (its field names and their stage3_
   aliases, deprecated ones included, since old configs still carry them). */
static const char *const zero_keys[] = {
  "stage", "allgather_partitions", "allgather_bucket_size", "compute_grad_norm", "overlap_comm",
  "reduce_scatter", "reduce_bucket_size", "contiguous_gradients", "load_from_fp32_weights",
  "round_robin_gradients", "parameter_alignment", "offload_param", "offload_optimizer",
  "stage3_max_live_parameters", "stage3_max_reuse_distance", "stage3_prefetch_bucket_size",
  "stage3_param_persistence_threshold", "sub_group_size", "elastic_checkpoint",
  "stage3_gather_16bit_weights_on_model_save", "stage3_module_granularity_threshold",
  "ignore_unused_parameters", "zero_hpz_partition_size", "zero_quantized_weights",
  "zero_quantized_gradients", "log_trace_cache_warnings", "cpu_offload",
  "save_muon_momentum_buffer_in_memory",
  /* runtime/zero/config.py */
  "use_multi_rank_bucket_allreduce", "zenflow", "cpu_offload_param", "cpu_offload_use_pin_memory",
  "prefetch_bucket_size", "param_persistence_threshold", "model_persistence_threshold",
  "stage3_model_persistence_threshold", "max_live_parameters", "max_reuse_distance",
  "gather_16bit_weights_on_model_save", "module_granularity_threshold",
  "use_all_reduce_for_fetch_params", "stage3_use_all_reduce_for_fetch_params",
  "allgather_sequential", "stage3_allgather_sequential", "partition_stream_chunk_size",
  "stage3_partition_stream_chunk_size", "stage3_gather_fp16_weights_on_model_save",
  "legacy_stage1", "zero_quantized_nontrainable_weights", "zeropp_loco_param", "mics_shard_size",
  "mics_hierarchical_params_gather", "memory_efficient_linear", "pipeline_loading_checkpoint",
  "override_module_apply", "enable_sanity_checks", "leaf_module", NULL
};
/* runtime/zero/offload_config.py */
static const char *const offload_param_keys[] = {
  "device", "nvme_path", "pin_memory", "buffer_count", "buffer_size", "max_in_cpu", NULL
};
static const char *const offload_optimizer_keys[] = {
  "device", "nvme_path", "pin_memory", "ratio", "buffer_count", "fast_init", "pipeline_read",
  "pipeline_write", "super_offload", "convert_grad_on_cpu", "cpuadam_cores_perc", NULL
};
static const char *const aio_keys[] = {
  "block_size", "queue_depth", "thread_count", "single_submit", "overlap_events", NULL
};
static const char *const hybrid_engine_keys[] = {
  "enabled", "max_out_tokens", "inference_tp_size", "release_inference_cache", "pin_parameters",
  "tp_gather_partition_size", "enable_cuda_graph", NULL
};
static const char *const autotuning_keys[] = {
  "enabled", "results_dir", "exps_dir", "overwrite", "metric", "start_profile_step",
  "end_profile_step", "fast", "max_train_batch_size", "mp_size", "num_tuning_micro_batch_sizes",
  "tuner_type", "tuner_early_stopping", "tuner_num_trials", "arg_mappings", NULL
};
static const char *const activation_checkpointing_keys[] = {
  "partition_activations", "cpu_checkpointing", "contiguous_memory_optimization",
  "number_checkpoints", "synchronize_checkpoint_boundary", "profile", NULL
};
static const char *const monitor_keys[] = { "enabled", "output_path", "job_name", NULL };
static const char *const wandb_keys[] = { "enabled", "group", "team", "project", NULL };
static const char *const comet_keys[] = {
  "enabled", "workspace", "project", "samples_log_interval", "experiment_name", "api_key",
  "experiment_key", "online", "mode", NULL
};
static const char *const comms_logger_keys[] = {
  "enabled", "verbose", "prof_all", "debug", "prof_ops", NULL
};
static const char *const checkpoint_keys[] = {
  "tag_validation", "load_universal", "use_node_local_storage", "parallel_write", NULL
};
static const char *const parallel_write_keys[] = { "pipeline_stage", NULL };
static const char *const data_types_keys[] = { "grad_accum_dtype", NULL };

static const struct {
  const char *path;
  const char *const *keys;
} sections[] = {
  { "optimizer", optimizer_keys },
  { "scheduler", scheduler_keys },
  { "fp16", fp16_keys },
  { "bf16", bf16_keys },
  { "bfloat16", bf16_keys },
  { "torch_autocast", torch_autocast_keys },
  { "zero_optimization", zero_keys },
  { "zero_optimization.offload_param", offload_param_keys },
  { "zero_optimization.offload_optimizer", offload_optimizer_keys },
  { "aio", aio_keys },
  { "hybrid_engine", hybrid_engine_keys },
  { "autotuning", autotuning_keys },
  { "activation_checkpointing", activation_checkpointing_keys },
  { "tensorboard", monitor_keys },
  { "csv_monitor", monitor_keys },
  { "wandb", wandb_keys },
  { "comet", comet_keys },
  { "comms_logger", comms_logger_keys },
  { "checkpoint", checkpoint_keys },
  { "checkpoint.parallel_write", parallel_write_keys },
  { "data_types", data_types_keys },
};

/* The few values the loader can check without interpreting them (the docs give their types). */
static const struct {
  const char *path;
  prof_ConfigType type;
} typed[] = {
  { "optimizer.legacy_fusion", PROF_CONFIG_BOOL },
  { "fp16.enabled", PROF_CONFIG_BOOL },
  { "bf16.enabled", PROF_CONFIG_BOOL },
  { "zero_optimization.stage", PROF_CONFIG_INT },
};

const char *const *profC_deepspeed_top(void) {
  return top_keys;
}

const char *const *profC_deepspeed_keys(const char *section) {
  for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
    if (strcmp(sections[i].path, section) == 0) return sections[i].keys;
  return NULL;
}

int profC_deepspeed_type(const char *path) {
  for (size_t i = 0; i < sizeof typed / sizeof typed[0]; i++)
    if (strcmp(typed[i].path, path) == 0) return (int)typed[i].type;
  return -1;
}
