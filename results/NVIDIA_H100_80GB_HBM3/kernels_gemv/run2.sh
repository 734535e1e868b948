set -e
cd scratch/kernels
nvcc -std=c++17 -O3 -arch=sm_90 -DOPBENCH_HAVE_CUDA -I ../../lib -I . -shared -Xcompiler -fPIC gemv_kernel.cu shim.cu -o libgemv.so
python3 side.py ${DIMS:-8192,16384,4096} 2>&1 | grep -v Warning | tail -40
