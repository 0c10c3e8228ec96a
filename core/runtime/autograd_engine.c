/* autograd_engine.c — the backward pass: topological order, module frames, gradient routing. */
#include <stdio.h>
#include <stdlib.h>

#include "runtime.h"

/* {====================== gradient accumulation ======================} */

/* a + b as a new tensor (same shapes): gradients meeting at one tensor add up. */
static pr_Tensor *add_grads(pr_Runtime *rt, const pr_Tensor *a, const pr_Tensor *b) {
  prof_Op op;
  pr_op_begin(&op, PROF_OP_ADD, a, b, NULL);
  pr_Tensor *out = pr_op_alloc(rt, &op, a->ndim, a->shape, a->dtype, a->device);
  if (out == NULL) return NULL;
  int rc = PR_K(out)->accumulate(rt, out, a);
  if (rc == 0) rc = PR_K(out)->accumulate(rt, out, b);
  return pr_op_end(rt, &op, out, rc);
}

/* *slot (a gradient or NULL) += g; takes g's reference. */
static int accumulate_into(pr_Runtime *rt, pr_Tensor **slot, pr_Tensor *g) {
  if (*slot == NULL) {
    *slot = g;
    return 0;
  }
  pr_Tensor *sum = add_grads(rt, *slot, g);
  pr_tensor_release(g);
  if (sum == NULL) return PR_ERR;
  pr_tensor_release(*slot);
  *slot = sum;
  return 0;
}

/* {====================== topological order ======================} */

typedef struct NodeList {
  pr_Node **items;
  size_t n, cap;
} NodeList;

static int push(NodeList *l, pr_Node *n) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 64;
    pr_Node **items = realloc(l->items, sizeof *items * cap);
    if (items == NULL) return PR_ERR;
    l->items = items;
    l->cap = cap;
  }
  l->items[l->n++] = n;
  return 0;
}

/*
** Post-order over the graph (inputs before the ops that used them), without recursion: deep
** models make graphs thousands of nodes deep. Marks: 1 on the stack, 2 emitted.
*/
static int topo_order(pr_Node *root, NodeList *order) {
  NodeList stack = {0};
  int rc = push(&stack, root);
  root->visit = 1;
  while (rc == 0 && stack.n > 0) {
    pr_Node *n = stack.items[stack.n - 1];
    pr_Node *next = NULL;
    for (int i = 0; i < PR_NODE_MAX && next == NULL; i++) {
      pr_Tensor *t = n->inputs[i];
      if (t != NULL && t->grad_fn != NULL && t->grad_fn->visit == 0) next = t->grad_fn;
    }
    if (next != NULL) {
      next->visit = 1;
      rc = push(&stack, next);
    } else {
      n->visit = 2;
      stack.n--;
      rc = push(order, n);
    }
  }
  free(stack.items);
  return rc;
}

/* {====================== module frames during backward ======================} */

/*
** The backward of an op runs in the frames of the modules that ran its forward, so that the
** profile has measured per-module backward work and time. Frames are opened and closed as the
** module of consecutive nodes changes (forward ops of one module are contiguous, so are their
** backwards in reverse).
*/
#define FRAMES_MAX 256   /* deeper module nesting than this is not followed */

typedef struct Frames {
  prof_ModuleId open[FRAMES_MAX];
  int n;
} Frames;

static void move_to(prof_State *S, Frames *f, prof_ModuleId m) {
  prof_ModuleId chain[FRAMES_MAX];
  int depth = 0;
  for (prof_ModuleId k = m; k >= 0 && depth < (int)(sizeof chain / sizeof chain[0]);) {
    chain[depth++] = k;
    prof_ModuleInfo info = {.size = sizeof info};
    if (prof_module_info(S, k, &info) != PROF_OK) break;
    k = info.parent;
  }
  /* chain is innermost-first; keep the common prefix of the open frames */
  int keep = 0;
  while (keep < f->n && keep < depth && f->open[keep] == chain[depth - 1 - keep]) keep++;
  while (f->n > keep) prof_module_exit(S, f->open[--f->n]);
  while (f->n < depth) {
    prof_ModuleId k = chain[depth - 1 - f->n];
    prof_module_enter(S, k);
    f->open[f->n++] = k;
  }
}

/* {====================== the backward pass ======================} */

/* The implicit gradient of a one-element root, its values put in by its backend. */
static pr_Tensor *ones_like(pr_Runtime *rt, const pr_Tensor *t) {
  return pr_full(rt, "ones_like", t->ndim, t->shape, 1.0, t->dtype, t->device);
}

