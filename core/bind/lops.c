/* lops.c — opens every op family of the binding into the prof.core table. */
#include "lbind.h"

void lbind_open_ops(lua_State *L) {
  lbind_open_ops_dense(L);
  lbind_open_ops_conv(L);
  lbind_open_ops_pointwise(L);
  lbind_open_ops_shape(L);
  lbind_open_ops_linalg(L);
  lbind_open_ops_norm(L);
  lbind_open_ops_reduce(L);
  lbind_open_ops_sequence(L);
  lbind_open_ops_select(L);
  lbind_open_ops_factory(L);
  lbind_open_ops_resample(L);
}
