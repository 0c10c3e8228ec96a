/* test_atomic_file.c — staged output files: unique temporaries, commit, discard, devices, long paths, leftovers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prof_internal.h"
#include "t.h"

/* The number of entries in dir (hidden ones too, "." and ".." not). */
static int count_entries(const char *dir) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "exit $(ls -A '%s' | wc -l)", dir);
  int rc = system(cmd);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static int file_is(const char *path, const char *text) {
  char buf[64] = {0};
  FILE *f = fopen(path, "rb");
  if (f == NULL) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  return n == strlen(text) && memcmp(buf, text, n) == 0;
}

static void rm_rf(const char *dir) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  T_EQ_INT(system(cmd), 0);
}

static void test_stage_then_commit(void) {
  prof_State *S = prof_new(NULL, NULL);
  char dir[] = "/tmp/profrun-atomic-XXXXXX", path[256], expect[256];
  T_CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof path, "%s/a/b/out.txt", dir);
  prof_Staged st;
  T_EQ_INT(prof_stage_file(S, path, "hello", 5, &st), PROF_OK);
  /* the temporary is hidden, beside the target, and carries this process's pid */
  snprintf(expect, sizeof expect, "%s/a/b/.out.txt.profrun-%ld-0", dir, (long)getpid());
  T_EQ_STR(st.tmp, expect);
  snprintf(expect, sizeof expect, "%s/a", dir);
  T_EQ_STR(st.made, expect);   /* the topmost directory it made */
  T_EQ_INT(st.existed, 0);
  T_CHECK(access(path, F_OK) != 0);   /* nothing at the target before the commit */
  /* a second staging of the same path in this process gets another name */
  prof_Staged st2;
  T_EQ_INT(prof_stage_file(S, path, "bye", 3, &st2), PROF_OK);
  T_CHECK(strcmp(st.tmp, st2.tmp) != 0);
  prof_discard_file(&st2);
  T_CHECK(access(st2.tmp, F_OK) != 0);
  T_EQ_INT(prof_commit_file(S, path, &st), PROF_OK);
  T_CHECK(file_is(path, "hello"));
  snprintf(expect, sizeof expect, "%s/a/b", dir);
  T_EQ_INT(count_entries(expect), 1);   /* no temporary left */
  rm_rf(dir);
  prof_close(S);
}

static void test_discard_removes_made_directories(void) {
  prof_State *S = prof_new(NULL, NULL);
  char dir[] = "/tmp/profrun-atomic-XXXXXX", path[256], keep[256];
  T_CHECK(mkdtemp(dir) != NULL);
  snprintf(keep, sizeof keep, "%s/keep", dir);
  T_EQ_INT(mkdir(keep, 0777), 0);
  snprintf(path, sizeof path, "%s/keep/x/y/out.txt", dir);
  prof_Staged st;
  T_EQ_INT(prof_stage_file(S, path, "data", 4, &st), PROF_OK);
  prof_discard_file(&st);
  T_EQ_INT(count_entries(keep), 0);   /* x/y gone, keep (which existed) stays */
  T_EQ_INT(count_entries(dir), 1);
  rm_rf(dir);
  prof_close(S);
}

static void test_devices_are_written_in_place(void) {
  prof_State *S = prof_new(NULL, NULL);
  char dir[] = "/tmp/profrun-atomic-XXXXXX", null_link[256], full_link[256];
  T_CHECK(mkdtemp(dir) != NULL);
  /* through links: were a device ever renamed over, the link would go, not /dev/null */
  snprintf(null_link, sizeof null_link, "%s/null", dir);
  snprintf(full_link, sizeof full_link, "%s/full", dir);
  T_EQ_INT(symlink("/dev/null", null_link), 0);
  T_EQ_INT(symlink("/dev/full", full_link), 0);
  T_EQ_INT(prof_write_file_atomic(S, null_link, "x", 1), PROF_OK);
  struct stat ls;
  T_EQ_INT(lstat(null_link, &ls), 0);
  T_CHECK(S_ISLNK(ls.st_mode));
  T_EQ_INT(prof_write_file_atomic(S, full_link, "x", 1), PROF_ERRIO);
  T_CONTAINS(prof_errmsg(S), "/full: cannot write: No space left on device");
  /* staging a device stages nothing: the commit writes it */
  prof_Staged st;
  T_EQ_INT(prof_stage_file(S, full_link, "x", 1, &st), PROF_OK);
  T_EQ_STR(st.tmp, "");
  T_EQ_INT(count_entries(dir), 2);
  /* a directory is refused by name */
  T_EQ_INT(prof_write_file_atomic(S, dir, "x", 1), PROF_ERRIO);
  T_CONTAINS(prof_errmsg(S), ": is a directory");
  rm_rf(dir);
  prof_close(S);
}

static void test_long_path_keeps_the_reason(void) {
  prof_State *S = prof_new(NULL, NULL);
  char *path = malloc(5001);
  T_CHECK(path != NULL);
  memset(path, 'd', 5000);
  memcpy(path + 4990, "/tail.json", 11);
  T_EQ_INT(prof_write_file_atomic(S, path, "x", 1), PROF_ERRIO);
  const char *msg = prof_errmsg(S);
  T_CONTAINS(msg, "path too long (5000 characters; the limit is 4095)");
  T_CONTAINS(msg, "...(4840 characters)...");   /* 5000 - 60 kept in front - 100 at the end */
  T_CONTAINS(msg, "/tail.json");
  T_CHECK(strlen(msg) < 300);
  free(path);
  prof_close(S);
}

