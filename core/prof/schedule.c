/* schedule.c — torch.profiler's schedule machine, its transition table, and a host-driven scheduler. */
#include <string.h>

#include "prof_internal.h"

static const char *const ACTION_NAMES[] = {"NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE"};

const char *prof_action_name(prof_Action a) {
  return (unsigned)a < sizeof ACTION_NAMES / sizeof *ACTION_NAMES ? ACTION_NAMES[a] : NULL;
}

prof_Action prof_schedule_torch(void *ud, int64_t step, int64_t step_ns) {
  const prof_Schedule *s = ud;
  (void)step_ns;
  if (s == NULL || s->active < 1 || s->wait < 0 || s->warmup < 0 || s->repeat < 0 ||
      s->skip_first < 0 || s->skip_first_wait < 0 || step < 0)
    return PROF_ACTION_NONE;
  if (step < s->skip_first) return PROF_ACTION_NONE;
  step -= s->skip_first;
  if (s->skip_first_wait != 0) step += s->wait;
  int64_t n = s->wait + s->warmup + s->active;
  /* torch compares step / n >= repeat in floats: for integers that is step >= repeat * n */
  if (s->repeat > 0 && step / n >= s->repeat) return PROF_ACTION_NONE;
  int64_t m = step % n;
  if (m < s->wait) return PROF_ACTION_NONE;
  if (m < s->wait + s->warmup) return PROF_ACTION_WARMUP;
  if (m < n - 1) return PROF_ACTION_RECORD;
  return PROF_ACTION_RECORD_AND_SAVE;
}

/* torch's _transit_action table (profiler.py); rows prev, columns cur, the last column exit. */
#define P PROF_ITEM_PREPARE
#define B PROF_ITEM_START
#define E PROF_ITEM_STOP
#define R PROF_ITEM_TRACE_READY
#define W PROF_ITEM_WARN
#define Z PROF_ITEM_END
static const prof_ScheduleItem TRANSITIONS[4][5][5] = {
  /* NONE ->     NONE      WARMUP       RECORD          SAVE            exit */
  {{Z}, {P, Z}, {P, B, Z}, {P, B, Z}, {Z}},
  /* WARMUP -> */
  {{W, B, E, Z}, {Z}, {B, Z}, {B, Z}, {B, E, Z}},
  /* RECORD -> */
  {{W, E, Z}, {W, E, Z}, {Z}, {Z}, {E, R, Z}},
  /* RECORD_AND_SAVE -> */
  {{E, R, Z}, {E, R, P, Z}, {E, R, P, B, Z}, {E, R, P, B, Z}, {E, R, Z}},
};
#undef P
#undef B
#undef E
#undef R
#undef W
#undef Z

const prof_ScheduleItem *prof_schedule_transition(int prev, int cur) {
  static const prof_ScheduleItem none[1] = {PROF_ITEM_END};
  if (prev < 0 || prev > 3 || cur < -1 || cur > 3) return none;
  return TRANSITIONS[prev][cur < 0 ? 4 : cur];
}

struct prof_Scheduler {
  prof_State *S;
  prof_ScheduleFn fn;
  void *ud;
  prof_WindowFn ready;
  void *ready_ud;
  int64_t step;                /* the step now running */
  prof_Action action;          /* its action */
  int64_t t_step_ns;           /* when it began */
};

/* Runs the transition prev -> cur (cur -1: exit); `step` is the step whose end closes a window. */
static int transit(prof_Scheduler *sch, int prev, int cur, int64_t step) {
  prof_State *S = sch->S;
  for (const prof_ScheduleItem *it = prof_schedule_transition(prev, cur); *it != PROF_ITEM_END; it++) {
    int rc = PROF_OK;
    switch (*it) {
      case PROF_ITEM_START: rc = prof_start(S); break;
      case PROF_ITEM_STOP: rc = prof_stop(S); break;
      case PROF_ITEM_TRACE_READY:
        if (sch->ready != NULL && sch->ready(sch->ready_ud, S, step) != 0)
          return profI_error(S, PROF_ERRIO, "schedule: the window ending at step %lld: the "
                             "ready callback failed", (long long)step);
        break;
      default: break;           /* prepare and warn: nothing to do in the core (it never prints) */
    }
    if (rc != PROF_OK) return rc;
  }
  return PROF_OK;
}

static prof_Action ask(prof_Scheduler *sch, int64_t step, int64_t step_ns) {
  prof_Action a = sch->fn(sch->ud, step, step_ns);
  return (unsigned)a <= PROF_ACTION_RECORD_AND_SAVE ? a : PROF_ACTION_NONE;
}

prof_Scheduler *prof_scheduler_new(prof_State *S, prof_ScheduleFn fn, void *ud, prof_WindowFn ready,
                                   void *ready_ud) {
  if (fn == NULL) {
    profI_error(S, PROF_ERRARG, "prof_scheduler_new: no schedule function");
    return NULL;
  }
  prof_Scheduler *sch = profI_alloc(S, sizeof *sch);
  if (sch == NULL) {
    profI_error(S, PROF_ERRMEM, "out of memory creating a scheduler");
    return NULL;
  }
  *sch = (prof_Scheduler){S, fn, ud, ready, ready_ud, 0, PROF_ACTION_NONE, prof_now_ns()};
  sch->action = ask(sch, 0, -1);
  /* torch's start(): the transition from NONE into step 0's action */
  if (transit(sch, PROF_ACTION_NONE, (int)sch->action, -1) != PROF_OK) {
    profI_free(S, sch, sizeof *sch);
    return NULL;
  }
  return sch;
}

int prof_scheduler_step(prof_Scheduler *sch) {
  int64_t now = prof_now_ns();
  int64_t ended = sch->step;
  prof_Action prev = sch->action;
  sch->step++;
  sch->action = ask(sch, sch->step, now - sch->t_step_ns);
  sch->t_step_ns = now;
  return transit(sch, (int)prev, (int)sch->action, ended);
}

int64_t prof_scheduler_step_num(const prof_Scheduler *sch) { return sch->step; }

prof_Action prof_scheduler_action(const prof_Scheduler *sch) { return sch->action; }

int prof_scheduler_close(prof_Scheduler *sch) {
  if (sch == NULL) return PROF_OK;
  int rc = transit(sch, (int)sch->action, -1, sch->step);
  profI_free(sch->S, sch, sizeof *sch);
  return rc;
}
