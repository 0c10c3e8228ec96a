// mlp.cu — an unmodified CUDA application: an MLP forward in cuBLAS, its modules marked with NVTX ranges.
//
// It links no profrun code: libprof_inject.so profiles it from outside (CUDA_INJECTION64_PATH,
// NVTX_INJECTION64_PATH, or prof.launch{"./mlp"}). Each module call is an NVTX push/pop range
// named "path:Type" (the root "Net"), so the ranges become the module tree:
//   Net { fc1:Linear { cublasSgemm, bias }, act:ReLU { relu }, fc2:Linear { cublasSgemm, bias } }
// run CALLS times on a BATCH x IN input. Checks its output against the host's arithmetic and
// prints the largest difference; exits 1 with a message when no device or driver is there.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

constexpr int IN = 64, HID = 128, OUT = 16, BATCH = 32, CALLS = 4;

__global__ void add_bias(float *y, const float *b, int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows * cols) y[i] += b[i % cols];
}

__global__ void relu(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = y[i] > 0.0f ? y[i] : 0.0f;
}

bool ok(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "mlp: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

bool ok(cublasStatus_t s, const char *what) {
  if (s == CUBLAS_STATUS_SUCCESS) return true;
  std::fprintf(stderr, "mlp: %s: cuBLAS status %d\n", what, static_cast<int>(s));
  return false;
}

// y[BATCH, n_out] = x[BATCH, n_in] W^T + b; row-major x and y, W [n_out, n_in] row-major, so in
// cuBLAS's column-major terms y^T = W x^T: an (n_out x n_in) by (n_in x BATCH) product.
bool linear(cublasHandle_t h, const float *w, const float *b, const float *x, float *y, int n_in,
            int n_out) {
  const float one = 1.0f, zero = 0.0f;
  if (!ok(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, n_out, BATCH, n_in, &one, w, n_in, x, n_in,
                      &zero, y, n_out), "cublasSgemm"))
    return false;
  add_bias<<<(BATCH * n_out + 255) / 256, 256>>>(y, b, BATCH, n_out);
  return ok(cudaGetLastError(), "add_bias");
}

void host_linear(const std::vector<float> &w, const std::vector<float> &b, const std::vector<float> &x,
                 std::vector<float> &y, int n_in, int n_out) {
  for (int r = 0; r < BATCH; r++)
    for (int o = 0; o < n_out; o++) {
      float acc = b[o];
      for (int i = 0; i < n_in; i++) acc += x[r * n_in + i] * w[o * n_in + i];
      y[r * n_out + o] = acc;
    }
}

}  // namespace

int main() {
  int devices = 0;
  if (!ok(cudaGetDeviceCount(&devices), "no CUDA device or driver")) return 1;
  std::vector<float> w1(HID * IN), b1(HID), w2(OUT * HID), b2(OUT), x(BATCH * IN);
  for (size_t i = 0; i < w1.size(); i++) w1[i] = static_cast<float>(i % 7) / 14.0f - 0.2f;
  for (size_t i = 0; i < w2.size(); i++) w2[i] = static_cast<float>(i % 5) / 10.0f - 0.2f;
  for (int i = 0; i < HID; i++) b1[i] = 0.01f * static_cast<float>(i % 3);
  for (int i = 0; i < OUT; i++) b2[i] = -0.02f * static_cast<float>(i);
  for (size_t i = 0; i < x.size(); i++) x[i] = static_cast<float>(i % 11) / 11.0f - 0.5f;

  float *d_w1, *d_b1, *d_w2, *d_b2, *d_x, *d_h, *d_y;
  const size_t sizes[] = {w1.size(), b1.size(), w2.size(), b2.size(), x.size(),
                          static_cast<size_t>(BATCH * HID), static_cast<size_t>(BATCH * OUT)};
  float **ptrs[] = {&d_w1, &d_b1, &d_w2, &d_b2, &d_x, &d_h, &d_y};
  for (int i = 0; i < 7; i++)
    if (!ok(cudaMalloc(ptrs[i], sizes[i] * sizeof(float)), "cudaMalloc")) return 1;
  const std::vector<float> *hosts[] = {&w1, &b1, &w2, &b2, &x};
  for (int i = 0; i < 5; i++)
    if (!ok(cudaMemcpy(*ptrs[i], hosts[i]->data(), sizes[i] * sizeof(float), cudaMemcpyHostToDevice),
            "cudaMemcpy"))
      return 1;
  cublasHandle_t h;
  if (!ok(cublasCreate(&h), "cublasCreate")) return 1;

  for (int c = 0; c < CALLS; c++) {
    nvtxRangePushA("Net");
    nvtxRangePushA("fc1:Linear");
    bool good = linear(h, d_w1, d_b1, d_x, d_h, IN, HID);
    nvtxRangePop();
    nvtxRangePushA("act:ReLU");
    relu<<<(BATCH * HID + 255) / 256, 256>>>(d_h, BATCH * HID);
    nvtxRangePop();
    nvtxRangePushA("fc2:Linear");
    good = good && linear(h, d_w2, d_b2, d_h, d_y, HID, OUT);
    nvtxRangePop();
    nvtxRangePop();
    if (!good || !ok(cudaDeviceSynchronize(), "forward")) return 1;
  }

  std::vector<float> y(BATCH * OUT), hid(BATCH * HID), ref(BATCH * OUT);
  if (!ok(cudaMemcpy(y.data(), d_y, y.size() * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy"))
    return 1;
  host_linear(w1, b1, x, hid, IN, HID);
  for (float &v : hid) v = v > 0.0f ? v : 0.0f;
  host_linear(w2, b2, hid, ref, HID, OUT);
  double err = 0;
  for (size_t i = 0; i < y.size(); i++) err = std::fmax(err, std::fabs(y[i] - ref[i]));
  // by hand: 2 GEMMs per call, BATCH*IN*HID + BATCH*HID*OUT = 32*64*128 + 32*128*16 MACs
  std::printf("mlp: %d calls, %d MACs per call, max |gpu - host| = %.3g\n", CALLS,
              BATCH * IN * HID + BATCH * HID * OUT, err);
  cublasDestroy(h);
  for (int i = 0; i < 7; i++) cudaFree(*ptrs[i]);
  return err < 1e-3 ? 0 : 1;
}