static void test_leftovers_of_dead_runs_are_swept(void) {
  prof_State *S = prof_new(NULL, NULL);
  char dir[] = "/tmp/profrun-atomic-XXXXXX", path[256], dead[300], live[300], odd[300];
  T_CHECK(mkdtemp(dir) != NULL);
  /* a pid that is gone: a child that has exited and been reaped */
  pid_t child = fork();
  if (child == 0) _exit(0);
  T_CHECK(child > 0);
  waitpid(child, NULL, 0);
  snprintf(dead, sizeof dead, "%s/.other.json.profrun-%ld-3", dir, (long)child);
  snprintf(live, sizeof live, "%s/.other.json.profrun-1-0", dir);   /* init is alive */
  snprintf(odd, sizeof odd, "%s/.other.json.profrun-pending", dir);
  const char *made[] = {dead, live, odd};
  for (int i = 0; i < 3; i++) {
    FILE *f = fopen(made[i], "w");
    T_CHECK(f != NULL);
    if (f) fclose(f);
  }
  snprintf(path, sizeof path, "%s/out.json", dir);
  T_EQ_INT(prof_write_file_atomic(S, path, "{}", 2), PROF_OK);
  T_CHECK(access(dead, F_OK) != 0);
  T_EQ_INT(access(live, F_OK), 0);
  T_EQ_INT(access(odd, F_OK), 0);
  rm_rf(dir);
  prof_close(S);
}

/* {====================== the output watch and commits that keep a file ======================} */

typedef struct Seen {
  int staged, done;
  int existed_at_staged;       /* the temporary was on disk when the watch heard of it */
  char tmp[PROF_PATH_SIZE];
} Seen;

static void watch(void *ud, prof_OutputEvent event, const prof_Staged *st) {
  Seen *w = ud;
  struct stat sb;
  if (event == PROF_OUTPUT_STAGED) {
    w->staged++;
    w->existed_at_staged = stat(st->tmp, &sb) == 0;
    snprintf(w->tmp, sizeof w->tmp, "%s", st->tmp);
  } else if (strcmp(w->tmp, st->tmp) == 0) {
    w->done++;
  }
}

/* Every temporary is told when it exists and when it is gone: written, failed, kept or dropped. */
static void test_output_watch(void) {
  prof_State *S = prof_new(NULL, NULL);
  char dir[] = "/tmp/profrun-watch-XXXXXX", path[256];
  T_CHECK(mkdtemp(dir) != NULL);
  Seen w = {0};
  prof_OutputWatch ow = {watch, &w};
  prof_set_output_watch(S, &ow);
  snprintf(path, sizeof path, "%s/x.txt", dir);
  T_EQ_INT(prof_write_file_atomic(S, path, "one", 3), PROF_OK);
  T_EQ_INT(w.staged, 1);
  T_EQ_INT(w.existed_at_staged, 1);
  T_EQ_INT(w.done, 1);
  T_CHECK(file_is(path, "one"));
  /* staged, then dropped: done once more, the temporary gone */
  prof_Staged st;
  T_EQ_INT(prof_stage_file(S, path, "two", 3, &st), PROF_OK);
  T_EQ_INT(w.staged, 2);
  prof_abandon_file(S, &st);
  T_EQ_INT(w.done, 2);
  T_EQ_INT(count_entries(dir), 1);
  /* a commit that keeps the file already there: PROF_ERREXIST, the old text, no temporary */
  T_EQ_INT(prof_stage_file(S, path, "three", 5, &st), PROF_OK);
  T_EQ_INT(prof_commit_new_file(S, path, &st), PROF_ERREXIST);
  T_CONTAINS(prof_errmsg(S), "x.txt: exists (kept)");
  T_EQ_INT(w.done, 3);
  T_CHECK(file_is(path, "one"));
  T_EQ_INT(count_entries(dir), 1);
  /* and to a free name it commits as prof_commit_file does */
  snprintf(path, sizeof path, "%s/y.txt", dir);
  T_EQ_INT(prof_stage_file(S, path, "four", 4, &st), PROF_OK);
  T_EQ_INT(prof_commit_new_file(S, path, &st), PROF_OK);
  T_CHECK(file_is(path, "four"));
  T_EQ_INT(w.done, 4);
  T_EQ_INT(count_entries(dir), 2);
  /* no watch: nothing is told */
  prof_set_output_watch(S, NULL);
  T_EQ_INT(prof_write_file_atomic(S, path, "five", 4), PROF_OK);
  T_EQ_INT(w.staged, 4);
  prof_close(S);
  rm_rf(dir);
}

int main(void) {
  T_RUN(test_stage_then_commit);
  T_RUN(test_discard_removes_made_directories);
  T_RUN(test_devices_are_written_in_place);
  T_RUN(test_long_path_keeps_the_reason);
  T_RUN(test_leftovers_of_dead_runs_are_swept);
  T_RUN(test_output_watch);
  return T_DONE();
}