static int same_shape(const pr_Tensor *a, const pr_Tensor *b) {
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

/* {====================== autograd's rows, as torch's ======================} */

/*
** Torch's engine records each node it runs as "autograd::engine::evaluate_function: MmBackward0"
** over the node itself ("MmBackward0"), the routing of its gradients inside the first, and a
** leaf's gradient through its AccumulateGrad node the same way. profrun names the two after the
** node ("autograd::evaluate: mm", "autograd::node: mm"; a leaf's is "accumulate_grad"), and
** prof.report.op_names spells them as torch does. Events only: the flops profile is unchanged.
*/
typedef struct Rows {
  prof_Op eval, node;
} Rows;

static void rows_begin(pr_Runtime *rt, Rows *r, const char *name, const pr_Tensor *g) {
  r->eval.correlation = r->node.correlation = 0;
  if (rt->rec == NULL || !prof_is_active(rt->rec)) return;
  char buf[160];
  snprintf(buf, sizeof buf, "autograd::evaluate: %s", name);
  const char *eval = prof_intern(rt->rec, buf);
  snprintf(buf, sizeof buf, "autograd::node: %s", name);
  const char *node = prof_intern(rt->rec, buf);
  if (eval == NULL || node == NULL) return;   /* out of memory: no rows, the pass goes on */
  prof_Operand in;
  if (g != NULL) pr_operand(g, &in);
  pr_part_begin(rt, &r->eval, eval, NULL, 0, NULL);
  pr_part_begin(rt, &r->node, node, NULL, g != NULL, &in);
}

static void rows_end(pr_Runtime *rt, Rows *r) {
  pr_part_end(rt, &r->node);
  pr_part_end(rt, &r->eval);
  r->eval.correlation = r->node.correlation = 0;
}

/* Runs one node's backward and routes the input gradients: into the nodes that made them inside
   the node's rows, into leaves through their own (AccumulateGrad's). */
static int run_node(pr_Runtime *rt, pr_Node *n) {
  char s1[96], s2[96];
  pr_Tensor *gin[PR_NODE_MAX] = {NULL, NULL, NULL, NULL};
  Rows rows;
  rows_begin(rt, &rows, n->name, n->grad);
  int rc = pr_backward_fn(n->backward)(rt, n, n->grad, gin);
  pr_part_end(rt, &rows.node);
  rows.node.correlation = 0;
  for (int i = 0; i < PR_NODE_MAX; i++) {
    pr_Tensor *t = n->inputs[i], *g = gin[i];
    if (g == NULL) continue;
    if (rc != 0 || t == NULL) {
      pr_tensor_release(g);
      gin[i] = NULL;
      continue;
    }
    if (!same_shape(g, t)) {
      rc = pr_error(rt, "%s backward: gradient %s does not match input %s", n->name,
                    pr_shape_str(g, s1, sizeof s1), pr_shape_str(t, s2, sizeof s2));
      pr_tensor_release(g);
      gin[i] = NULL;
      continue;
    }
    if (t->grad_fn != NULL) {
      rc = accumulate_into(rt, &t->grad_fn->grad, g);
      gin[i] = NULL;
    }
  }
  rows_end(rt, &rows);
  for (int i = 0; i < PR_NODE_MAX; i++) {   /* what is left: leaves' gradients */
    pr_Tensor *t = n->inputs[i], *g = gin[i];
    if (g == NULL) continue;
    if (rc != 0) {
      pr_tensor_release(g);
      continue;
    }
    Rows leaf;
    rows_begin(rt, &leaf, "accumulate_grad", g);
    if ((rc = accumulate_into(rt, &t->grad, g)) == 0)
      pr_tensor_tag(t->grad, PROF_MEM_GRADIENT);   /* a leaf's .grad: the gradient a step reads */
    rows_end(rt, &leaf);
  }
  return rc;
}

int pr_backward(pr_Runtime *rt, pr_Tensor *root, const pr_Tensor *g, int retain_graph) {
  char s1[96], s2[96];
  if (!(root->flags & PR_T_REQUIRES_GRAD))
    return pr_error(rt, "backward: the tensor does not require grad and has no grad_fn");
  pr_Tensor *g0;
  if (g == NULL) {
    if (pr_numel(root) != 1)
      return pr_error(rt, "backward: grad can be implicitly created only for one-element outputs, "
                      "got %s", pr_shape_str(root, s1, sizeof s1));
    g0 = ones_like(rt, root);
  } else {
    if (!same_shape(g, root))
      return pr_error(rt, "backward: gradient %s does not match the output %s",
                      pr_shape_str(g, s1, sizeof s1), pr_shape_str(root, s2, sizeof s2));
    g0 = pr_tensor_retain((pr_Tensor *)g);
  }
  if (g0 == NULL) return PR_ERR;
  if (root->grad_fn == NULL) {   /* a leaf */
    int rc0 = accumulate_into(rt, &root->grad, g0);
    if (rc0 == 0) pr_tensor_tag(root->grad, PROF_MEM_GRADIENT);
    return rc0;
  }
  if (root->grad_fn->backward == PR_BW_NONE) {
    pr_tensor_release(g0);
    return pr_error(rt, "backward: trying to go through the graph a second time (its saved "
                    "tensors were freed; pass retain_graph the first time)");
  }

  NodeList order = {0};
  int rc = topo_order(root->grad_fn, &order);
  if (rc != 0) pr_error(rt, "backward: out of memory ordering the graph");
  /* freeing a node's inputs as the pass goes can free nodes still ahead of it: hold them all */
  for (size_t k = 0; k < order.n; k++) order.items[k]->refs++;
  int32_t was_enabled = rt->grad_enabled;
  rt->grad_enabled = 0;
  prof_State *S = rt->rec;
  prof_Phase was_phase = S != NULL ? prof_get_phase(S) : PROF_PHASE_FORWARD;
  if (S != NULL) prof_set_phase(S, PROF_PHASE_BACKWARD);
  Frames frames = {.n = 0};
  if (rc == 0) rc = accumulate_into(rt, &root->grad_fn->grad, g0);
  else pr_tensor_release(g0);
  for (size_t k = order.n; k-- > 0;) {
    pr_Node *n = order.items[k];
    n->visit = 0;
    if (rc != 0 || n->grad == NULL || n->backward == PR_BW_NONE) continue;
    if (S != NULL && n->module >= 0) move_to(S, &frames, n->module);
    rc = run_node(rt, n);
    pr_tensor_release(n->grad);
    n->grad = NULL;
    if (!retain_graph) pr_node_clear(n);
  }
  if (S != NULL) {
    while (frames.n > 0) prof_module_exit(S, frames.open[--frames.n]);
    prof_set_phase(S, was_phase);
  }
  rt->grad_enabled = was_enabled;
  for (size_t k = 0; k < order.n; k++) pr_node_release(order.items[k]);
  free(order.items);
  return rc;
}
